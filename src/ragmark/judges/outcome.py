"""What judging gave: a :class:`JudgeFailure` for an item without a usable answer, and
the :class:`~ragmark.case.JudgeCounts` of a judge's calls (asked, re-asked, failed, cut
to fit; kept beside the case a judge reads, imported from here too)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ragmark.case import JudgeCounts  # noqa: F401 (imported from here)
from ragmark.types import Score

CALL_FAILED = "call_failed"
"""The :attr:`JudgeFailure.code` of a call that failed (no answer came back)."""


@dataclass(frozen=True)
class JudgeFailure:
    """A judge that gave no usable answer: ``reason`` and the last ``raw`` output (None
    when no answer came back). Record the item as missing with these, never as 0."""

    reason: str
    raw: str | None = None
    attempts: int = 0
    code: str | None = None
    """A key a program can branch on: :data:`CALL_FAILED`, or the code of the check
    whose problem the re-ask did not mend (:class:`~ragmark.judges.parsing.ParseError`'s
    ``code``); None otherwise."""

    def missing(self, **details: Any) -> Score:
        """The item as a missing score: the reason, with the raw output in the details."""
        return Score.missing(self.reason, raw=self.raw, **details)
