"""A test set's check as one HTML page (``ragmark report check.json``): the shares with
their counts, the gates, then every finding with the questions' own words — the
near-duplicate pairs side by side with both numbers, the questions that give their
answer away, the answers their passages do not hold, the largest clusters of the corpus
no question is about — and the spread. The questions came from people or models: every
text is escaped; the page loads nothing, and its one script filters the findings' rows
as you type."""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

from ragmark.report.simulation_html import CSS
from ragmark.report.testset_check import finding_rows

JS = """
(function(){
var box=document.getElementById('filter');
function apply(){var q=box.value.toLowerCase(),n=0;
document.querySelectorAll('tr.item').forEach(function(r){
var show=r.textContent.toLowerCase().indexOf(q)>=0;r.hidden=!show;if(show){n++;}});
document.getElementById('shown').textContent=n;}
box.addEventListener('input',apply);apply();})();
"""


def _share(v: float | None) -> str:
    return "not measured" if v is None else f"{v:.1%}"


def _q(report: Mapping[str, Any], qid: str) -> str:
    text = str(report["questions_text"].get(qid, ""))
    return f"<b>{escape(qid)}</b> <span class=\"text\">{escape(text)}</span>"


def _table(title: str, head: tuple[str, ...], rows: list[str]) -> str:
    if not rows:
        return f"<h2>{escape(title)}</h2><p>None.</p>"
    cols = "".join(f"<th>{escape(h)}</th>" for h in head)
    return (f"<h2>{escape(title)}</h2><table><thead><tr>{cols}</tr></thead><tbody>"
            + "".join(rows) + "</tbody></table>")


def _findings(r: Mapping[str, Any]) -> list[str]:
    def pair(p: Mapping[str, Any]) -> str:
        cos = "—" if p["cosine"] is None else f"{p['cosine']:.2f}"
        return (f'<tr class="item"><td>{_q(r, p["a"])}</td><td>{_q(r, p["b"])}</td>'
                f'<td class="n">{cos}</td><td class="n">{p["jaccard"]:.2f}</td>'
                f'<td>{escape(p["rule"])}</td></tr>')

    pairs = [pair(p) for p in r["duplicates"]["pairs"]]
    leaked = [f'<tr class="item"><td>{_q(r, i)}</td></tr>' for i in r["leaked"]["ids"]]
    pointing = [f'<tr class="item"><td>{_q(r, p["id"])}</td><td>{escape(p["words"])}</td>'
                "</tr>" for p in (r.get("points_at_source") or {}).get("items", [])]
    held = [f'<tr class="item"><td>{_q(r, u["id"])}</td><td class="n">{u["support"]:.0%}'
            "</td></tr>" for u in r["unsupported"]["items"]]
    return [_table(f"Near-duplicates ({r['duplicates']['rule']})",
                   ("question", "repeated by", "cosine", "words (Jaccard)", "rule"), pairs),
            _table("Answers given away by their question", ("question",), leaked),
            *([_table("Questions that point at their source", ("question", "says"),
                      pointing)] if "points_at_source" in r else []),
            _table("Answers their passages do not hold",
                   ("question", "share of the answer's words in them"), held)]


def _coverage(cov: Mapping[str, Any] | None) -> str:
    if cov is None:
        return "<h2>Coverage</h2><p>Not measured (give --corpus).</p>"
    share = cov["uncovered_documents"]
    text = (f"<p>{cov['documents_covered']} of {cov['documents']} documents have a question "
            f"about them ({_share(None if share is None else 1 - share)})")
    if "clusters" not in cov:
        return f"<h2>Coverage</h2>{text}.</p>"
    text += (f"; {cov['clusters_covered']} of {cov['clusters']} clusters of the corpus "
             f"({_share(1 - cov['uncovered_clusters'])}).</p>")
    rows = [f'<tr class="item"><td class="n">{c["cluster"]}</td><td class="n">'
            f'{c["documents"]}</td><td class="text">'
            + "<br>".join(escape(e) for e in c["examples"]) + "</td></tr>"
            for c in cov["largest_uncovered"]]
    return f"<h2>Coverage</h2>{text}" + _table(
        "The largest clusters no question is about", ("cluster", "documents", "examples"),
        rows)


def _items(r: Mapping[str, Any]) -> str:
    """Each question's difficulty and discrimination from the history (--metric)."""
    it = r.get("items")
    if it is None:
        return ""
    def row(i: Mapping[str, Any]) -> str:
        r_ = "—" if i["discrimination"] is None else f"{i['discrimination']:.2f}"
        return (f'<tr class="item"><td>{_q(r, i["id"])}</td><td class="n">'
                f'{i["difficulty"]:.2f}</td><td class="n">{r_}</td><td>'
                f'{escape(i["verdict"])}</td></tr>')

    rows = [row(i) for i in it["items"]]
    return _table(f"Difficulty and discrimination by {it['metric']} over "
                  f"{len(it['configs'])} configs ({it['separate_nothing']} of "
                  f"{it['questions']} separate nothing)",
                  ("question", "difficulty", "discrimination", "verdict"), rows)


def render(r: Mapping[str, Any]) -> str:
    """The page of a test set's check (as ``testset check --output FILE.json`` writes it)."""
    title = f"ragmark testset check: {r['set']}"
    rows = finding_rows(r)
    summary = "".join(f"<tr><td>{escape(name)}</td><td class=\"n\">{count}</td>"
                      f"<td class=\"n\">{_share(share)}</td></tr>"
                      for name, count, share in rows)
    gates = "".join(f'<p class="{"passed" if g["ok"] else "failed"}">Gate '
                    f'{escape(g["gate"])} {"held" if g["ok"] else "failed"} '
                    f'<small>({escape(g["why"])})</small></p>' for g in r["gates"])
    s = r["spread"]
    types = ", ".join(f"{escape(k)} {v}" for k, v in s["types"].items())
    length = s["length_words"]
    parts = [f"<h1>{escape(title)}</h1>", f"<p>{r['questions']} questions.</p>",
             "<table><thead><tr><th>finding</th><th>count</th><th>share</th></tr></thead>"
             f"<tbody>{summary}</tbody></table>", gates,
             '<p><label>Show the rows whose text contains <input id="filter" '
             'type="search" autocomplete="off"></label> <small><span id="shown"></span> '
             "shown</small></p>", *_findings(r), _coverage(r.get("coverage")), _items(r),
             f"<h2>Spread</h2><p>Types: {types}. Length: "
             + ("—" if length is None else f"{length['min']} to {length['max']} words "
                f"(median {length['median']:g})")
             + f". {s['with_expected_answer']} with an expected answer, "
             f"{s['with_ground_truth']} with a ground truth, {s['unanswerable']} marked "
             "unanswerable.</p>",
             "".join(f"<p><small>Note: {escape(n)}</small></p>" for n in r["notes"])]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{escape(title)}</title><style>{CSS}</style></head><body>"
            + "".join(parts) + f"<script>{JS}</script></body></html>\n")
