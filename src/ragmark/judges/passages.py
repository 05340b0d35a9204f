"""Judging the retrieved passages one at a time: a yes/no call a passage, all at once, no
passage seen beside another, so the order they were retrieved in cannot sway a verdict
(issue 63: asked as one numbered list, the 1.5B model's verdicts followed the order —
benchmarks/results/context_order_qwen.md). Each call is small and its prefix (the
instruction, the question) is the same for every passage of a question, which a local
server's prompt cache reuses."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from ragmark.judges.odds import Weighed
from ragmark.judges.prompt import ChatClient, JudgeCounts, JudgeFailure, Prompt, ask_weighed


async def each_passage(client: ChatClient, prompt: Prompt[Any, Any], items: Sequence[Any],
                       counts: JudgeCounts | None) -> list[Weighed[Any]] | JudgeFailure:
    """One yes/no call a passage, each on its own (no passage sees another, so the
    order they were retrieved in cannot sway a verdict: issue 63), all at once; the
    first failure when one fails."""
    got = await asyncio.gather(*(ask_weighed(client, prompt, it, counts=counts)
                                 for it in items))
    failed = next((g for g in got if isinstance(g, JudgeFailure)), None)
    return failed if failed is not None else [g for g in got
                                              if not isinstance(g, JudgeFailure)]


def yes_chances(got: Sequence[Weighed[Any]], field: str) -> tuple[list[bool], list[float], int]:
    """Each yes/no verdict, its probability of yes (the verdict where none came) and how
    many had one."""
    hard = [bool(getattr(g.out, field)) for g in got]
    at = [() if not g.weighed(field) else (field,) for g in got]  # a word, or JSON's bool
    return (hard, [g.chance(*p, hard=h) for g, p, h in zip(got, at, hard, strict=True)],
            sum(g.weighed(*p) for g, p in zip(got, at, strict=True)))
