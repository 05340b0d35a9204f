"""Judge metrics over a run's records: probe the endpoint, ask concurrently, account.

When no endpoint is configured, or it does not answer the probe, every judge metric is
recorded as missing with the reason and a note says so (an error only with
``require=True``). Otherwise every (question, metric) is judged concurrently through one
:class:`LLMClient` (cache, retries, concurrency limit); an item the judge could not
score is missing with its reason, never 0.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

from ragmark.aio import run_sync
from ragmark.case import Case
from ragmark.config_judges import written_steps
from ragmark.errors import ConfigError
from ragmark.judges import JudgeCounts
from ragmark.judges.claim_scores import METRICS as CLAIM_METRICS
from ragmark.judges.faithfulness import claims_call
from ragmark.judges.guidance import Guidance, aligned
from ragmark.judges.language import speaking
from ragmark.judges.prompt import JudgeFailure, ask, is_reask
from ragmark.judges.refusal import REFUSAL_PROMPT, RefusalInput
from ragmark.llm import LLMClient, LLMSettings, open_client
from ragmark.llm.accounting import llm_summary
from ragmark.llm.dry import DryClient, NotCached
from ragmark.llm.factory import dry_client
from ragmark.llm.fields import SET_ENDPOINT
from ragmark.llm.protocol import estimate_tokens
from ragmark.metrics.names import catalogue, expand_groups, judge_metrics, split_names
from ragmark.types import Sample, Score

T = TypeVar("T")


def needs_answer(name: str) -> bool:
    """Whether the judge metric reads the answer (its catalogue entry says)."""
    return "answer" in catalogue()[name].needs


def parse_judge_metrics(text: str | Sequence[str] | None) -> list[str]:
    """``"faithfulness,answer_relevance"`` -> names, checked against the known ones."""
    if not text:
        return []
    names = split_names(expand_groups(split_names(text)))
    known = judge_metrics()
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ConfigError(
            f"unknown judge metric {unknown[0]!r}; known: {', '.join(known)}"
        )
    return list(dict.fromkeys(names))


def judge_call(client: LLMClient, names: Sequence[str], case: Case, counts: JudgeCounts,
               guidance: Guidance | None = None) -> Awaitable[Score | Mapping[str, Score]]:
    """The judge of ``names`` (one metric, or the metrics one judge produces together)
    asked about one case, once; ``guidance``: people's examples and rules the judge is
    aligned with (:mod:`ragmark.judges.guidance`)."""
    compute = catalogue()[names[0]].compute
    assert compute is not None  # every judge metric of the catalogue computes itself
    job = compute(client, case, counts)
    return job if guidance is None else aligned(job, guidance)


NO_ANSWER = "no answer (generation skipped or failed)"


def by_judge(names: Sequence[str]) -> list[tuple[str, ...]]:
    """The judge metrics asked, grouped by the judge that computes them (the claim,
    nugget and support metrics each come from one judge a question), in the order
    asked."""
    groups: dict[int, list[str]] = {}
    for n in names:
        groups.setdefault(id(catalogue()[n].compute), []).append(n)
    return [tuple(g) for g in groups.values()]


def judged(names: Sequence[str], got: Score | Mapping[str, Score]) -> dict[str, Score]:
    """A judge's answer as the scores of the metrics asked of it."""
    return {n: got for n in names} if isinstance(got, Score) else {n: got[n] for n in names}


def _jobs(client: LLMClient, case: Case, names: Sequence[str], counts: JudgeCounts,
          guidance: Mapping[str, Guidance] | None
          ) -> Iterator[tuple[tuple[str, ...], Awaitable[Score | Mapping[str, Score]] | None]]:
    """Each judge asked about ``case`` with the metrics it gives; None for the metrics
    that read the answer when the case has none."""
    for group in by_judge(names):
        if case.no_answer is not None:
            unread = tuple(n for n in group if needs_answer(n))
            if unread:
                yield unread, None
            group = tuple(n for n in group if n not in unread)
        guide = guidance or {}
        if group:
            yield group, _spoken(case.language, judge_call(
                client, group, case, counts, next((guide[n] for n in group if n in guide),
                                                  None)))


async def _spoken(language: str | None, job: Awaitable[T]) -> T:
    """``job`` judged in the case's language: the one place a judge of a run learns
    it (:func:`ragmark.judges.language.speaking`)."""
    with speaking(language):
        return await job


async def judge_metric(client: LLMClient, name: str, case: Case, counts: JudgeCounts,
                       guidance: Guidance | None = None) -> Score:
    """One judge metric of one case (judge-eval asks them one at a time)."""
    ((group, job),) = _jobs(client, case, [name], counts,
                            None if guidance is None else {name: guidance})
    return Score.missing(NO_ANSWER) if job is None else judged(group, await job)[name]


