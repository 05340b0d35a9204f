"""The HTML report's metrics at every k: recall, nDCG and hit at k = 1 to the deepest
ranking, one line per config (its colour and marker of the report), with the table."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

import numpy as np

from ragmark.matching import GradedItem, Match, to_graded
from ragmark.metrics.evaluate import compute_all
from ragmark.metrics.names import read_name
from ragmark.report import svg
from ragmark.report.html_common import View, num, numbers
from ragmark.results.model import QueryRecord

CURVE_METRICS = ("recall", "ndcg", "hit")


def at_every_k(queries: Sequence[QueryRecord], names: Sequence[str] = CURVE_METRICS,
               k_max: int | None = None) -> dict[str, list[float | None]]:
    """metric -> its mean at k = 1..K (default: the longest ranking) over the questions,
    recomputed by ragmark's metric
    engine from each question's ranking in the details (the values at the table's
    cutoffs equal the table's). Questions whose retrieval metrics are all missing (a
    failure, no ground truth) are left out, as in the table."""
    kept = [q for q in queries
            if any(s.value is not None for m, s in q.metrics.items()
                   if read_name(m).name in ("recall", "ndcg", "hit", "mrr", "map",
                                            "precision"))]
    k_max = k_max or max((len(q.retrieved) for q in kept), default=0)
    if not kept or k_max == 0:
        return {}
    grades, rankings = [], []
    for q in kept:
        targets = (q.ground_truth or {}).get("targets", {})
        grades.append({t: int(g) for t, g in targets.items() if g > 0})
        seen: set[str] = set()
        ranking = []
        for r in q.retrieved:
            match = None if r.rule is None else Match(tuple(r.targets), int(r.grade), r.rule)
            new = tuple(t for t in (match.targets if match else ()) if t not in seen)
            seen.update(new)
            ranking.append(GradedItem(r.rank, r.id, r.doc_id, r.score or 0.0, match, new))
        rankings.append(ranking)
    graded = to_graded([q.id for q in kept], grades, rankings)
    wanted = [f"{m}@{k}" for m in names for k in range(1, k_max + 1)]
    values = compute_all(graded, wanted)
    out: dict[str, list[float | None]] = {}
    for m in names:
        row: list[float | None] = []
        for k in range(1, k_max + 1):
            arr = values[f"{m}@{k}"]
            ok = arr[~np.isnan(arr)]
            row.append(float(ok.mean()) if len(ok) else None)
        out[m] = row
        out[f"{m}:n"] = [float((~np.isnan(values[f"{m}@1"])).sum())]
    return out


def curves(vs: Sequence[View]) -> str:
    """The section of the metrics at every k (empty when no config ranked anything)."""
    deepest = max((len(q.retrieved) for v in vs for q in v.queries), default=0)
    got = {v.name: at_every_k(v.queries, k_max=deepest)
           for v in vs if v.queries}
    got = {n: c for n, c in got.items() if c}
    if not got:
        return ""
    out = ['<section id="curves"><h2>Metrics at every k</h2>']
    for m in CURVE_METRICS:
        series = [(n, c[m]) for n, c in got.items()]
        k_max = max(len(v) for _, v in series)
        ks = svg.cutoffs_shown(k_max)  # deep rankings: the usual cutoffs, not every k
        head = "".join(f"<th>@{k}</th>" for k in ks)
        rows = "".join(f"<tr><td>{escape(n)}</td><td>{int(got[n][f'{m}:n'][0] or 0)}</td>"
                       + "".join(f"<td>{num(vals[k - 1] if k <= len(vals) else None)}</td>"
                                 for k in ks) + "</tr>"
                       for n, vals in series)
        shown = ("" if len(ks) == k_max else
                 f"; the table gives k = {', '.join(map(str, ks))}, on a log scale")
        plot = svg.curves(f"{m}@k", series, f"{m}@k for k = 1 to {k_max}, one line per "
                          f"config (the table gives the values{shown})", f"{m}@k",
                          numbers(vs))
        out.append(f'<div class="pair">{plot}<div class="wide"><table><thead><tr>'
                   f"<th>config</th><th>questions</th>{head}</tr></thead><tbody>{rows}"
                   "</tbody></table></div></div>")
    return "".join(out) + "</section>"
