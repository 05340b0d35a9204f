"""Judges of the answer and the contexts: answer relevance (1-5 rating), context relevance
(share of helpful passages), answer correctness (against the expected answer)."""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from typing import Literal

from pydantic import BaseModel, Field

from ragmark.case import Case
from ragmark.judges.faithfulness import supported_share, weighed_details
from ragmark.judges.passages import each_passage, yes_chances
from ragmark.judges.prompt import (
    ChatClient,
    JudgeCounts,
    JudgeFailure,
    Prompt,
    ask_weighed,
)
from ragmark.judges.spec import judge_spec
from ragmark.types import Score


class Rated(BaseModel):
    rating: int = Field(ge=1, le=5)
    reason: str = ""


def rating_score(rating: float) -> float:
    """A 1-5 rating mapped linearly to [0, 1]: ``(rating - 1) / 4``.

    >>> rating_score(4)
    0.75
    """
    return (rating - 1) / 4


class AnswerRelevanceInput(BaseModel):
    question: str
    answer: str


ANSWER_RELEVANCE_PROMPT: Prompt[AnswerRelevanceInput, Rated] = Prompt(
    name="answer_relevance",
    instruction=(
        "Rate how directly the answer addresses the question, whether or not it is true. "
        "5: answers exactly what was asked; 4: answers it with some unneeded material; "
        "3: answers part of it; 2: on the topic but does not answer; 1: off-topic, evasive "
        "or a refusal. Give the rating (1-5) and a one-sentence reason."
    ),
    input_model=AnswerRelevanceInput,
    output_model=Rated,
    examples=(
        (
            AnswerRelevanceInput(
                question="What is the boiling point of water at sea level?",
                answer="Water is a molecule made of hydrogen and oxygen.",
            ),
            Rated(rating=2, reason="About water, but gives no boiling point."),
        ),
    ),
)


async def answer_relevance(
    client: ChatClient,
    question: str,
    answer: str,
    *,
    counts: JudgeCounts | None = None,
) -> Score:
    """How directly ``answer`` addresses ``question``: a 1-5 judge rating mapped to [0, 1]
    (``details``: ``rating``, ``reason``). Missing for an empty answer or judge failure."""
    if not answer.strip():
        return Score.missing("empty answer")
    got = await ask_weighed(client, ANSWER_RELEVANCE_PROMPT, AnswerRelevanceInput(
        question=question, answer=answer), counts=counts)
    if isinstance(got, JudgeFailure):
        return got.missing()
    out, rating = got.out, got.mean("rating", hard=got.out.rating)
    weighed = {"expected_rating": round(rating, 4), "hard_value": rating_score(out.rating)
               } if got.weighed("rating") else {}
    return Score(rating_score(rating), details={"rating": out.rating, "reason": out.reason,
                                                **weighed})


# ---------------------------------------------------------------- context relevance


class PassageInput(BaseModel):
    question: str
    passage: str


class PassageRelevance(BaseModel):
    relevant: bool


CONTEXT_RELEVANCE_PROMPT: Prompt[PassageInput, PassageRelevance] = Prompt(
    name="context_relevance",
    instruction=(
        "You get a question and one passage retrieved for it. Decide whether the passage "
        "contains information that helps answer the question: YES if it does, NO if it "
        "does not (also NO when it is only on the same topic)."
    ),
    input_model=PassageInput,
    output_model=PassageRelevance,
    output="yes_no",
    examples=(
        (PassageInput(question="When was the Eiffel Tower completed?",
                      passage="Construction of the tower finished in March 1889."),
         PassageRelevance(relevant=True)),
        (PassageInput(question="When was the Eiffel Tower completed?",
                      passage="The Eiffel Tower is repainted every seven years."),
         PassageRelevance(relevant=False)),
    ),
)


async def context_relevance(
    client: ChatClient,
    question: str,
    contexts: Sequence[str],
    *,
    counts: JudgeCounts | None = None,
) -> Score:
    """Share of the retrieved ``contexts`` that help answer ``question``, each passage
    judged on its own (``details``: ``irrelevant`` passage numbers, from 1; with
    log-probabilities each passage's ``chances`` and the value is their mean). Missing
    with no context or a judge failure."""
    if not contexts:
        return Score.missing("no retrieved context")
    got = await each_passage(client, CONTEXT_RELEVANCE_PROMPT, [
        PassageInput(question=question, passage=c) for c in contexts], counts)
    if isinstance(got, JudgeFailure):
        return got.missing()
    hard, chances, told = yes_chances(got, "relevant")
    return Score(supported_share(chances), details={
        "irrelevant": [i for i, ok in enumerate(hard, start=1) if not ok],
        **weighed_details(chances, hard, told, supported_share(hard))})


