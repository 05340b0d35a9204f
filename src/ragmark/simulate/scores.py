"""The conversation-level scores of a simulation, judged once every conversation is
played (:mod:`ragmark.judges.conversation`): goal completion against the scenario's
expected outcome, beside the simulated user's own verdict, and knowledge retention.
Each conversation's values, and per metric the mean over the conversations that have
one with its 95% interval, the count and the reasons of those missing (never a 0)."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from ragmark.case import ChatClient, JudgeCounts
from ragmark.judges.conversation import goal_completion, knowledge_retention
from ragmark.simulate.play import Played
from ragmark.simulate.scenarios import Scenario
from ragmark.stats.paired import mean_ci
from ragmark.types import Score

METRICS = ("goal_completion", "knowledge_retention")


async def judge_conversations(scenarios: Sequence[Scenario], played: Sequence[Played],
                              client: ChatClient, concurrency: int,
                              advance: Callable[[int], None] = lambda n: None
                              ) -> tuple[list[dict[str, Score]], JudgeCounts]:
    """Each conversation's scores, in order (``concurrency`` conversations at once)."""
    sem = asyncio.Semaphore(concurrency)
    counts = JudgeCounts()

    async def one(s: Scenario, p: Played) -> dict[str, Score]:
        turns = [(str(t["question"]), None if t.get("error") else str(t["answer"] or ""))
                 for t in p.turns]
        async with sem:
            goal = await goal_completion(client, s.scenario, s.expected_outcome, turns,
                                         counts=counts)
            kept = await knowledge_retention(client, turns, counts=counts)
        advance(1)
        return {"goal_completion": goal, "knowledge_retention": kept}

    got = await asyncio.gather(*(one(s, p) for s, p in zip(scenarios, played, strict=True)))
    return list(got), counts


def score_json(score: Score) -> Any:
    """A conversation's value as the transcripts hold it: the number, or the missing
    value with its reason; the details beside."""
    if score.value is None:
        return {"value": None, "reason": score.reason}
    return {"value": round(float(score.value), 6), **dict(score.details or {})}


def score_summary(played: Sequence[Played], scores: Sequence[dict[str, Score]]
                  ) -> dict[str, Any]:
    """Per metric the mean over the conversations with a value, its 95% interval, how
    many have one and why the others have none; and how often the judged goal (hard
    verdict) agrees with the simulated user's own."""
    out: dict[str, Any] = {}
    for m in METRICS:
        values = [v for v in (s[m].value for s in scores) if v is not None]
        iv = mean_ci(values) if values else None
        out[m] = {"mean": sum(values) / len(values) if values else None,
                  # one value has no spread to resample: no interval, not a point
                  "interval": None if iv is None or iv.low == iv.high == iv.mean and (
                      iv.n == 1) else [iv.low, iv.high],
                  "n": len(values), "missing": len(scores) - len(values),
                  "reasons": dict(Counter(str(s[m].reason) for s in scores
                                          if s[m].value is None))}
    both = [(p.outcome == "goal_reached", bool(s["goal_completion"].details.get("reached")))
            for p, s in zip(played, scores, strict=True)
            if s["goal_completion"].value is not None]
    out["goal_agreement"] = {"agree": sum(a == b for a, b in both), "n": len(both)}
    return out
