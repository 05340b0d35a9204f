"""Abstention: whether a system declines the questions its corpus cannot answer, and
only those. A set marks such questions ``"answerable": false`` (SQuAD 2.0's
``"is_impossible": true``); a refusal is an empty answer or one that declines
(:func:`ragmark.metrics.production.is_refusal`: the default phrases and a config's
``refusal_patterns``).

Each metric is a per-question 0/1 whose mean over the questions it applies to is the
rate, and is missing, with the reason, on the others:

- ``abstention_recall``: on unanswerable questions, 1 when refused (mean: refused /
  unanswerable);
- ``abstention_precision``: on refused questions, 1 when unanswerable (mean:
  unanswerable / refused);
- ``over_refusal``: on answerable questions, 1 when refused (mean: refused / answerable);
- ``answered_accuracy``: on answerable questions that were answered, 1 when the answer
  equals the expected answer after normalisation (exact_match's rule).

With a confidence on the answers (a logged output's or a pipeline's ``confidence``),
:func:`risk_coverage` gives the risk-coverage curve and its area (``aurc``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ragmark.case import Case, reading
from ragmark.metrics.answer import exact_match
from ragmark.metrics.production import is_refusal, refused
from ragmark.types import (
    Aggregate,
    Cutoff,
    Kind,
    MetricSpec,
    RunView,
    Sample,
    Score,
    lower_better,
    spec,
)

UNANSWERABLE = "unanswerable by design"
"""The reason of an answer metric on a question marked unanswerable."""


def abstention_recall_of(c: Case) -> Score:
    if c.sample.answerable:
        return Score.missing("answerable question (abstention recall counts the "
                             "unanswerable ones)")
    return Score(1.0 if refused(c) else 0.0)


def abstention_precision_of(c: Case) -> Score:
    if not refused(c):
        return Score.missing("answered (abstention precision counts the refusals)")
    return Score(0.0 if c.sample.answerable else 1.0)


def over_refusal_of(c: Case) -> Score:
    if not c.sample.answerable:
        return Score.missing(UNANSWERABLE)
    return Score(1.0 if refused(c) else 0.0)


def answered_accuracy_of(c: Case) -> Score:
    if not c.sample.answerable:
        return Score.missing(UNANSWERABLE)
    if refused(c):
        return Score.missing("refused (answered accuracy counts the answered questions)")
    if not c.sample.expected_answer:
        return Score.missing("no expected answer")
    return exact_match(c.answer, c.sample.expected_answer)


def aurc_of(run: RunView) -> Aggregate | None:
    """AURC over the run, its curve as the detail (:func:`risk_coverage`); None when no
    answer has a confidence."""
    if not any("confidence" in f for f in run.facts):
        return None
    curve = risk_coverage(list(zip(run.samples, run.answers,
                                   [f.get("confidence") for f in run.facts], strict=True)),
                          run.refusal_patterns, [f.get("refused") for f in run.facts])
    if curve is None:
        return None
    left = curve["of"] - curve["n"]
    return Aggregate(curve["aurc"], curve["n"], left, {
        "no confidence, refused, or right or wrong cannot be told": left} if left else {},
        detail=curve)


SPECS: tuple[MetricSpec, ...] = tuple(reading(s, "refusal_patterns") for s in (
    spec("abstention_recall", "answer", "none", "refused unanswerable / unanswerable",
         "Abstention recall", ("answer", "unanswerable"), (None,),
         compute=abstention_recall_of),
    spec("abstention_precision", "answer", "none", "unanswerable refused / refused",
         "Abstention precision", ("answer", "unanswerable"),
         compute=abstention_precision_of),
    *lower_better((spec("over_refusal", "answer", "none", "refused answerable / answerable",
                        "Over-refusal", ("answer", "unanswerable"), (None,),
                        compute=over_refusal_of),)),
    spec("answered_accuracy", "answer", "none",
         "exact match on the answerable questions answered", "Answered accuracy",
         ("answer", "expected_answer", "unanswerable"), (None,),
         compute=answered_accuracy_of),
    *lower_better((MetricSpec(
        "aurc", Kind.AGGREGATE, Cutoff.NONE, "area under the risk-coverage curve: the mean risk of "
        "answering the k most confident questions, k = 1..n (lower is better; needs a "
        "logged confidence)", "AURC", ("answer", "logged"), compute=aurc_of,
        absent="no confidence recorded (the risk-coverage curve needs one)",
        report="risk_coverage"),)),
))
"""The abstention metrics: defaults of a set that marks some question unanswerable, but
abstention_precision (asked for with ``--metrics``: a system that never refuses leaves it
without a value, which fails a run that asks for it)."""


def risk_coverage(cases: Sequence[tuple[Sample, str | None, float | None]],
                  patterns: Sequence[str] = (),
                  judged: Sequence[float | None] | None = None) -> dict[str, Any] | None:
    """The risk-coverage curve of a system that gives a confidence with its answers
    (selective prediction): the answered questions (not refused: ``judged`` holds the
    refusal judge's verdicts where it gave them) whose correctness is known — an
    unanswerable one answered is wrong, an answerable one is right when it equals the
    expected answer (exact_match's rule) — most confident first; at the k-th, coverage
    is k / the questions, risk the share wrong among the k. ``aurc`` is the mean risk
    over the curve's points (lower is better). None when no answer has a confidence.

    Example: confidences 0.9 (right), 0.8 (wrong), 0.4 (right) of 4 questions: points
    (0.25, 0), (0.5, 0.5), (0.75, 0.333); AURC (0 + 0.5 + 0.333) / 3 = 0.278.
    """
    scored = []
    verdicts = list(judged) if judged is not None else [None] * len(cases)
    for (sample, answer, confidence), verdict in zip(cases, verdicts, strict=True):
        if answer is None or confidence is None:
            continue
        if (bool(verdict) if verdict is not None else is_refusal(answer, patterns)):
            continue
        if sample.answerable and not sample.expected_answer:
            continue  # right or wrong cannot be told
        wrong = (not sample.answerable) or exact_match(
            answer, sample.expected_answer).value != 1.0
        scored.append((confidence, wrong))
    if not scored:
        return None
    scored.sort(key=lambda x: -x[0])
    points, errors = [], 0
    for k, (_, wrong) in enumerate(scored, start=1):
        errors += wrong
        points.append([k / len(cases), errors / k])
    return {"points": points, "aurc": math.fsum(p[1] for p in points) / len(points),
            "n": len(scored), "of": len(cases)}
