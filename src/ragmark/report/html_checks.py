"""The HTML report's checks: the failures view (``ragmark inspect --failures`` per config)
and, when the run had a regression gate, the gate's verdicts and the trend of the gated
metrics over the recorded runs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from ragmark.analysis.failures import find_failures
from ragmark.analysis.inspection import results_from
from ragmark.errors import RagmarkError
from ragmark.report import svg
from ragmark.report.html_common import View, num


def failures(data: Mapping[str, Any], vs: Sequence[View]) -> str:
    """``ragmark inspect --failures`` per config: each failing question, what was seen,
    the likely cause and what to do; and what could not be checked."""
    out = ['<section id="failures"><h2>Failures</h2>']
    for v in vs:
        try:
            rep = find_failures(results_from("report", data, v.name if len(vs) > 1 else None))
        except RagmarkError as e:  # a file the inspector cannot read: say so, go on
            out.append(f"<h3>{escape(v.name)}</h3><p>not checked: {escape(str(e))}</p>")
            continue
        counts = "".join(
            f"<li>{escape(rep.label(k))}: {rep.count(k)} of {rep.checked.get(k, 0)} checked"
            "</li>" if k not in rep.unchecked else
            f"<li>{escape(rep.label(k))}: not checked ({escape(rep.unchecked[k])})</li>"
            for k in rep.kinds())
        rows = "".join(f"<tr><td>{escape(f.query)}</td><td>{escape(f.kind)}</td>"
                       f"<td>{escape(f.fact)}</td><td>{escape(f.cause)}</td>"
                       f"<td>{escape(f.diagnosis)}</td></tr>" for f in rep.failures)
        table = ("<p>No failing question.</p>" if not rep.failures else
                 "<table><thead><tr><th>question</th><th>failure</th><th>seen</th>"
                 f"<th>likely cause</th><th>what to do</th></tr></thead><tbody>{rows}"
                 "</tbody></table>")
        out.append(f"<h3>{escape(v.name)}</h3><ul>{counts}</ul>{table}")
    return "".join(out) + "</section>"


def _signed(v: float | None) -> str:
    return "—" if v is None else f"{v:+.4f}"


def history(gated: Mapping[str, Any] | None) -> str:
    """The regression gate's verdict per config and gated metric, and each gated
    metric's mean over the recorded runs of the config (oldest first), this run last
    (``gated``: the result's :attr:`~ragmark.results.model.RunReport.gated`)."""
    gated = gated or {}
    gates = gated.get("gates") or []
    if not gates:
        return ""
    out = ['<section id="history"><h2>Regression gate and history</h2>']
    for g in gates:
        name = str(g.get("config"))
        if g.get("baseline") is None:
            out.append(f"<h3>{escape(name)}</h3><p>not gated: no baseline was found</p>")
            continue
        rows = "".join(
            f"<tr><td>{escape(str(r['metric']))}</td><td>{num(r.get('baseline'))}</td>"
            f"<td>{num(r.get('now'))}</td><td>{_signed(r.get('delta'))}"
            f"</td><td>{r.get('n')}</td><td>{num(r.get('p_adjusted'))}</td>"
            f"<td class=\"{r['verdict'].lower()}\">{escape(str(r['verdict']))}</td>"
            f"<td>{escape(str(r.get('reason', '')))}</td></tr>" for r in g.get("rows", []))
        out.append(f"<h3>{escape(name)} against {escape(str(g['baseline']))}</h3>"
                   "<table><thead><tr><th>metric</th><th>baseline</th><th>now</th>"
                   "<th>change</th><th>questions</th><th>p (Holm)</th><th>verdict</th>"
                   f"<th>why</th></tr></thead><tbody>{rows}</tbody></table>")
        now = {r["metric"]: r.get("now") for r in g.get("rows", [])}
        for metric, runs in (gated.get("trend") or {}).get(name, {}).items():
            points = [p.get("value") for p in runs] + [now.get(metric)]
            labels = [f"run {p['run']} ({str(p.get('created_at', ''))[:10]})" for p in runs]
            table = "".join(f"<tr><td>{escape(lab)}</td><td>{num(v)}</td></tr>"
                            for lab, v in zip([*labels, "this run"], points, strict=True))
            plot = svg.curves(f"{metric} over the runs of {name}", [(name, points)],
                              f"{metric} of {name} over its recorded runs on this dataset, "
                              "oldest first; the last point is this run", metric)
            out.append(f'<div class="pair">{plot}<table><thead><tr><th>run</th>'
                       f"<th>{escape(metric)}</th></tr></thead><tbody>{table}</tbody>"
                       "</table></div>")
    return "".join(out) + "</section>"
