"""TREC RAG's nugget scores of one answer, from its nuggets' importance and assignment
(Pradeep et al., "Initial Nugget Evaluation Results for the TREC 2024 RAG Track with the
AutoNuggetizer Framework", arXiv 2411.09607; the same sums as castorini's nuggetizer,
``calculate_nugget_scores``).

Each nugget is assigned ``support``, ``partial_support`` or ``not_support``:

- ``nugget_all_strict`` = nuggets assigned support / nuggets;
- ``nugget_all`` = (support + 0.5 x partial_support) / nuggets;
- ``nugget_vital_strict`` and ``nugget_vital``: the same over the vital nuggets only.

Worked example (in the tests): vital [support, partial_support, not_support], okay
[support] -> all_strict 2/4 = 0.5, all (2 + 0.5)/4 = 0.625, vital_strict 1/3, vital
1.5/3 = 0.5. Where nuggetizer gives 0.0 to a question without a vital nugget, the vital
scores here are missing with that reason: there is nothing to score.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ragmark.types import Nugget, Score

ASSIGNMENTS = ("support", "partial_support", "not_support")
"""What an answer makes of a nugget: holds it, holds part of it, or not."""
CREDIT = {"support": 1.0, "partial_support": 0.5, "not_support": 0.0}
METRICS = ("nugget_vital_strict", "nugget_vital", "nugget_all_strict", "nugget_all")
NO_VITAL = "no vital nugget for this question"


@dataclass(frozen=True, slots=True)
class Assigned:
    """A nugget and what the answer makes of it (one of :data:`ASSIGNMENTS`)."""

    nugget: Nugget
    assignment: str


def _share(assigned: Sequence[Assigned], strict: bool) -> float:
    if strict:
        return sum(a.assignment == "support" for a in assigned) / len(assigned)
    return sum(CREDIT[a.assignment] for a in assigned) / len(assigned)


def nugget_scores(assigned: Sequence[Assigned]) -> dict[str, Score]:
    """The four scores of one answer (:data:`METRICS`); the vital ones missing when no
    nugget is vital, all four when there is no nugget."""
    if not assigned:
        return {m: Score.missing("no nugget for this question") for m in METRICS}
    vital = [a for a in assigned if a.nugget.importance == "vital"]
    out = {"nugget_all_strict": Score(_share(assigned, True)),
           "nugget_all": Score(_share(assigned, False))}
    if vital:
        out |= {"nugget_vital_strict": Score(_share(vital, True)),
                "nugget_vital": Score(_share(vital, False))}
    else:
        out |= {m: Score.missing(NO_VITAL) for m in ("nugget_vital_strict", "nugget_vital")}
    return {m: out[m] for m in METRICS}
