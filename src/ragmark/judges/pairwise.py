"""The pairwise judge: which of two answers to the same question is better by one
criterion, A, B or a tie, with a one-line reason.

Asked in both orders (A shown first, then B shown first), as MT-Bench does: a verdict
that changes with the order is position-inconsistent and counts as a tie, and a pair
whose two answers both name the first shown (or both the second) *follows the position*:
the share of such pairs is the judge's position-bias rate. With one order (half the
cost) the order is drawn per question from a seed and recorded. Two identical answers
(and contexts) are a tie without a call, and are left out of the position-bias rate.

Criteria: ``overall``; ``correctness`` (against the reference answer, which it needs);
``completeness``; ``faithfulness`` (each answer against its own contexts).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel

from ragmark.judges.prompt import JudgeCounts, JudgeFailure, Prompt, ask


class PairInput(BaseModel):
    question: str
    first_answer: str
    second_answer: str


class PairWithReference(BaseModel):
    question: str
    reference_answer: str
    first_answer: str
    second_answer: str


class PairWithContexts(BaseModel):
    question: str
    first_contexts: list[str]
    first_answer: str
    second_contexts: list[str]
    second_answer: str


class PairOutput(BaseModel):
    better: Literal["first", "second", "tie"]
    reason: str


_ASK = ("Compare the two answers to the question and say which is better {what}: "
        "'first', 'second', or 'tie' when neither is better. Judge the answers, not "
        "their order or length; give a one-line reason.")

CRITERIA: dict[str, tuple[str, type[BaseModel]]] = {
    "overall": ("overall: more correct, more complete, more useful to the person who "
                "asked", PairInput),
    "correctness": ("by correctness: it agrees with the reference answer, and states "
                    "nothing the reference contradicts", PairWithReference),
    "completeness": ("by completeness: it covers more of what the question asks",
                     PairInput),
    "faithfulness": ("by faithfulness: everything it states is supported by its own "
                     "contexts", PairWithContexts),
}
"""Each criterion: what 'better' means, and what the judge is shown."""


SAME = "the two answers are the same"


def criterion_of(name: str, rubric: str | None = None) -> tuple[str, type[BaseModel]]:
    """What 'better' means by the criterion ``name``, and what the judge is shown: a
    built-in one, or a named custom ``rubric`` (the user's words; the judge sees the
    question and the two answers)."""
    if rubric is not None:
        return f"by {name}: {rubric}", PairInput
    if name not in CRITERIA:
        raise ValueError(f"unknown criterion {name!r}; known: {', '.join(CRITERIA)}")
    return CRITERIA[name]


def pair_prompt(criterion: str, rubric: str | None = None) -> Prompt[BaseModel, PairOutput]:
    what, model = criterion_of(criterion, rubric)
    return Prompt(name=f"pairwise_{criterion}", instruction=_ASK.format(what=what),
                  input_model=model, output_model=PairOutput)


@dataclass(frozen=True)
class Side:
    """One system's answer to the question, and its contexts."""

    answer: str
    contexts: tuple[str, ...] = ()


@dataclass(frozen=True)
class PairVerdict:
    """The verdict of one question (``A``, ``B``, ``tie``; None when the judge gave
    none, with ``failure``), what each order said (``orders``: (shown first, said)),
    the reasons, and whether the two orders disagreed or followed the position."""

    verdict: str | None
    orders: tuple[tuple[str, str], ...] = ()
    reasons: tuple[str, ...] = ()
    inconsistent: bool = False
    follows_position: bool = False
    failure: str | None = None
    details: dict[str, str] = field(default_factory=dict)


def one_order_first(question_id: str, seed: int) -> str:
    """The system shown first when one order is asked: drawn per question from the seed
    (the same seed and question give the same order)."""
    digest = hashlib.sha256(f"{seed}:{question_id}".encode()).digest()
    return "A" if digest[0] % 2 == 0 else "B"


def _input(model: type[BaseModel], question: str, first: Side, second: Side,
           reference: str | None) -> BaseModel:
    if model is PairWithReference:
        return PairWithReference(question=question, reference_answer=reference or "",
                                 first_answer=first.answer, second_answer=second.answer)
    if model is PairWithContexts:
        return PairWithContexts(question=question, first_contexts=list(first.contexts),
                                first_answer=first.answer,
                                second_contexts=list(second.contexts),
                                second_answer=second.answer)
    return PairInput(question=question, first_answer=first.answer,
                     second_answer=second.answer)


@dataclass(frozen=True)
class Criterion:
    """A criterion by name, with its words when it is a custom rubric."""

    name: str
    rubric: str | None = None


async def judge_pair(client: object, criterion: str | Criterion, question: str, a: Side,
                     b: Side, *, reference: str | None = None,
                     firsts: Sequence[str] = ("A", "B"), counts: JudgeCounts | None = None
                     ) -> PairVerdict:
    """The verdict on ``a`` against ``b`` by ``criterion`` (a built-in one by name, or a
    :class:`Criterion` with a custom rubric): asked with each of ``firsts`` shown first
    (both orders by default), combined as the module docstring says."""
    c = criterion if isinstance(criterion, Criterion) else Criterion(criterion)
    criterion, rubric = c.name, c.rubric
    _, model = criterion_of(criterion, rubric)
    if model is PairWithReference and not reference:
        return PairVerdict(None, failure="no reference answer for the correctness criterion")
    if a == b:  # the same answer (and contexts): a tie, without asking
        return PairVerdict("tie", reasons=(SAME,))
    prompt = pair_prompt(criterion, rubric)
    said: list[tuple[str, str]] = []
    reasons: list[str] = []
    for first in firsts:
        shown = (a, b) if first == "A" else (b, a)
        out = await ask(client, prompt,  # type: ignore[arg-type]
                        _input(model, question, shown[0], shown[1], reference),
                        counts=counts)
        if isinstance(out, JudgeFailure):
            return PairVerdict(None, tuple(said), tuple(reasons), failure=out.reason)
        said.append((first, out.better))
        reasons.append(out.reason)
    picks = [_system(first, better) for first, better in said]
    if len(picks) == 1:
        return PairVerdict(picks[0], tuple(said), tuple(reasons))
    same = picks[0] == picks[1]
    follows = len({better for _, better in said}) == 1 and said[0][1] != "tie"
    return PairVerdict(picks[0] if same else "tie", tuple(said), tuple(reasons),
                       inconsistent=not same, follows_position=follows)


def _system(first: str, better: str) -> str:
    """Which system ``better`` ("first", "second", "tie") names when ``first`` was shown
    first."""
    if better == "tie":
        return "tie"
    other = "B" if first == "A" else "A"
    return first if better == "first" else other


def position_bias(verdicts: Sequence[PairVerdict]) -> dict[str, object]:
    """Over the pairs judged in both orders: how many, how many flipped with the order
    (counted as ties), and the share whose two answers named the same position."""
    both = [v for v in verdicts if v.verdict is not None and len(v.orders) == 2]
    if not both:
        return {"pairs": 0, "rate": None, "reason": "no pair was judged in both orders"}
    follow = sum(v.follows_position for v in both)
    return {"pairs": len(both), "inconsistent": sum(v.inconsistent for v in both),
            "follows_position": follow, "rate": follow / len(both)}
