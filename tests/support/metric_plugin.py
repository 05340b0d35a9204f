"""A metric plugin as a third-party package would ship one (entry point group
``ragmark.metric``): 1 when the answer has at most 20 words, else 0."""

from __future__ import annotations

from ragmark.metrics.names import MetricSpec
from ragmark.types import Score


def _short(sample, answer: str, contexts) -> Score:  # type: ignore[no-untyped-def]
    return Score(1.0 if len(answer.split()) <= 20 else 0.0, details={"words": len(
        answer.split())})


SHORT_ANSWER = MetricSpec("short_answer", "answer", "none", "1 if the answer has at most 20 "
                          "words", label="Short answer", needs=("answer",), compute=_short)
