"""What ``inspect --failures`` finds: each :class:`Failure` of a question, and the
:class:`FailureReport` of a results file, with the kinds checked (see
:mod:`ragmark.analysis.failures`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ragmark.analysis.agent_failures import AGENT_KINDS, NO_TRAJECTORY
from ragmark.analysis.agent_failures import LABELS as AGENT_LABELS

KINDS = ("empty_ranking", "no_hit", "unknown_ids", "ungrounded", "low_faithfulness",
         "judge_failure", "claim_blame", "pairwise_loss", *AGENT_KINDS)
UNKNOWN_IDS = "is a corpus document or a ground-truth id"
"""What the run's note says when no retrieved id is one the ground truth can judge
(:func:`ragmark.running.scoring.unknown_ids_note`)."""
NOT_APPLICABLE = "no pairwise verdicts in the file (compare with --pairwise)"
"""Why ``pairwise_loss`` is not checked in a file without pairwise verdicts (the kind
is then not reported)."""
@dataclass(frozen=True, slots=True)
class Failure:
    """One failure of one question: what was seen, its likely cause and what to do."""

    query: str
    kind: str
    fact: str
    cause: str  # "ranking" | "retrieval" | "generation" | "judge" | "agent" | "unknown"
    diagnosis: str


@dataclass(slots=True)
class FailureReport:
    """Every failure found, with counts per kind (and per cause) over the questions that
    could be checked, and why a kind could not be checked at all."""

    k: int
    depth: int
    faithfulness_below: float
    grounded_threshold: float
    n_queries: int
    failures: list[Failure] = field(default_factory=list)
    checked: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    unchecked: dict[str, str] = field(default_factory=dict)

    def count(self, kind: str) -> int:
        """Questions with a failure of ``kind`` (a question with several counts once)."""
        return len({f.query for f in self.failures if f.kind == kind})

    def occurrences(self, kind: str) -> int:
        """Failures of ``kind`` in all: an agent's calls (a question may have several)."""
        return sum(1 for f in self.failures if f.kind == kind)

    def kinds(self) -> list[str]:
        """The kinds to report: every kind, but ``unknown_ids`` only where it applies
        (the run's note says its ids are of another kind) and ``pairwise_loss`` only in
        a file with pairwise verdicts."""
        return [k for k in KINDS if not (k == "unknown_ids" and k in self.unchecked)
                and self.unchecked.get(k) not in (NOT_APPLICABLE, NO_TRAJECTORY)]

    def causes(self, kind: str) -> dict[str, int]:
        """Questions with a failure of ``kind`` per cause."""
        out: dict[str, set[str]] = {}
        for f in self.failures:
            if f.kind == kind:
                out.setdefault(f.cause, set()).add(f.query)
        return {c: len(qs) for c, qs in out.items()}

    def label(self, kind: str) -> str:
        return {
            "empty_ranking": "retrieved nothing",
            "no_hit": f"no relevant item in the top {self.depth}",
            "unknown_ids": "retrieved ids of another kind (none is a corpus or judged id)",
            "ungrounded": f"ungrounded answer (groundedness below {self.grounded_threshold:g})",
            "low_faithfulness": f"low faithfulness (below {self.faithfulness_below:g})",
            "judge_failure": "judge failure (no usable verdict)",
            "claim_blame": "blamed by the claim diagnostics",
            "pairwise_loss": "lost to the baseline by the pairwise judge",
            **AGENT_LABELS}[kind]
