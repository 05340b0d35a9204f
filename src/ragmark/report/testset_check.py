"""What ``ragmark testset check`` says: each finding's count and share with up to ``top``
examples (the questions' own words, so a person sees why), the corpus covered, the
spread, and the gates — as console lines and as Markdown."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragmark.text import markdown_text, visible


def _q(report: Mapping[str, Any], qid: str) -> str:
    text = str(report["questions_text"].get(qid, ""))
    return f"{visible(qid)} {visible(text[:90])!r}"


def _share(v: float | None, iv: list[float] | None = None) -> str:
    if v is None:
        return "not measured"
    return f"{v:.1%}" + ("" if iv is None else f", 95% CI {iv[0]:.1%}-{iv[1]:.1%}")


def check_lines(report: Mapping[str, Any], top: int) -> list[str]:
    """The report as lines of text, the findings first."""
    n = report["questions"]
    d = report["duplicates"]
    lines = [f"{visible(report['set'])}: {n} question{'s' * (n != 1)}",
             f"near-duplicates ({d['rule']}): {d['count']} question"
             f"{' repeats' if d['count'] == 1 else 's repeat'} an earlier one "
             f"({_share(d['share'], d.get('interval'))}); "
             f"{len(d['pairs'])} pair{'s' * (len(d['pairs']) != 1)}"]
    for p in d["pairs"][:top]:
        cos = "" if p["cosine"] is None else f"cosine {p['cosine']:.2f}, "
        lines.append(f"  {_q(report, p['a'])} ~ {_q(report, p['b'])} ({cos}words "
                     f"{p['jaccard']:.2f}; by {p['rule']})")
    leaked = report["leaked"]
    lines.append(f"answers given away by their question: {leaked['count']} "
                 f"({_share(leaked['share'], leaked.get('interval'))})")
    lines += [f"  {_q(report, i)}" for i in leaked["ids"][:top]]
    if (pointing := report.get("points_at_source")) is not None:
        lines.append("questions that point at their source (\"the passage\"): "
                     f"{pointing['count']} ({_share(pointing['share'], pointing.get('interval'))})")
        lines += [f"  {_q(report, p['id'])}: says {visible(p['words'])!r}"
                  for p in pointing["items"][:top]]
    un = report["unsupported"]
    lines.append(f"answers their passages do not hold: {un['count']} of the {un['of']} "
                 f"with passages ({_share(un['share'], un.get('interval'))})")
    lines += [f"  {_q(report, u['id'])}: {u['support']:.0%} of its answer's words in them"
              for u in un["items"][:top]]
    lines += _coverage_lines(report.get("coverage"))
    lines += _spread_lines(report["spread"])
    lines += _item_lines(report, top)
    lines += [f"note: {visible(x)}" for x in report["notes"]]
    lines += [("gate held: " if g["ok"] else "gate failed: ") + f"{visible(g['gate'])} "
              f"({visible(g['why'])})" for g in report["gates"]]
    return lines


def _coverage_lines(cov: Mapping[str, Any] | None) -> list[str]:
    if cov is None:
        return ["coverage: not measured (give --corpus)"]
    lines = [f"corpus covered: {cov['documents_covered']} of {cov['documents']} documents "
             f"have a question about them ({_share(1 - cov['uncovered_documents'])})"
             if cov["uncovered_documents"] is not None else "corpus covered: no document"]
    if "clusters" in cov:
        lines.append(f"  clusters with a question: {cov['clusters_covered']} of "
                     f"{cov['clusters']} ({_share(1 - cov['uncovered_clusters'])})")
        for c in cov["largest_uncovered"]:
            seen = "; ".join(visible(e[:70]) for e in c["examples"])
            lines.append(f"  no question about cluster {c['cluster']} ({c['documents']} "
                         f"document{'s' * (c['documents'] != 1)}), e.g. {seen}")
    return lines


def _item_lines(report: Mapping[str, Any], top: int) -> list[str]:
    """Each question's difficulty and discrimination from the history (--metric)."""
    it = report.get("items")
    if it is None:
        return []
    lines = [f"by {visible(it['metric'])} over {len(it['configs'])} configs of the history: "
             f"{it['separate_nothing']} of {it['questions']} questions separate nothing "
             f"({it['always_passed']} every config passes, {it['always_failed']} every "
             f"config fails)" + (f"; {it['left_out']} left out (a config has no value)"
                                 if it["left_out"] else "")]
    told = [i for i in it["items"] if i["discrimination"] is not None]
    told.sort(key=lambda i: (-i["discrimination"], i["id"]))
    lines += [f"  discriminates: {_q(report, i['id'])}: r = {i['discrimination']:.2f}, "
              f"difficulty {i['difficulty']:.2f}" for i in told[:top]]
    return lines


