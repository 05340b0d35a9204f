"""The question view of the HTML report (a sortable, filterable table whose rows expand
to each question's ranking, answer, contexts and metrics) and the page's CSS and
JavaScript."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from ragmark.analysis.blame import claim_blame
from ragmark.analysis.judged_view import judged_sections
from ragmark.analysis.trajectory_view import trajectory_section
from ragmark.report.html_common import MAX_DETAILED, View, breakable, num
from ragmark.results.model import QueryRecord
from ragmark.types import Score


def value_cell(s: Score) -> tuple[str, str]:
    """(sort key, shown text) of a question's metric: its value, or missing with the
    reason the file records."""
    if s.value is None:
        why = f": {escape(s.reason)}" if s.reason else ""
        return "", f'<span class="missing">missing{why}</span>'
    return f"{s.value:.6f}", f"{s.value:.4f}"


CONTEXT_CHARS = 600
"""Characters of each context shown (the page stays small; ``ragmark inspect`` shows
the whole text)."""


def _clip(text: str) -> str:
    if len(text) <= CONTEXT_CHARS:
        return escape(text)
    return (f"{escape(text[:CONTEXT_CHARS])}… <small>({len(text) - CONTEXT_CHARS:,} more "
            "characters: <code>ragmark inspect</code> shows them)</small>")


def _unsupported(s: Score) -> str:
    """The claims of the answer a judge found unsupported (faithfulness), as a list."""
    claims = s.details.get("unsupported")
    if not claims:
        return ""
    return ("<br><small>unsupported claims:</small><ul class=\"claims\">"
            + "".join(f"<li>{escape(str(c))}</li>" for c in claims) + "</ul>")


def _claim_blame(q: QueryRecord) -> str:
    """The claim diagnostics' verdict on the question, with the claims behind each
    problem (``--metrics claims``)."""
    told = claim_blame(q)
    if told is None:
        return ""
    problems = "".join(
        f"<li>{escape(str(p.get('says')))}:<ul class=\"claims\">"
        + "".join(f"<li>{escape(str(c))}</li>" for c in p.get("claims", [])) + "</ul></li>"
        for p in told.get("problems", []) if isinstance(p, dict))
    return (f"<p><b>Claim diagnostics:</b> {escape(str(told.get('says')))}</p>"
            + (f"<ul>{problems}</ul>" if problems else ""))


def _judged(q: QueryRecord) -> str:
    """The agent's trajectory, a line a step; the nuggets the answer was scored against
    (``--metrics nuggets``) and its cited sentences' support (``--metrics support``),
    each with what the judge made of it."""
    steps = trajectory_section(q)
    return "".join(f"<p><b>{escape(heading)}</b>:</p><ol class=\"claims\">"
                   + "".join(f"<li>{escape(line)}</li>" for line in lines) + "</ol>"
                   for heading, lines in [*([steps] if steps else []), *judged_sections(q)])


def _turn(q: QueryRecord) -> str:
    """A turn of a conversation: which, and the earlier turns."""
    talk = q.turn
    if not talk:
        return ""
    said = "".join(
        f"<li><b>user:</b> {escape(str(t.get('question')))}"
        + (f"<br><b>assistant:</b> {escape(str(t['answer']))}" if t.get("answer") else "")
        + "</li>" for t in talk.get("history") or [] if isinstance(t, dict))
    return (f"<p><b>Conversation</b> {escape(str(talk.get('id')))}, turn "
            f"{escape(str(talk.get('turn')))}</p>" + (f"<ol>{said}</ol>" if said else ""))


def _hops(q: QueryRecord) -> str:
    """Each retrieval step of the question on its own (multi-hop)."""
    if not q.hops:
        return ""
    rows = "".join(
        f"<tr><td>{i}</td><td>{escape(h.name)}</td><td>{h.size}</td>"
        f"<td>{num(h.recall)}</td><td>{num(h.hit)}</td><td>{num(h.mrr)}</td>"
        f"<td>{escape(', '.join(h.found))}</td></tr>" for i, h in enumerate(q.hops, start=1))
    return ('<table class="items"><thead><tr><th>hop</th><th>name</th><th>items</th>'
            "<th>recall</th><th>hit</th><th>MRR</th><th>first to find</th></tr></thead>"
            f"<tbody>{rows}</tbody></table>")


def question_details(q: QueryRecord) -> str:
    gt = q.ground_truth or {}
    targets = ", ".join(f"{escape(str(t))} (grade {g})" for t, g in gt.get("targets", {}).items())
    items = "".join(
        f"<tr class=\"{'hit' if r.grade else ''}\"><td>{r.rank}</td>"
        f"<td>{'—' if r.score is None else f'{r.score:.4f}'}</td><td>{escape(r.id)}</td>"
        f"<td>{escape(r.doc_id)}</td><td>{r.grade}</td>"
        f"<td>{escape(r.rule or '')}</td></tr>" for r in q.retrieved)
    metrics = "".join(f"<li>{escape(m)}: {value_cell(s)[1]}{_unsupported(s)}</li>"
                      for m, s in q.metrics.items())
    contexts = "".join(f"<li>{_clip(c)}</li>" for c in q.contexts)
    answer = q.answer
    truth = targets or escape(str(gt.get("kind", "none")))
    return (f"{_turn(q)}<p><b>Ground truth:</b> {truth}</p>"
            '<table class="items"><thead><tr><th>rank</th><th>score</th><th>id</th>'
            "<th>document</th><th>grade</th><th>matched by</th></tr></thead>"
            f"<tbody>{items}</tbody></table>{_hops(q)}"
            f"<p><b>Answer:</b> {escape(answer) if answer else '<i>none</i>'}</p>"
            f"<details><summary>contexts the generator saw</summary><ol>{contexts}</ol>"
            f"</details>{_claim_blame(q)}{_judged(q)}<ul class=\"qm\">{metrics}</ul>")


def questions(vs: Sequence[View], metrics: Sequence[str]) -> str:
    """Every question with each metric per config (columns ``metric · config``), the
    largest difference between configs in the first metric first; each row expands to
    every config's details."""
    detailed = [v for v in vs if v.queries]
    n = max((len(v.per_query) for v in vs), default=0)
    if not detailed:
        return ('<section id="questions"><h2>Questions</h2><p>The results file has no '
                "per-question details: run with --include-details, or see "
                "<code>ragmark inspect</code>.</p></section>")
    if n > MAX_DETAILED:
        return (f'<section id="questions"><h2>Questions</h2><p>{n:,} questions: more than '
                f"{MAX_DETAILED:,}, so the details are left to <code>ragmark inspect FILE "
                "QUERY_ID</code> (the page stays small).</p></section>")
    first = detailed[0]
    by_config = {v.name: {q.id: q for q in v.queries} for v in detailed}
    columns = [(m, v) for m in metrics for v in vs]

    def value(v: View, qid: str, metric: str) -> float | None:
        x = v.per_query.get(qid, {}).get(metric)
        return None if x is None else float(x)

    order = []
    for q in first.queries:
        vals = [value(v, q.id, m) for m, v in columns]
        present = [x for x in vals[: len(vs)] if x is not None]  # the first metric
        spread = (max(present) - min(present)) if len(present) > 1 else 0.0
        order.append((-spread, q.id, q, vals, spread))
    order.sort(key=lambda t: (t[0], t[1]))
    rows = []
    for _, qid, q, vals, spread in order:
        cells = "".join(
            f'<td data-v="{"" if x is None else f"{x:.6f}"}">{num(x)}</td>' for x in vals)
        details = "".join(
            f"<h4>{escape(v.name)}</h4>{question_details(by_config[v.name][q.id])}"
            for v in detailed if q.id in by_config[v.name])
        text = escape(q.question)
        rows.append(
            f'<tbody class="q" data-text="{escape(qid).lower()} {text.lower()}">'
            f'<tr><td>{escape(qid)}</td><td class="qt">{text}</td>{cells}'
            f'<td data-v="{spread:.6f}">{spread:.4f}</td></tr>'
            f'<tr class="more"><td colspan="{len(columns) + 3}"><details><summary>details '
            f"of {escape(qid)}</summary>{details}</details></td></tr></tbody>")
    heads = "".join(f'<th scope="col" class="sort" data-col="{i + 2}">{breakable(m)} · '
                    f"{breakable(v.name)}</th>" for i, (m, v) in enumerate(columns))
    lead = metrics[0] if metrics else "no metric"
    return (f'<section id="questions"><h2>Questions ({len(order)})</h2>'
            f"<p>Each metric per config; the largest difference between configs in "
            f"{escape(lead)} first. Click a column to sort, type to filter, open a row's "
            'details.</p><input id="filter" type="search" placeholder="filter questions" '
            'aria-label="filter questions"><div class="wide"><table id="qtable"><thead><tr>'
            '<th scope="col" class="sort" data-col="0">id</th><th scope="col">question</th>'
            f'{heads}<th scope="col" class="sort" data-col="{len(columns) + 2}">largest '
            f'difference ({escape(lead)})</th></tr></thead>{"".join(rows)}</table></div></section>')


CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#222;max-width:1200px}
h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ddd;padding:3px 7px;
text-align:left;vertical-align:top}th.sort{cursor:pointer;text-decoration:underline dotted}
.iv,.legend,small{color:#555}.chg{color:#0050a0}.missing{color:#a00}
dl.facts{display:grid;grid-template-columns:max-content auto;gap:2px 14px}dt{font-weight:600}
.pair{display:flex;gap:18px;flex-wrap:wrap;align-items:flex-start}figure{margin:4px}
figcaption{font-size:12px;color:#444;max-width:560px}tr.hit td{background:#eaf4ff}
td.qt{max-width:420px}#filter{margin:6px 0;padding:4px;width:320px}
.wide{overflow-x:auto;max-width:100%}.wide td{overflow-wrap:break-word}
"""

JS = """
(function(){
var t=document.getElementById('qtable');if(!t)return;
var f=document.getElementById('filter');
f.addEventListener('input',function(){var s=f.value.toLowerCase();
t.querySelectorAll('tbody.q').forEach(function(b){
b.style.display=b.getAttribute('data-text').indexOf(s)>=0?'':'none';});});
t.querySelectorAll('th.sort').forEach(function(h){h.addEventListener('click',function(){
var c=+h.getAttribute('data-col'),up=h.getAttribute('data-up')!=='1';
h.setAttribute('data-up',up?'1':'0');
var rows=Array.prototype.slice.call(t.querySelectorAll('tbody.q'));
rows.sort(function(a,b){var x=a.rows[0].cells[c],y=b.rows[0].cells[c];
var u=x.getAttribute('data-v'),v=y.getAttribute('data-v');
if(u===null){u=x.textContent;v=y.textContent;return up?u.localeCompare(v):v.localeCompare(u);}
if(u==='')return 1;if(v==='')return -1;return up?(+u)-(+v):(+v)-(+u);});
rows.forEach(function(r){t.appendChild(r);});});});
})();
"""


