"""Markdown writer for comparisons: one row per config."""

from __future__ import annotations

from ragmark.compare import Comparison
from ragmark.report.console import label


def comparison_markdown(c: Comparison, metrics: list[str]) -> str:
    cols = [m for m in metrics if any(m in r.metrics for r in c.reports.values())]
    head = "| Config | " + " | ".join(label(m) for m in cols) + " | Queries |"
    sep = "|---|" + "---:|" * len(cols) + "---:|"
    rows = [head, sep]
    for name, r in c.reports.items():
        cells = []
        for m in cols:
            a = r.metrics.get(m)
            cells.append("—" if a is None or a.value is None else f"{a.value:.4f}")
        rows.append(f"| {name} | " + " | ".join(cells) + f" | {r.dataset['queries']} |")
    lines = rows
    changes = [ch for ch in c.changes if ch.metric in cols]
    if changes:
        lines += ["", f"Changes against the baseline **{c.baseline}**:", ""]
        lines += [f"- {ch.sentence().replace(ch.metric, label(ch.metric), 1)}"
                  for ch in changes]
    return "\n".join(lines) + "\n"
