"""What the parts of the HTML report share: a config's results as the page reads them."""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape
from typing import Any

MAX_DETAILED = 5000
"""Above this many questions, the per-question details are left to ``ragmark inspect``."""


@dataclass
class View:
    """One config's results as the page reads them."""

    name: str
    metrics: dict[str, float | None]
    counts: dict[str, Any]
    intervals: dict[str, Any] = field(default_factory=dict)
    per_query: dict[str, dict[str, float | None]] = field(default_factory=dict)
    queries: list[dict[str, Any]] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    llm: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def num(v: float | None, digits: int = 4) -> str:
    return "—" if v is None else f"{v:.{digits}f}"


def breakable(name: str) -> str:
    """A metric or config name, escaped, that a narrow column may wrap after an
    underscore or before an ``@`` (never inside a word)."""
    return escape(name).replace("_", "_<wbr>").replace("@", "<wbr>@")
