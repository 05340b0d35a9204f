"""The HTML report's sections for runs of a particular shape: retrieval by hop (multi-hop
contexts), risk against coverage (answers with a confidence) and conversations by turn.
Each config that has the shape gets its table; a page without any has none of them."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

from ragmark.report.html_common import View, breakable, num
from ragmark.results.model import failing_cell


def _hops(v: View) -> str:
    hops = v.report.hops if v.report is not None else ()
    if not hops:
        return ""
    def names(h: Any) -> str:
        return escape(", ".join(sorted(h.names, key=lambda n: -h.names[n])[:2]))

    rows = "".join(
        f"<tr><td>{h.hop}</td><td>{names(h)}</td><td>{h.questions}</td><td>{num(h.recall)}</td><td>{num(h.hit)}</td>"
        f"<td>{num(h.mrr)}</td><td>{h.found} of {h.found_any}</td></tr>" for h in hops)
    return (f"<h3>{escape(v.name)}: retrieval by hop</h3><table><thead><tr><th>hop</th>"
            "<th>names</th><th>questions</th><th>recall</th><th>hit</th><th>MRR</th>"
            f"<th>relevant found first</th></tr></thead><tbody>{rows}</tbody></table>"
            "<p>Each retrieval step judged on its own ranking, over the questions with a "
            "relevant target; <i>found first</i>: the relevant targets this step was the "
            "first to retrieve, of those any step retrieved.</p>")


def _risk(v: View) -> str:
    rc: dict[str, Any] | None = v.report.risk_coverage if v.report is not None else None
    if not rc:
        return ""
    points = rc.get("points") or []
    shown = points if len(points) <= 12 else [
        points[round(i * (len(points) - 1) / 11)] for i in range(12)]
    rows = "".join(f"<tr><td>{c:.3f}</td><td>{r:.3f}</td></tr>" for c, r in shown)
    return (f"<h3>{escape(v.name)}: risk against coverage</h3>"
            f"<p>AURC {num(rc.get('aurc'))} over {rc.get('n')} answers with a confidence "
            f"and a known correctness, of {rc.get('of')} questions (lower is better): "
            "answering only the most confident, the share of wrong answers at each "
            "coverage.</p><table><thead><tr><th>coverage</th><th>risk</th></tr></thead>"
            f"<tbody>{rows}</tbody></table>")


def _turns(v: View, metrics: Sequence[str]) -> str:
    conv: dict[str, Any] | None = v.report.conversations if v.report is not None else None
    if not conv:
        return ""
    o = conv["overall"]
    shown = [m for m in metrics if m in o][:6] or list(o)[:6]
    head = "".join(f"<th>{breakable(m)}</th>" for m in shown)
    rows = "".join(
        f"<tr><td>{t['turn']}</td><td>{t['questions']}</td>"
        + "".join(f"<td>{num(t['metrics'][m]['mean'])}</td>" for m in shown) + "</tr>"
        for t in conv["by_turn"])
    rows += (f"<tr><td>per conversation</td><td>{conv['conversations']}</td>"
             + "".join(f"<td>{num(o[m]['mean_of_conversations'])}</td>" for m in shown)
             + "</tr><tr><td>last turn</td><td></td>"
             + "".join(f"<td>{num(o[m]['last_turn'])}</td>" for m in shown)
             + "</tr><tr><td>failing</td><td></td>"
             + "".join(f"<td>{escape(failing_cell(o[m]))}</td>" for m in shown) + "</tr>")
    return (f"<h3>{escape(v.name)}: {conv['conversations']} conversations, by turn</h3>"
            f"<table><thead><tr><th>turn</th><th>questions</th>{head}</tr></thead>"
            f"<tbody>{rows}</tbody></table><p>Each metric's mean at each turn position; "
            "per conversation: the mean of the conversations' means; a conversation fails "
            "at its first turn on the worse side of the threshold (the metric's rule).</p>")


def shapes(vs: Sequence[View], metrics: Sequence[str]) -> str:
    """The sections of the configs that have hops, confidences or conversations."""
    parts = [p for v in vs for p in (_hops(v), _risk(v), _turns(v, metrics)) if p]
    if not parts:
        return ""
    return '<section id="shapes"><h2>Hops, confidence and conversations</h2>' + "".join(
        parts) + "</section>"
