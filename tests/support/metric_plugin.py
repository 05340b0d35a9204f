"""Metric plugins as a third-party package would ship them (entry point group
``ragmark.metric``): 1 when the answer has at most 20 words, else 0 — declared as the
built-ins declare theirs (``compute(case)``), and in the old, deprecated form
``compute(sample, answer, contexts)``."""

from __future__ import annotations

from ragmark.case import Case
from ragmark.metrics.names import MetricSpec
from ragmark.types import Score


def _words(answer: str) -> Score:
    n = len(answer.split())
    return Score(1.0 if n <= 20 else 0.0, details={"words": n})


def _short(case: Case) -> Score:
    return _words(case.answer)


def _short_old(sample, answer: str, contexts) -> Score:  # type: ignore[no-untyped-def]
    return _words(answer)


SHORT_ANSWER = MetricSpec("short_answer", "answer", "none", "1 if the answer has at most 20 "
                          "words", label="Short answer", needs=("answer",), compute=_short)
SHORT_ANSWER_OLD = MetricSpec("short_answer_old", "answer", "none", "1 if the answer has at "
                              "most 20 words", label="Short answer (old form)",
                              needs=("answer",), compute=_short_old)
