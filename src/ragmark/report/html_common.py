"""What the parts of the HTML report share: a config's results as the page reads them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from html import escape
from typing import TYPE_CHECKING, Any

from ragmark.report import svg

if TYPE_CHECKING:
    from ragmark.results.model import QueryRecord, RunReport
    from ragmark.stats import Interval

MAX_DETAILED = 5000
"""Above this many questions, the per-question details are left to ``ragmark inspect``."""


@dataclass(frozen=True)
class View:
    """One config's results as the page reads them: its report (read through the results
    model), its bootstrap intervals (a compare's), and whether the file holds the
    questions in full (``--include-details``)."""

    name: str
    report: RunReport | None = None
    intervals: Mapping[str, Interval | None] = field(default_factory=dict)
    detailed: bool = False

    @property
    def metrics(self) -> dict[str, float | None]:
        return {} if self.report is None else {
            k: a.value for k, a in self.report.metrics.items()}

    @property
    def counts(self) -> dict[str, dict[str, Any]]:
        return {} if self.report is None else {
            k: a.to_json() for k, a in self.report.metrics.items()}

    @property
    def per_query(self) -> dict[str, dict[str, float | None]]:
        """Question id -> metric -> value (None: missing)."""
        return {} if self.report is None else {
            q.id: {m: s.value for m, s in q.metrics.items()} for q in self.report.queries}

    @property
    def queries(self) -> list[QueryRecord]:
        """The questions in full (none when the file has only their values)."""
        return self.report.queries if self.report is not None and self.detailed else []

    @property
    def timings(self) -> dict[str, float]:
        return {} if self.report is None else self.report.timings

    @property
    def llm(self) -> dict[str, Any]:
        return {} if self.report is None else self.report.llm

    @property
    def notes(self) -> list[str]:
        return [] if self.report is None else self.report.notes


def num(v: float | None, digits: int = 4) -> str:
    return "—" if v is None else f"{v:.{digits}f}"


def breakable(name: str) -> str:
    """A metric or config name, escaped, that a narrow column may wrap after an
    underscore or before an ``@`` (never inside a word)."""
    return escape(name).replace("_", "_<wbr>").replace("@", "<wbr>@")


def numbers(vs: Sequence[View]) -> svg.Series:
    """Each config's series number, in the report's order: its colour and marker in
    every plot."""
    return {v.name: i for i, v in enumerate(vs)}
