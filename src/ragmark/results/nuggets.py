"""The nuggets a run scored its answers against, from its nugget scores' details: written
beside the results as a nugget file (``<results>.nuggets.jsonl``), so that another
system is scored against the same ones (``--nuggets``)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ragmark.data.nuggets import nugget_line
from ragmark.judges.nugget_scores import METRICS
from ragmark.results.model import RunReport
from ragmark.types import Nugget

SUFFIX = ".nuggets.jsonl"


def nuggets_used(report: RunReport) -> dict[str, tuple[str, tuple[Nugget, ...]]]:
    """Question id -> (question, the nuggets its answer was scored against), for the
    questions whose nugget scores had nuggets."""
    out: dict[str, tuple[str, tuple[Nugget, ...]]] = {}
    for q in report.queries:
        listed = next((q.metrics[m].details.get("nuggets") for m in METRICS
                       if m in q.metrics and q.metrics[m].details.get("nuggets")), None)
        if listed:
            out[q.id] = (q.question, tuple(Nugget(str(n["text"]), str(n["importance"]))
                                           for n in listed))
    return out


def write_nuggets_beside(result: Any, stem: Path) -> Path | None:
    """Write the nuggets of ``result`` (a run's report, or a comparison's first config's:
    a compare scores every config against the same) to ``<stem>.nuggets.jsonl``; None
    when no answer was scored against nuggets."""
    reports: Mapping[str, RunReport] = getattr(result, "reports", None) or {"run": result}
    used = nuggets_used(next(iter(reports.values())))
    if not used:
        return None
    path = stem.with_name(stem.name + SUFFIX)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(nugget_line(qid, question, nuggets),
                                       ensure_ascii=False) + "\n"
                            for qid, (question, nuggets) in used.items()), encoding="utf-8")
    return path
