"""What the judges share of reading a case (:class:`~ragmark.case.Case`), and how a judge
module declares its metrics: ``SPECS``, a tuple of :func:`judge_spec` lines beside the prompts
and the scoring that compute them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ragmark.case import Case, JudgeCompute
from ragmark.text import citing_sentences
from ragmark.types import MetricSpec, Sentences, spec


def answer_sentences(case: Case) -> Sentences:
    """The answer's sentences with the contexts each cites: as its source gave them,
    else read from its ``[n]`` markers (:func:`ragmark.text.citing_sentences`)."""
    return case.sentences if case.sentences is not None else tuple(
        citing_sentences(case.answer))


def turn_texts(history: Sequence[tuple[str, str | None]]) -> list[str]:
    r"""The earlier turns as the judges read them, one text a turn.

    >>> turn_texts([("Who wrote Dracula?", "Bram Stoker."), ("And Emma?", None)])
    ['user: Who wrote Dracula?\nassistant: Bram Stoker.', 'user: And Emma?']
    """
    return [f"user: {q}" + (f"\nassistant: {a}" if a else "") for q, a in history]


def judge_spec(name: str, summary: str, label: str, needs: tuple[str, ...],
               compute: JudgeCompute, **facts: Any) -> MetricSpec:
    """A judge metric's line in the catalogue: asked of an LLM (``llm`` is added to what
    it needs), never at a cutoff; ``facts`` are the rest of what the catalogue says of
    it (:class:`~ragmark.types.MetricSpec`'s fields): what people are asked about it
    (``ask``, and ``scale`` when they label it on a five-point scale), the value at and
    above which its verdict is yes (``verdict_at``), and the ``group`` name that stands
    for it and its kin in a list of metrics."""
    return replace(spec(name, "judge", "none", summary, label, (*needs, "llm"),
                        compute=compute), **facts)
