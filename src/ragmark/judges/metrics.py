"""The LLM-judged metrics, in one import. Each returns a :class:`~ragmark.types.Score`: a
value, or missing with the reason (and the judge's raw output in ``details``)."""

from __future__ import annotations

from ragmark.judges.answers import (
    ANSWER_RELEVANCE_PROMPT,
    CONTEXT_RELEVANCE_PROMPT,
    CORRECTNESS_PROMPT,
    AnswerRelevanceInput,
    CorrectnessInput,
    PassageInput,
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
from ragmark.judges.relevance import RelevanceInput, relevance_label, relevance_prompt

__all__ = [
    "ANSWER_RELEVANCE_PROMPT", "CLAIMS_PROMPT", "CONTEXT_RELEVANCE_PROMPT",
    "CORRECTNESS_PROMPT", "VERIFY_PROMPT", "AnswerRelevanceInput", "ClaimsInput",
    "CorrectnessInput", "PassageInput", "RelevanceInput", "VerifyInput",
    "answer_correctness", "answer_relevance", "context_relevance", "faithfulness",
    "rating_score", "relevance_label", "relevance_prompt", "supported_share",
]
