"""The LLM-judged metrics, in one import. Each returns a :class:`~ragmark.types.Score`: a
value, or missing with the reason (and the judge's raw output in ``details``)."""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from typing import Any

from ragmark.judges.answers import (
    ANSWER_RELEVANCE_PROMPT,
    CONTEXT_RELEVANCE_PROMPT,
    CORRECTNESS_PROMPT,
    AnswerRelevanceInput,
    ContextRelevanceInput,
    CorrectnessInput,
    answer_correctness,
    answer_relevance,
    context_relevance,
    rating_score,
)
from ragmark.judges.faithfulness import (
    CLAIMS_PROMPT,
    VERIFY_PROMPT,
    ClaimsInput,
    VerifyInput,
    faithfulness,
    supported_share,
)
from ragmark.judges.reference import (
    citation_correctness,
    context_entity_recall,
    context_precision,
    context_recall,
)
from ragmark.judges.relevance import RelevanceInput, relevance_label, relevance_prompt
from ragmark.types import Score

__all__ = [
    "ANSWER_RELEVANCE_PROMPT", "CLAIMS_PROMPT", "CONTEXT_RELEVANCE_PROMPT",
    "CORRECTNESS_PROMPT", "VERIFY_PROMPT", "AnswerRelevanceInput", "ClaimsInput",
    "ContextRelevanceInput", "CorrectnessInput", "RelevanceInput", "VerifyInput",
    "answer_correctness", "answer_relevance", "context_relevance", "faithfulness",
    "rating_score", "relevance_label", "relevance_prompt", "supported_share",
]


@dataclass(frozen=True, slots=True)
class JudgeCase:
    """What a judge metric reads of one question: the question, the system's answer
    (empty when there is none), its contexts, and the expected answer when the ground
    truth has one."""

    question: str
    answer: str
    contexts: Sequence[str]
    expected_answer: str | None = None


# One compute per judge metric, compute(client, case, counts) -> the awaitable Score; the
# catalogue (ragmark.metrics.names) names them.

def faithfulness_of(client: Any, c: JudgeCase, counts: Any) -> Awaitable[Score]:
    return faithfulness(client, c.question, c.answer, c.contexts, counts=counts)


def answer_relevance_of(client: Any, c: JudgeCase, counts: Any) -> Awaitable[Score]:
    return answer_relevance(client, c.question, c.answer, counts=counts)


def context_relevance_of(client: Any, c: JudgeCase, counts: Any) -> Awaitable[Score]:
    return context_relevance(client, c.question, c.contexts, counts=counts)


def answer_correctness_of(client: Any, c: JudgeCase, counts: Any) -> Awaitable[Score]:
    return answer_correctness(client, c.question, c.answer, c.expected_answer, counts=counts)


def context_recall_of(client: Any, c: JudgeCase, counts: Any) -> Awaitable[Score]:
    return context_recall(client, c.question, c.expected_answer, c.contexts, counts=counts)


def context_entity_recall_of(client: Any, c: JudgeCase, counts: Any) -> Awaitable[Score]:
    return context_entity_recall(client, c.expected_answer, c.contexts, counts=counts)


def context_precision_of(client: Any, c: JudgeCase, counts: Any) -> Awaitable[Score]:
    return context_precision(client, c.question, c.expected_answer, c.contexts,
                             counts=counts)


def citation_correctness_of(client: Any, c: JudgeCase, counts: Any) -> Awaitable[Score]:
    return citation_correctness(client, c.answer, c.contexts, counts=counts)

