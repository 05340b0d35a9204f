"""A question's nuggets as the reports show them (``--metrics nuggets``): each with its
importance and what the answer made of it, and where the nuggets came from."""

from __future__ import annotations

from typing import Any

from ragmark.judges.nugget_scores import METRICS
from ragmark.results.model import QueryRecord

SOURCES = {"set": "given with the question", "judge": "created by the judge"}
SHOWN = {"support": "supported", "partial_support": "partly supported",
         "not_support": "not supported"}


def nugget_view(q: QueryRecord) -> tuple[str, list[dict[str, Any]]] | None:
    """(where the nuggets came from, the nuggets with importance and assignment) of the
    question's nugget scores (the same on each), or None without them."""
    for name in METRICS:
        m = q.metrics.get(name)
        listed = m.details.get("nuggets") if m is not None and m.details else None
        if isinstance(listed, list) and listed:
            source = str(m.details.get("source", "")) if m is not None else ""
            return SOURCES.get(source, source or "where from not recorded"), [
                n for n in listed if isinstance(n, dict)]
    return None


def nugget_line(n: dict[str, Any]) -> str:
    """``vital, supported: the text``."""
    said = SHOWN.get(str(n.get("assignment")), str(n.get("assignment")))
    return f"{n.get('importance')}, {said}: {n.get('text')}"