async def _judge_all(
    client: LLMClient,
    cases: Sequence[Case],
    names: Sequence[str],
    counts: JudgeCounts,
    advance: Callable[[int], None],
    guidance: Mapping[str, Guidance] | None = None,
) -> list[dict[str, Score]]:
    ok, reason = await client.probe()
    if not ok:
        raise _Unreachable(reason)
    out: list[dict[str, Score]] = [{} for _ in cases]

    async def one(i: int, group: tuple[str, ...],
                  job: Awaitable[Score | Mapping[str, Score]]) -> None:
        out[i].update(judged(group, await job))
        advance(len(group))

    tasks = []
    for i, case in enumerate(cases):
        for group, job in _jobs(client, case, names, counts, guidance):
            if job is None:
                out[i].update({n: Score.missing(NO_ANSWER) for n in group})
                advance(len(group))
            else:
                tasks.append(one(i, group, job))
    try:
        await asyncio.gather(*tasks)
    finally:
        await client.aclose()
    return [{n: o[n] for n in names} for o in out]  # in the order asked


class _Unreachable(Exception):
    pass


async def judge_async(
    cases: Sequence[Case],
    names: Sequence[str],
    settings: LLMSettings | None,
    *,
    require: bool = False,
    advance: Callable[[int], None] = lambda n: None,
    guidance: Mapping[str, Guidance] | None = None,
) -> tuple[list[dict[str, Score]], list[str], dict[str, Any]]:
    """Per-question judge scores, notes for the report, and the LLM accounting: every
    (case, judge) asked concurrently on one client (its concurrency limit, retries and
    call cache), each judge once a case for all the metrics it gives."""
    if not names:
        return [{} for _ in cases], [], {}
    if settings is None:
        why = f"no LLM endpoint configured ({SET_ENDPOINT})"
        if require:
            raise ConfigError(f"--require-llm: {why}")
        return _skipped(cases, names, why)
    client = open_client(settings)
    counts = JudgeCounts()
    try:
        scores = await _judge_all(client, cases, names, counts, advance, guidance)
    except _Unreachable as e:
        why = f"the LLM endpoint did not answer: {e}"
        if require:
            raise ConfigError(f"--require-llm: {why}") from None
        return _skipped(cases, names, why)
    summary = llm_summary(settings, client, counts)
    steps = written_steps(names, client)
    if steps:  # a criterion's steps the judge's model wrote: kept with the run
        summary["criterion_steps"] = steps
    return (scores, cut_notes(counts) + claim_notes(scores) + hard_notes(client), summary)


def hard_notes(client: Any) -> list[str]:
    """The note, once a run, that the endpoint gave no log-probabilities: those judge
    answers' verdicts are hard (0 or 1), not probability-weighted."""
    hard = client.stats.hard
    if not hard:
        return []
    refused = getattr(client.send, "refused", None)
    why = f" (it refused them: {refused})" if refused else ""
    return [f"{hard} judge answer{'s' if hard != 1 else ''} came without log-probabilities "
            f"from {client.settings.display_url}{why}: their verdicts are hard (0 or 1), "
            "not weighted by the judge's own probability"]


def claim_notes(scores: Sequence[dict[str, Score]]) -> list[str]:
    """How many judge calls the claim diagnostics took a question (each question's are
    on its claim metrics' details)."""
    calls = [next((s.details["calls"] for n, s in q.items() if n in CLAIM_METRICS
                   and "calls" in s.details), None) for q in scores]
    done = [c for c in calls if c is not None]
    if not done:
        return []
    return [f"claim diagnostics: {sum(done) / len(done):.1f} judge calls a question over "
            f"{len(done)} question{'s' if len(done) != 1 else ''} (the claims of the answer "
            "and of the expected answer, one call a retrieved chunk, two cross-checks; "
            "re-asks included, answers from the cache too)"]


def cut_notes(counts: JudgeCounts) -> list[str]:
    """The notes that say how many judge calls had their texts cut to fit the window,
    and in how many an alignment's examples were shortened or dropped."""
    out = []
    if counts.cut:
        out.append(
            f"{counts.cut} of {counts.asked} judge calls did not fit the model's context "
            f"window of {counts.window:,} tokens with their whole texts: the texts they "
            "judge were cut to fit (marked in the prompt), so those verdicts saw less than "
            "was retrieved. A model with a larger window (or --llm-context-window, when the "
            "server has one) judges them whole")
    if counts.guidance_cut:
        out.append(
            f"the alignment's examples were shortened to fit the model's context window in "
            f"{counts.guidance_cut} of {counts.asked} judge calls "
            f"({counts.examples_shortened} examples shortened, {counts.examples_dropped} "
            "dropped)")
    return out


