"""A metric of the catalogue as one value: its name, kind, cutoff rule, formula, needs,
default cutoffs and what computes it. Each family declares its metrics beside their
code (``SPECS`` in :mod:`ragmark.metrics.retrieval` and :mod:`ragmark.metrics.answer`);
:mod:`ragmark.metrics.names` gathers them with the judges' and the plugins'."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

NEEDS = ("ground_truth", "qrels", "keywords", "gold_context", "expected_answer", "answer",
         "contexts", "llm", "embeddings")
"""What a metric can need from a question or a run: a ground truth (any kind), judged
documents (qrels), expected keywords, a gold context, an expected answer, an answer, the
retrieved contexts, an LLM endpoint, an embedding model."""


@dataclass(frozen=True, slots=True)
class MetricSpec:
    """One metric of the catalogue: canonical ``name``, ``kind`` (retrieval, answer,
    judge), ``cutoff`` rule (required, optional, none), a one-line ``summary`` (its
    formula), the console ``label`` (the name when empty), what it ``needs`` (see
    :data:`NEEDS`), the cutoffs it is computed at by ``default`` (``None`` for no cutoff;
    empty: only when asked for), and ``compute``, what computes it: for a retrieval
    metric ``compute(graded, k) -> per-query values`` (:mod:`ragmark.metrics.retrieval`),
    for an answer metric ``compute(case) -> Score`` (an
    :class:`~ragmark.metrics.answer.AnswerCase`; a plugin gives
    ``compute(sample, answer, contexts)``, which :func:`register` adapts); judge metrics
    are asked of a model (:mod:`ragmark.running.judging`)."""

    name: str
    kind: str  # "retrieval" | "answer" | "judge"
    cutoff: str  # "required" | "optional" | "none"
    summary: str
    label: str = ""
    needs: tuple[str, ...] = ()
    default: tuple[int | None, ...] = ()
    compute: Callable[..., Any] | None = field(default=None, compare=False)

    def title(self, k: int | None = None) -> str:
        """The console label, with the cutoff: ``nDCG@10``."""
        base = self.label or self.name
        return base if k is None else f"{base}@{k}"


def spec(name: str, kind: str, cutoff: str, summary: str, label: str = "",
          needs: tuple[str, ...] = (), default: tuple[int | None, ...] = (),
          compute: Callable[..., Any] | None = None) -> MetricSpec:
    return MetricSpec(name, kind, cutoff, summary, label, needs, default, compute)
