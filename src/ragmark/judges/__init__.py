"""LLM judges: typed prompts (input model, output model, instruction, examples), tolerant
parsing of their output, and the judge metrics built on them.

A judge metric is one module's change: a module of this package declares its metrics in
``SPECS`` (:func:`~ragmark.judges.spec.judge_spec` lines) beside the prompts and the
scoring that compute them, and :func:`specs` finds it."""

from __future__ import annotations

import importlib
import pkgutil
from typing import TYPE_CHECKING

from ragmark.judges.metrics import (
    answer_correctness,
    answer_relevance,
    context_relevance,
    faithfulness,
    relevance_label,
)
from ragmark.judges.parsing import ParseError, extract_json, parse_yes_no
from ragmark.judges.prompt import JudgeCounts, JudgeFailure, Prompt, ask

if TYPE_CHECKING:
    from ragmark.types import MetricSpec

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
    "specs",
]

_BUILT_IN = ("faithfulness", "answers", "reference", "claims", "nuggets", "support")
"""The built-in judge modules, in the catalogue's order."""


def specs() -> tuple[MetricSpec, ...]:
    """Every judge metric: those of the built-in modules in their order, then those of any
    other module of this package that declares ``SPECS``, by module name."""
    found = sorted(i.name for i in pkgutil.iter_modules(__path__) if i.name not in _BUILT_IN)
    return tuple(s for name in (*_BUILT_IN, *found)
                 for s in getattr(importlib.import_module(f"{__name__}.{name}"), "SPECS", ()))