def _skipped(
    records: Sequence[Case], names: Sequence[str], why: str
) -> tuple[list[dict[str, Score]], list[str], dict[str, Any]]:
    scores = [{n: Score.missing(why) for n in names} for _ in records]
    return scores, [f"judge metrics ({', '.join(names)}) skipped: {why}"], {}


_CLAIMS_SYSTEM = tuple(p.instruction for p, _ in (
    claims_call("q", "a"), claims_call("q", "a", (("q0", "a0"),))))
"""How the system messages of faithfulness's claim extraction begin (alone, in a
conversation; a stated language adds to the end)."""


def _follow_ups(dry: DryClient, e: NotCached, rec: Case, fresh: bool) -> None:
    """Count the calls that may follow a judge call whose answer is unknown: a re-ask
    when the answer is unusable (not after a re-ask), and after faithfulness's claims the
    check of those claims (made, unless the answer has no claims), itself re-askable.
    ``fresh``: the first time this metric made this call (the claim metrics make the
    same extraction, followed by their own checks)."""
    if not e.shared:  # else the same call as an earlier one, with its re-ask
        dry.follow(0, 0 if is_reask(e.messages) else 1, estimate_tokens(e.messages) + 120)
    if fresh and str(e.messages[0]["content"]).startswith(_CLAIMS_SYSTEM):
        check = (sum(len(c) for c in rec.contexts) + len(rec.answer)) // 4 + 400
        dry.follow(1, 1, check)


def estimate(
    cases: Sequence[Case],
    names: Sequence[str],
    settings: LLMSettings | None,
    guidance: Mapping[str, Guidance] | None = None,
) -> dict[str, Any]:
    """A dry run: the judge calls a run would make, without calling anything.

    The real judge code runs against a client that answers only from the cache
    (:class:`~ragmark.llm.dry.DryClient`), so ``cached`` is what the run will find there
    and everything that follows a cached answer is followed exactly. ``calls``: the calls
    not in the cache, with faithfulness's check of the claims after an unknown claims
    answer; ``at_most`` adds the re-asks an unusable answer would cost. Tokens are
    characters / 4 (a follow-up's are estimated from the answer and contexts); the cost
    (prompt tokens only) needs prices in the settings.
    """
    if settings is None:
        return {"endpoint": None, "note": "no LLM endpoint configured: nothing would be called"}
    dry = dry_client(settings)

    followed: set[tuple[str, str]] = set()

    async def walk() -> None:  # one at a time, so repeats are found in a fixed order
        for case in cases:
            for group, job in _jobs(dry, case, names, JudgeCounts(),  # type: ignore[arg-type]
                                    guidance):
                if job is None:
                    continue
                try:
                    await job
                except NotCached as e:
                    key = (group[0], json.dumps(e.messages, sort_keys=True))
                    _follow_ups(dry, e, case, key not in followed)
                    followed.add(key)

    run_sync(walk())
    return {**dry.summary(), "questions": len(cases)}


async def refusals_async(samples: Sequence[Sample], answers: Sequence[str],
                         settings: LLMSettings | None, advance: Callable[[int], None],
                         language: str | None = None
                         ) -> tuple[list[bool | None], list[str], dict[str, Any]]:
    """The refusal judge's verdict on each answer (True: it declines the question; an
    empty answer without a call; None where the judge gave no verdict), notes, and the
    LLM accounting. Without an endpoint, or one that does not answer, every verdict is
    None and a note says the phrases decide."""
    fallback = "refusals were told by the phrases and patterns"
    if settings is None:
        return [None] * len(answers), [f"refusal judge skipped: no LLM endpoint configured; "
                                       f"{fallback}"], {}
    client = open_client(settings)
    counts = JudgeCounts()
    try:
        ok, reason = await client.probe()
        if not ok:
            return [None] * len(answers), [
                f"refusal judge skipped: the LLM endpoint did not answer: {reason}; "
                f"{fallback}"], {}

        async def one(s: Sample, answer: str) -> bool | None:
            if not answer.strip():
                advance(1)
                return True
            with speaking(language):
                got = await ask(client, REFUSAL_PROMPT, RefusalInput(
                    question=s.question, answer=answer), counts=counts)
            advance(1)
            return None if isinstance(got, JudgeFailure) else got.refused

        flags = list(await asyncio.gather(*(one(s, a) for s, a in zip(
            samples, answers, strict=True))))
    finally:
        await client.aclose()
    notes = []
    unjudged = sum(f is None for f in flags)
    if unjudged:
        notes.append(f"refusal judge: no verdict on {unjudged} of {len(flags)} answers; "
                     f"for those, {fallback}")
    return flags, notes, llm_summary(settings, client, counts)
