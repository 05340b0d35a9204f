"""What judging gave: a :class:`JudgeFailure` for an item without a usable answer, and
the :class:`JudgeCounts` of a judge's calls (asked, re-asked, failed, cut to fit)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ragmark.types import Score


@dataclass(frozen=True)
class JudgeFailure:
    """A judge that gave no usable answer: ``reason`` and the last ``raw`` output (None
    when no answer came back). Record the item as missing with these, never as 0."""

    reason: str
    raw: str | None = None
    attempts: int = 0

    def missing(self, **details: Any) -> Score:
        """The item as a missing score: the reason, with the raw output in the details."""
        return Score.missing(self.reason, raw=self.raw, **details)


@dataclass
class JudgeCounts:
    """Running counts of judge calls: ``asked`` items, ``reasked`` (second tries),
    ``failed`` (items that ended in a JudgeFailure), ``cut`` (calls whose texts were cut
    to fit the context ``window``)."""

    asked: int = 0
    reasked: int = 0
    failed: int = 0
    cut: int = 0
    """Calls whose texts were cut to fit the model's context window."""
    window: int | None = None
    """That window, when some were."""
    guidance_cut: int = 0
    """Calls whose alignment (examples, rules) was shortened to fit the window."""
    examples_shortened: int = 0
    examples_dropped: int = 0
    """Over those calls, the alignment's examples shortened and dropped."""

    def add(self, other: JudgeCounts) -> None:
        """Count ``other``'s calls too (a judge of several calls counts its own first)."""
        self.asked += other.asked
        self.reasked += other.reasked
        self.failed += other.failed
        self.cut += other.cut
        self.window = other.window or self.window
        self.guidance_cut += other.guidance_cut
        self.examples_shortened += other.examples_shortened
        self.examples_dropped += other.examples_dropped
