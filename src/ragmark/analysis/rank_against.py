"""How the compared systems' ranking agrees with a published one (``compare
--rank-against FILE``): Kendall's tau on each compared metric, with its interval and the
systems only one side ranks (:func:`ragmark.stats.ranking.kendall_tau`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ragmark.results.comparison import Comparison
from ragmark.stats.ranking import kendall_tau


def rank_agreement(c: Comparison, path: str, scores: Mapping[str, float]) -> dict[str, Any]:
    """``{"against": file name, "metrics": {metric: {tau, p_value, low, high, n,
    confidence, reason?, only_here?, only_there?}}}``, over the configs with a value."""
    metrics: dict[str, Any] = {}
    for m in c.metrics:
        ours = {name: r.metrics[m].value for name, r in c.reports.items()
                if m in r.metrics and r.metrics[m].value is not None}
        got = kendall_tau({k: float(v) for k, v in ours.items() if v is not None}, scores)
        metrics[m] = {"tau": got.tau, "p_value": got.p_value, "low": got.low,
                      "high": got.high, "n": got.n, "confidence": got.confidence,
                      **({"reason": got.reason} if got.reason else {}),
                      **({"only_here": list(got.only_in_first)} if got.only_in_first else {}),
                      **({"only_there": list(got.only_in_second)}
                         if got.only_in_second else {})}
    return {"against": Path(path).name, "metrics": metrics}


def ranking_markdown(ranking: Mapping[str, Any]) -> list[str]:
    """The agreement as Markdown lines: one a metric."""
    lines = ["", f"### Ranking agreement with {ranking.get('against')}", ""]
    for m, a in (ranking.get("metrics") or {}).items():
        if a.get("tau") is None:
            lines.append(f"- {m}: not computed: {a.get('reason')}")
            continue
        iv = (f" [{a['low']:.2f}, {a['high']:.2f}]" if a.get("low") is not None
              else f" (no interval: {a.get('reason')})")
        lines.append(f"- {m}: Kendall's tau {a['tau']:.3f}{iv}, p = {a['p_value']:.3g}, over "
                     f"{a['n']} systems")
    for m, a in (ranking.get("metrics") or {}).items():
        if a.get("only_here") or a.get("only_there"):
            lines.append(f"- not ranked by both ({m}): "
                         + "; ".join(f"{k.replace('_', ' ')}: {', '.join(a[k])}"
                                     for k in ("only_here", "only_there") if a.get(k)))
            break
    return lines


def ranking_html(ranking: Mapping[str, Any]) -> str:
    """The agreement as an HTML section (every text escaped)."""
    from html import escape

    rows = []
    for m, a in (ranking.get("metrics") or {}).items():
        tau = "—" if a.get("tau") is None else f"{a['tau']:.3f}"
        iv = (f"[{a['low']:.2f}, {a['high']:.2f}]" if a.get("low") is not None
              else str(a.get("reason") or ""))
        p = "—" if a.get("p_value") is None else f"{a['p_value']:.3g}"
        rows.append("<tr>" + "".join(f"<td>{escape(str(x))}</td>" for x in (
            m, tau, iv, p, a.get("n"))) + "</tr>")
    return ('<section id="ranking"><h2>Ranking agreement with '
            f"{escape(str(ranking.get('against')))}</h2><table><thead><tr><th>metric</th>"
            "<th>Kendall's tau</th><th>95% interval</th><th>p</th><th>systems</th></tr>"
            f"</thead><tbody>{''.join(rows)}</tbody></table></section>")