def _spread_lines(s: Mapping[str, Any]) -> list[str]:
    types = ", ".join(f"{visible(k)} {v}" for k, v in s["types"].items())
    length = s["length_words"]
    return [f"types: {types}",
            f"length: {length['min']} to {length['max']} words (median "
            f"{length['median']:g})" if length else "length: no question",
            f"answerability: {s['with_expected_answer']} with an expected answer, "
            f"{s['with_ground_truth']} with a ground truth, {s['unanswerable']} marked "
            "unanswerable"]


def check_line(check: Mapping[str, Any]) -> str:
    """What ``ragmark testset`` says of the set it wrote (``testset check``'s counts)."""
    cov = check["coverage"]
    text = (f"Checked: near-duplicates {check['duplicates']['count']} "
            f"({_share(check['duplicates']['share'])}), answers given away "
            f"{check['leaked']['count']}, "
            + (f"pointing at their source {check['points_at_source']['count']}, "
               if "points_at_source" in check else "")
            + "answers their passages do not hold "
            f"{check['unsupported']['count']}; questions about "
            f"{cov['documents_covered']} of {cov['documents']} documents")
    if "clusters" in cov:
        text += f", {cov['clusters_covered']} of {cov['clusters']} clusters"
    return text


def finding_rows(report: Mapping[str, Any]) -> list[tuple[str, int, float | None]]:
    """Each finding's name, count and share, as the Markdown and the page tabulate them
    (a check written before a finding existed lacks its row)."""
    rows = [("near-duplicates (questions that repeat an earlier one)",
             report["duplicates"]["count"], report["duplicates"]["share"]),
            ("answers given away", report["leaked"]["count"], report["leaked"]["share"])]
    if (pointing := report.get("points_at_source")) is not None:
        rows.append(('questions that point at their source ("the passage")',
                     pointing["count"], pointing["share"]))
    rows.append(("answers their passages do not hold", report["unsupported"]["count"],
                 report["unsupported"]["share"]))
    cov = report.get("coverage") or {}
    if cov.get("uncovered_documents") is not None:
        rows.append(("documents no question is about",
                     cov["documents"] - cov["documents_covered"], cov["uncovered_documents"]))
    if "clusters" in cov:
        rows.append(("clusters no question is about",
                     cov["clusters"] - cov["clusters_covered"], cov["uncovered_clusters"]))
    return rows


def check_markdown(report: Mapping[str, Any], top: int) -> str:
    """The report as Markdown: a table of the shares, then the lines of each finding."""
    table = ["| finding | count | share |", "|---|---:|---:|"] + [
        f"| {name} | {count} | {_share(share)} |" for name, count, share in
        finding_rows(report)]
    body = "\n".join(f"    {markdown_text(line)}" if line.startswith("  ") else
                     f"- {markdown_text(line)}" for line in check_lines(report, top)[1:])
    return (f"# Test set check: {markdown_text(str(report['set']))}\n\n"
            f"{report['questions']} questions.\n\n"
            + "\n".join(table) + "\n\n" + body + "\n")


def select_lines(r: Mapping[str, Any]) -> list[str]:
    """What ``ragmark testset select`` says: what was chosen and written, the means of
    the whole set and of the chosen questions, and the measure by leaving configs out."""
    lines = [f"chose {r['budget']} of {r['questions']} questions ({r['method']}) by "
             f"{visible(r['metric'])} over {len(r['configs'])} configs; written to "
             f"{visible(r['written'])}"]
    for c in r["configs"]:
        lines.append(f"  {visible(c)}: whole set {r['whole_set_means'][c]:.4f}, chosen "
                     f"{r['subset_means'][c]:.4f} "
                     f"({r['subset_means'][c] - r['whole_set_means'][c]:+.4f})")
    pairs = len(r["separated_pairs"])
    total = len(r["configs"]) * (len(r["configs"]) - 1) // 2
    lines.append("leaving each config out (its mean estimated from questions chosen "
                 f"without it); the whole set separates {pairs} of {total} pairs of "
                 "configs (paired t-test, Holm, 5%):")
    for m in r["left_out_configs"]:
        tau = "—" if m["kendall_tau"] is None else f"{m['kendall_tau']:.3f}"
        kept = ("" if m.get("pairs_kept") is None
                else f", separated pairs kept in order {m['pairs_kept']:.0%}")
        lines.append(f"  {m['method']}: mean error {m['mean_abs_error']:.4f}, largest "
                     f"{m['max_abs_error']:.4f}, Kendall's tau {tau}{kept}")
    return lines
