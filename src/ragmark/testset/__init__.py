"""``ragmark testset``: generate a context set from a corpus with an LLM, keeping only
questions whose quotes really occur in their sources."""

from __future__ import annotations

from ragmark.testset.generate import (
    REASONS,
    TestsetOptions,
    TestsetResult,
    estimate_testset,
    generate_testset,
)
from ragmark.testset.prompts import DEFAULT_TYPES, DOCUMENTS, parse_types, question_prompt

__all__ = [
    "DEFAULT_TYPES",
    "DOCUMENTS",
    "REASONS",
    "TestsetOptions",
    "TestsetResult",
    "estimate_testset",
    "generate_testset",
    "parse_types",
    "question_prompt",
]
