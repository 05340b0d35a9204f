"""A question's nuggets as the reports show them (``--metrics nuggets``): each with its
importance and what the answer made of it, and where the nuggets came from."""

from __future__ import annotations

from typing import Any

from ragmark.results.model import QueryRecord
from ragmark.results.nuggets import scored_nuggets

SOURCES = {"set": "given with the question", "judge": "created by the judge"}
SHOWN = {"support": "supported", "partial_support": "partly supported",
         "not_support": "not supported"}


def nugget_view(q: QueryRecord) -> tuple[str, list[dict[str, Any]]] | None:
    """(where the nuggets came from, in words; the nuggets with importance and
    assignment) of the question's nugget scores, or None without them."""
    got = scored_nuggets(q)
    if got is None:
        return None
    source, nuggets = got
    return SOURCES.get(source, source or "where from not recorded"), nuggets


def nugget_line(n: dict[str, Any]) -> str:
    """``vital, supported: the text``."""
    said = SHOWN.get(str(n.get("assignment")), str(n.get("assignment")))
    return f"{n.get('importance')}, {said}: {n.get('text')}"
