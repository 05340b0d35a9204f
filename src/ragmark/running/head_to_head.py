"""Pairwise judging of two systems' answers to the same questions, and its statistics:
per criterion, each question's verdict (:mod:`ragmark.judges.pairwise`, both orders or
one drawn from the seed), then wins, ties and losses, A's win rate with its interval,
the sign test with Holm's correction across the criteria, and the judge's
position-bias rate. A dry run counts the calls without making one."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragmark.aio import run_sync
from ragmark.errors import ConfigError
from ragmark.judges.pairwise import (
    Criterion,
    PairVerdict,
    Side,
    judge_pair,
    one_order_first,
    position_bias,
)
from ragmark.judges.prompt import JudgeCounts, is_reask
from ragmark.llm import LLMClient, LLMSettings, open_client
from ragmark.llm.accounting import llm_summary
from ragmark.llm.dry import NotCached
from ragmark.llm.factory import check_endpoint, dry_client
from ragmark.llm.protocol import estimate_tokens
from ragmark.stats import holm
from ragmark.stats.win_rates import win_rate


@dataclass(frozen=True)
class Pair:
    """One question both systems answered: their answers (with contexts), and the
    reference answer when the question has one."""

    id: str
    question: str
    a: Side
    b: Side
    reference: str | None = None


def firsts_of(pair: Pair, orders: int, seed: int) -> tuple[str, ...]:
    """The systems shown first: both orders, or one drawn from the seed."""
    return ("A", "B") if orders == 2 else (one_order_first(pair.id, seed),)


async def _judge_all(client: LLMClient, criteria: Sequence[str], pairs: Sequence[Pair],
                     orders: int, seed: int, counts: JudgeCounts,
                     advance: Callable[[int], None], rubrics: Mapping[str, str]
                     ) -> dict[str, list[PairVerdict]]:
    ok, why = await client.probe()
    if not ok:
        raise ConfigError(f"the judge's endpoint did not answer: {why}")

    async def one(criterion: str, p: Pair) -> PairVerdict:
        try:
            return await judge_pair(client, Criterion(criterion, rubrics.get(criterion)),
                                    p.question, p.a, p.b, reference=p.reference,
                                    firsts=firsts_of(p, orders, seed), counts=counts)
        finally:
            advance(orders)

    got = await asyncio.gather(*(one(c, p) for c in criteria for p in pairs))
    return {c: list(got[k * len(pairs):(k + 1) * len(pairs)])
            for k, c in enumerate(criteria)}


def check_judge(settings: LLMSettings) -> None:
    """A ConfigError naming the endpoint when the pairwise judge does not answer (asked
    before the configs run, so a dead endpoint costs nothing)."""
    check_endpoint(settings, "the judge's endpoint")


def judge_pairs(settings: LLMSettings, criteria: Sequence[str], pairs: Sequence[Pair],
                orders: int = 2, seed: int = 0,
                advance: Callable[[int], None] = lambda n: None,
                rubrics: Mapping[str, str] | None = None
                ) -> tuple[dict[str, list[PairVerdict]], dict[str, Any]]:
    """Every pair's verdict per criterion (``rubrics``: the custom ones' words),
    concurrently on one client (its limit, retries and call cache), and the LLM
    accounting."""
    client = open_client(settings)
    counts = JudgeCounts()

    async def main() -> dict[str, list[PairVerdict]]:
        try:
            return await _judge_all(client, criteria, pairs, orders, seed, counts, advance,
                                    rubrics or {})
        finally:
            await client.aclose()

    verdicts = run_sync(main())
    return verdicts, llm_summary(settings, client, counts)


def estimate_pairs(settings: LLMSettings, criteria: Sequence[str], pairs: Sequence[Pair],
                   orders: int = 2, seed: int = 0, rubrics: Mapping[str, str] | None = None
                   ) -> dict[str, Any]:
    """A dry run: the calls not in the cache (one per pair, criterion and order; a
    re-ask each at most), the cached ones, prompt tokens and cost; nothing is called."""
    dry = dry_client(settings)

    async def walk() -> None:
        for c in criteria:
            for p in pairs:
                for first in firsts_of(p, orders, seed):
                    try:
                        await judge_pair(dry, Criterion(c, (rubrics or {}).get(c)),
                                         p.question, p.a, p.b, reference=p.reference,
                                         firsts=(first,))
                    except NotCached as e:
                        if not e.shared and not is_reask(e.messages):
                            dry.follow(0, 1, estimate_tokens(e.messages) + 60)

    run_sync(walk())
    return {**dry.summary(), "pairs": len(pairs), "criteria": list(criteria),
            "orders": orders}


def summary(verdicts: dict[str, list[PairVerdict]], *, n_resamples: int = 2000,
            seed: int = 0) -> dict[str, dict[str, Any]]:
    """Per criterion: A's record against B (:func:`ragmark.stats.win_rates.win_rate`)
    over the pairs with a verdict, Holm's p across the criteria, the position-bias
    rate, and the pairs without a verdict with their reasons."""
    out: dict[str, dict[str, Any]] = {}
    for c, vs in verdicts.items():
        given = [v.verdict for v in vs if v.verdict is not None]
        failed: dict[str, int] = {}
        for v in vs:
            if v.verdict is None:
                failed[str(v.failure)] = failed.get(str(v.failure), 0) + 1
        out[c] = {**win_rate(given, n_resamples=n_resamples, seed=seed),
                  "position_bias": position_bias(vs), "pairs": len(vs),
                  "without_verdict": failed}
    adjusted = holm([r["p_value"] for r in out.values()])
    for r, p in zip(out.values(), adjusted, strict=True):
        r["p_holm"] = p
    return out