# ---------------------------------------------------------------- answer correctness


class CorrectnessInput(BaseModel):
    question: str
    expected_answer: str
    answer: str


class CorrectnessOutput(BaseModel):
    verdict: Literal["correct", "partially_correct", "incorrect"]
    reason: str = ""


CORRECTNESS_VALUES = {"correct": 1.0, "partially_correct": 0.5, "incorrect": 0.0}

CORRECTNESS_PROMPT: Prompt[CorrectnessInput, CorrectnessOutput] = Prompt(
    name="answer_correctness",
    instruction=(
        "Compare the answer with the expected answer to the question. 'correct': it states "
        "the same facts (wording may differ; extra true detail is fine); "
        "'partially_correct': some of the expected facts are right and none contradicted, "
        "or it is right but incomplete; 'incorrect': it contradicts the expected answer or "
        "misses its point. Give the verdict and a one-sentence reason."
    ),
    input_model=CorrectnessInput,
    output_model=CorrectnessOutput,
    examples=(
        (
            CorrectnessInput(
                question="What are the two official languages of Canada?",
                expected_answer="English and French.",
                answer="Canada's official languages include French.",
            ),
            CorrectnessOutput(verdict="partially_correct", reason="English is missing."),
        ),
    ),
)


async def answer_correctness(
    client: ChatClient,
    question: str,
    answer: str,
    expected_answer: str | None,
    *,
    counts: JudgeCounts | None = None,
) -> Score:
    """1 / 0.5 / 0 for a correct / partially correct / incorrect answer against
    ``expected_answer`` (``details``: ``verdict``, ``reason``). Missing without an
    expected answer, for an empty answer, or on judge failure."""
    if expected_answer is None or not expected_answer.strip():
        return Score.missing("no expected_answer for this question")
    if not answer.strip():
        return Score.missing("empty answer")
    got = await ask_weighed(client, CORRECTNESS_PROMPT, CorrectnessInput(
        question=question, expected_answer=expected_answer, answer=answer), counts=counts)
    if isinstance(got, JudgeFailure):
        return got.missing()
    out, hard = got.out, CORRECTNESS_VALUES[got.out.verdict]
    value = sum(got.chance("verdict", value=v, hard=out.verdict) * x
                for v, x in CORRECTNESS_VALUES.items())
    return Score(value, details={"verdict": out.verdict, "reason": out.reason,
                                 **({"hard_value": hard} if got.weighed("verdict") else {})})


def answer_relevance_of(client: ChatClient, c: Case, counts: JudgeCounts) -> Awaitable[Score]:
    return answer_relevance(client, c.question, c.answer, counts=counts)


def context_relevance_of(client: ChatClient, c: Case, counts: JudgeCounts) -> Awaitable[Score]:
    return context_relevance(client, c.question, c.contexts, counts=counts)


def answer_correctness_of(client: ChatClient, c: Case, counts: JudgeCounts) -> Awaitable[Score]:
    return answer_correctness(client, c.question, c.answer, c.expected_answer,
                              counts=counts)


SPECS = (
    judge_spec("answer_relevance", "(rating 1-5 of how directly the answer addresses the "
               "question - 1) / 4", "Answer relevance", ("answer",), answer_relevance_of,
               ask="does the answer address the question?"),
    judge_spec("context_relevance", "retrieved passages that help answer the question / "
               "passages", "Context relevance", ("contexts",), context_relevance_of,
               ask="do the contexts help to answer the question?"),
    judge_spec("answer_correctness", "1 / 0.5 / 0 for a correct / partially correct / "
               "incorrect answer against the expected answer", "Answer correctness",
               ("answer", "expected_answer"), answer_correctness_of,
               ask="does the answer agree with the expected answer?",
               scale="how far does the answer agree with the expected answer?"),
)
