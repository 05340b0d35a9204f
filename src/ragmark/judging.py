"""Judge metrics over a run's records: probe the endpoint, ask concurrently, account.

When no endpoint is configured, or it does not answer the probe, every judge metric is
recorded as missing with the reason and a note says so (an error only with
``require=True``). Otherwise every (question, metric) is judged concurrently through one
:class:`LLMClient` (cache, retries, concurrency limit); an item the judge could not
score is missing with its reason, never 0.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from ragmark.errors import ConfigError
from ragmark.judges import (
    JudgeCounts,
    answer_correctness,
    answer_relevance,
    context_relevance,
    faithfulness,
)
from ragmark.judges.metrics import (
    ANSWER_RELEVANCE_PROMPT,
    CLAIMS_PROMPT,
    CONTEXT_RELEVANCE_PROMPT,
    CORRECTNESS_PROMPT,
    AnswerRelevanceInput,
    ClaimsInput,
    ContextRelevanceInput,
    CorrectnessInput,
)
from ragmark.judges.prompt import Message
from ragmark.llm import LLMClient, LLMSettings
from ragmark.report.model import QueryRecord
from ragmark.types import Sample, Score

JUDGE_METRICS = ("faithfulness", "answer_relevance", "context_relevance", "answer_correctness")
NEEDS_ANSWER = {"faithfulness", "answer_relevance", "answer_correctness"}


def parse_judge_metrics(text: str | Sequence[str] | None) -> list[str]:
    """``"faithfulness,answer_relevance"`` -> names, checked against the known ones."""
    if not text:
        return []
    names = [n.strip() for n in (text.split(",") if isinstance(text, str) else text)]
    names = [n for n in names if n]
    unknown = [n for n in names if n not in JUDGE_METRICS]
    if unknown:
        raise ConfigError(
            f"unknown judge metric {unknown[0]!r}; known: {', '.join(JUDGE_METRICS)}"
        )
    return list(dict.fromkeys(names))


def _job(
    client: LLMClient, name: str, s: Sample, rec: QueryRecord, counts: JudgeCounts
) -> Awaitable[Score] | Score:
    if name in NEEDS_ANSWER and rec.answer is None:
        return Score.missing("no answer (generation skipped or failed)")
    answer = rec.answer or ""
    if name == "faithfulness":
        return faithfulness(client, s.question, answer, rec.contexts, counts=counts)
    if name == "answer_relevance":
        return answer_relevance(client, s.question, answer, counts=counts)
    if name == "context_relevance":
        return context_relevance(client, s.question, rec.contexts, counts=counts)
    return answer_correctness(client, s.question, answer, s.expected_answer, counts=counts)


async def _judge_all(
    client: LLMClient,
    samples: Sequence[Sample],
    records: Sequence[QueryRecord],
    names: Sequence[str],
    counts: JudgeCounts,
    advance: Callable[[int], None],
) -> list[dict[str, Score]]:
    ok, reason = await client.probe()
    if not ok:
        raise _Unreachable(reason)
    out: list[dict[str, Score]] = [{} for _ in records]

    async def one(i: int, name: str, job: Awaitable[Score]) -> None:
        out[i][name] = await job
        advance(1)

    tasks = []
    for i, (s, rec) in enumerate(zip(samples, records, strict=True)):
        for name in names:
            job = _job(client, name, s, rec, counts)
            if isinstance(job, Score):
                out[i][name] = job
                advance(1)
            else:
                tasks.append(one(i, name, job))
    try:
        await asyncio.gather(*tasks)
    finally:
        await client.aclose()
    return out


class _Unreachable(Exception):
    pass


def judge(
    samples: Sequence[Sample],
    records: Sequence[QueryRecord],
    names: Sequence[str],
    settings: LLMSettings | None,
    *,
    require: bool = False,
    advance: Callable[[int], None] = lambda n: None,
) -> tuple[list[dict[str, Score]], list[str], dict[str, Any]]:
    """Per-query judge scores, notes for the report, and the LLM accounting."""
    if not names:
        return [{} for _ in records], [], {}
    if settings is None:
        why = "no LLM endpoint configured (set RAGMARK_LLM_BASE_URL and RAGMARK_LLM_MODEL)"
        if require:
            raise ConfigError(f"--require-llm: {why}")
        return _skipped(records, names, why)
    client = LLMClient(settings)
    counts = JudgeCounts()
    try:
        scores = asyncio.run(_judge_all(client, samples, records, names, counts, advance))
    except _Unreachable as e:
        why = f"the LLM endpoint did not answer: {e}"
        if require:
            raise ConfigError(f"--require-llm: {why}") from None
        return _skipped(records, names, why)
    return scores, [], llm_summary(settings, client, counts)


def llm_summary(settings: LLMSettings, client: LLMClient, counts: JudgeCounts
                ) -> dict[str, Any]:
    """The LLM accounting of a judged run, for reports: endpoint, model, calls, cache
    hits, retries, failures, tokens, estimated cost, judge re-asks and failures."""
    st = client.stats
    return {
        "endpoint": settings.display_url, "model": settings.model,
        "calls": st.calls, "cache_hits": st.cache_hits, "retries": st.retries,
        "failures": st.failures, "prompt_tokens": st.prompt_tokens,
        "completion_tokens": st.completion_tokens, "estimated_cost": st.estimated_cost(),
        "judge_reasks": counts.reasked, "judge_failures": counts.failed,
    }


def _skipped(
    records: Sequence[QueryRecord], names: Sequence[str], why: str
) -> tuple[list[dict[str, Score]], list[str], dict[str, Any]]:
    scores = [{n: Score.missing(why) for n in names} for _ in records]
    return scores, [f"judge metrics ({', '.join(names)}) skipped: {why}"], {}


def _first_calls(name: str, s: Sample, rec: QueryRecord) -> list[Message] | None:
    """The messages of the first judge call of ``name`` for one question (None when the
    metric would be missing without a call)."""
    answer = (rec.answer or "").strip()
    if name == "context_relevance":
        if not any(c.strip() for c in rec.contexts):
            return None
        return CONTEXT_RELEVANCE_PROMPT.render(
            ContextRelevanceInput(question=s.question, context=list(rec.contexts)))
    if not answer:
        return None
    if name == "faithfulness":
        if not any(c.strip() for c in rec.contexts):
            return None
        return CLAIMS_PROMPT.render(ClaimsInput(question=s.question, answer=answer))
    if name == "answer_relevance":
        return ANSWER_RELEVANCE_PROMPT.render(
            AnswerRelevanceInput(question=s.question, answer=answer))
    if not (s.expected_answer or "").strip():
        return None
    return CORRECTNESS_PROMPT.render(CorrectnessInput(
        question=s.question, expected_answer=s.expected_answer or "", answer=answer))


def estimate(
    samples: Sequence[Sample],
    records: Sequence[QueryRecord],
    names: Sequence[str],
    settings: LLMSettings | None,
) -> dict[str, Any]:
    """A dry run: the judge calls a run would make, without calling anything.

    Counts the first call of every (question, metric) that would be asked, less those
    already in the cache; faithfulness makes one more call per answer (checking its
    claims) whose size depends on the first answer, so it is counted but its tokens are
    estimated from the contexts. Tokens are characters / 4; the cost (prompt tokens only)
    needs prices in the settings.
    """
    if settings is None:
        return {"endpoint": None, "note": "no LLM endpoint configured: nothing would be called"}
    firsts: list[list[Message]] = []
    second_calls = second_tokens = 0
    for s, rec in zip(samples, records, strict=True):
        for name in names:
            messages = _first_calls(name, s, rec)
            if messages is None:
                continue
            firsts.append(messages)
            if name == "faithfulness":
                second_calls += 1
                second_tokens += (sum(len(c) for c in rec.contexts)
                                  + len(rec.answer or "")) // 4 + 200
    est = LLMClient(settings).estimate(firsts)
    price = settings.price()
    tokens = est.prompt_tokens + second_tokens
    return {
        "endpoint": settings.display_url, "model": settings.model,
        "calls": est.calls + second_calls, "cached": est.cached,
        "estimated_prompt_tokens": tokens,
        "estimated_cost": None if price is None else tokens * price[0] / 1e6,
    }
