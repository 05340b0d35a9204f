"""LLM judges: typed prompts (input model, output model, instruction, examples), tolerant
parsing of their output, and the judge metrics built on them."""

from __future__ import annotations

from ragmark.judges.metrics import (
    answer_correctness,
    answer_relevance,
    context_relevance,
    faithfulness,
    relevance_label,
)
from ragmark.judges.parsing import ParseError, extract_json, parse_yes_no
from ragmark.judges.prompt import JudgeCounts, JudgeFailure, Prompt, ask

__all__ = [
    "JudgeCounts",
    "JudgeFailure",
    "ParseError",
    "Prompt",
    "answer_correctness",
    "answer_relevance",
    "context_relevance",
    "extract_json",
    "faithfulness",
    "parse_yes_no",
    "relevance_label",
    "ask",
]
