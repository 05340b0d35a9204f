"""Generating a test set: candidates in rounds, each checked, until the quotas are met.

Each round asks, for every type still short of its quota, for what is missing plus a
quarter (rounded down), interleaving the types; all calls of a round run concurrently
through one :class:`~ragmark.llm.LLMClient` (cache, retries, concurrency limit). The
candidates are then checked in the order they were drawn, so the same seed and cache
give the same set. Rounds stop when every quota is met, when ``max_candidates`` have
been generated (default twice the size), or when the corpus has no more passages.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, get_args

from ragmark.aio import run_sync
from ragmark.chunking import Chunker
from ragmark.errors import ConfigError
from ragmark.judges.prompt import JudgeCounts, JudgeFailure, Message, ask
from ragmark.llm import LLMClient
from ragmark.llm.accounting import llm_summary
from ragmark.llm.dry import estimate_calls
from ragmark.llm.protocol import estimate_tokens
from ragmark.progress import NullProgress
from ragmark.testset.checks import (
    DUPLICATE_COSINE,
    DUPLICATE_JACCARD,
    MIN_QUOTE_CHARS,
    QuoteProblem,
    check_quotes,
    near_duplicate,
    question_words,
    quotas,
)
from ragmark.testset.prompts import (
    DEFAULT_TYPES,
    DOCUMENTS,
    Difficulty,
    Generated,
    SourceInput,
    question_prompt,
)
from ragmark.testset.sampling import Passage, Sampler
from ragmark.types import Corpus

OVERSHOOT = 0.25
"""A round asks for the missing items of a type plus this share of them (rounded down)."""

REASONS = {
    "call_failed": "the call failed",
    "invalid_output": "invalid output after a re-ask",
    "quote_too_short": f"quote under {MIN_QUOTE_CHARS} characters",
    "quote_not_in_source": "quote not found in its source",
    "points_at_source": 'question points at its source ("the passage")',
    "duplicate_question": "near-duplicate question",
    "type_quota_full": "type quota full",
}
"""Why a candidate was rejected: key -> what the console says."""

Advance = Callable[[int], None]


@dataclass(frozen=True)
class TestsetOptions:
    """What to generate: ``size`` items balanced over ``types``; passages cut to
    ``max_chars``; at most ``max_candidates`` candidates (default ``2 * size``)."""

    __test__ = False  # not a pytest test class, despite the name

    size: int
    types: tuple[str, ...] = DEFAULT_TYPES
    seed: int = 0
    max_chars: int = 4000
    max_candidates: int | None = None
    language: str | None = None
    """The language the questions and answers are written in (a code or name; None: as
    the model pleases, usually the documents')."""

    @property
    def cap(self) -> int:
        return self.max_candidates if self.max_candidates is not None else 2 * self.size

    def check(self, corpus: Corpus) -> None:
        """ConfigError for settings that cannot work with ``corpus``."""
        if self.size < 1:
            raise ConfigError(f"--size must be at least 1, got {self.size}")
        if self.cap < self.size:
            raise ConfigError(f"--max-candidates ({self.cap}) must be at least --size "
                              f"({self.size})")
        if self.max_chars < 200:
            raise ConfigError(f"--max-chars must be at least 200, got {self.max_chars}")
        two = [t for t in self.types if DOCUMENTS[t] == 2]
        if two and len(corpus.documents) < 2:
            raise ConfigError(
                f"{' and '.join(two)} questions draw on two documents, but the corpus "
                f"{corpus.source} has only one; leave them out of --types"
            )


@dataclass(frozen=True)
class Candidate:
    """One question to ask for: its number (from 1), round, requested type, sources."""

    number: int
    round: int
    qtype: str
    sources: tuple[Passage, ...]

    def input(self) -> SourceInput:
        return SourceInput(documents=[p.text for p in self.sources])


@dataclass
class TestsetResult:
    """The kept items (context-set objects) and the generation report."""

    __test__ = False

    items: list[dict[str, Any]]
    report: dict[str, Any]


@dataclass
class _State:
    quota: dict[str, int]
    kept: list[dict[str, Any]] = field(default_factory=list)
    words: list[frozenset[str]] = field(default_factory=list)
    by_type: Counter[str] = field(default_factory=Counter)
    rejected: list[dict[str, Any]] = field(default_factory=list)
    exhausted: set[str] = field(default_factory=set)
    generated: int = 0
    embed: Callable[[str], Any] | None = None
    """A question's unit-length embedding: near-duplicates by their cosine too (None:
    by their words alone)."""
    vectors: list[Any] = field(default_factory=list)
    relabelled: Counter[str] = field(default_factory=Counter)
    """Kept questions the model labelled another type than the one asked for ("factual
    as reasoning"): each counts as the type asked for."""

    def need(self) -> dict[str, int]:
        return {t: q - self.by_type[t] for t, q in self.quota.items()
                if q > self.by_type[t] and t not in self.exhausted}


def plan_round(sampler: Sampler, state: _State, types: Sequence[str], cap: int,
               round_no: int) -> list[Candidate]:
    """The candidates of the next round, types interleaved, within the cap."""
    wants = {t: n + int(n * OVERSHOOT) for t, n in state.need().items()}
    out: list[Candidate] = []
    while any(wants.values()) and state.generated + len(out) < cap:
        for t in types:
            if wants.get(t, 0) <= 0 or state.generated + len(out) >= cap:
                continue
            sources = sampler.draw(t)
            if sources is None:
                wants[t] = 0
                state.exhausted.add(t)
                continue
            wants[t] -= 1
            out.append(Candidate(state.generated + len(out) + 1, round_no, t, sources))
    return out


def _reject(state: _State, c: Candidate, reason: str, detail: str) -> None:
    state.rejected.append({"candidate": c.number, "round": c.round, "type": c.qtype,
                           "source_ids": [p.doc_id for p in c.sources], "reason": reason,
                           "detail": detail})


def failure_reason(f: JudgeFailure) -> str:
    """Why a candidate without a usable answer is rejected: a failed call, what the
    prompt's check still found wrong after the re-ask (its code: "quote_not_in_source",
    "points_at_source"), or output that could not be read."""
    return f.code if f.code in REASONS else "invalid_output"


def check_candidate(state: _State, c: Candidate, got: Generated | JudgeFailure) -> None:
    """Keep ``got`` as an item, or record why not."""
    if isinstance(got, JudgeFailure):
        _reject(state, c, failure_reason(got), got.reason)
        return
    spans = check_quotes(got.quotes, [p.text for p in c.sources])
    if isinstance(spans, QuoteProblem):  # the prompt's check lets none through
        _reject(state, c, spans.code, spans.message)
        return
    words = question_words(got.question)
    dup = near_duplicate(words, state.words)
    if dup is not None:
        _reject(state, c, "duplicate_question",
                f"{got.question!r} repeats {state.kept[dup]['question']!r}")
        return
    vector = None if state.embed is None else state.embed(got.question)
    if vector is not None and state.vectors:
        cos = [float(v @ vector) for v in state.vectors]
        best = max(range(len(cos)), key=cos.__getitem__)
        if cos[best] >= DUPLICATE_COSINE:
            _reject(state, c, "duplicate_question", f"{got.question!r} repeats "
                    f"{state.kept[best]['question']!r} (cosine {cos[best]:.2f})")
            return
    if state.by_type[c.qtype] >= state.quota[c.qtype]:
        _reject(state, c, "type_quota_full", f"{c.qtype} already has "
                f"{state.quota[c.qtype]} item(s)")
        return
    state.kept.append({
        "question": got.question,
        "ground_truth_contexts": list(dict.fromkeys(spans)),
        "expected_answer": got.answer,
        "type": c.qtype,
        "difficulty": got.difficulty,
        "source_ids": [p.doc_id for p in c.sources],
    })
    state.words.append(words)
    if vector is not None:
        state.vectors.append(vector)
    state.by_type[c.qtype] += 1
    if got.type != c.qtype:
        state.relabelled[f"{c.qtype} as {got.type}"] += 1


async def _ask_round(client: LLMClient, cands: Sequence[Candidate], counts: JudgeCounts,
                     advance: Advance, language: str | None = None
                     ) -> list[Generated | JudgeFailure]:
    prompts = {t: question_prompt(t, language) for t in {c.qtype for c in cands}}

    async def one(c: Candidate) -> Generated | JudgeFailure:
        try:
            return await ask(client, prompts[c.qtype], c.input(), counts=counts)
        finally:
            advance(1)

    try:
        return list(await asyncio.gather(*(one(c) for c in cands)))
    finally:
        await client.aclose()


def round_messages(cands: Sequence[Candidate], language: str | None = None
                   ) -> list[list[Message]]:
    """The first call of every candidate (what the cache is keyed on)."""
    prompts = {t: question_prompt(t, language) for t in {c.qtype for c in cands}}
    return [prompts[c.qtype].render(c.input()) for c in cands]


def round_params(cands: Sequence[Candidate], language: str | None = None) -> dict[str, Any]:
    """The parameters :func:`ask` sends with those calls (the answer's token cap and
    schema), which the cache key includes."""
    prompts = [question_prompt(t, language) for t in {c.qtype for c in cands}]
    caps = {p.token_cap for p in prompts}
    schemas = {json.dumps(p.schema(), sort_keys=True) for p in prompts}
    out: dict[str, Any] = {"max_tokens": caps.pop()} if len(caps) == 1 else {}
    if len(schemas) == 1:
        out["schema"] = prompts[0].schema()
    return out


def generate_testset(corpus: Corpus, chunker: Chunker, options: TestsetOptions,
                     client: LLMClient, progress: Any = None, *,
                     embed: Callable[[str], Any] | None = None,
                     clusters: Sequence[int] | None = None) -> TestsetResult:
    """Generate a context set from ``corpus`` (passages cut by ``chunker``) through
    ``client``; ``progress`` is a runner Progress (None shows nothing). ``embed``: a
    question's unit embedding (near-duplicates by cosine too); ``clusters``: each
    document's cluster (passages drawn over the clusters in turn)."""
    options.check(corpus)
    prog = progress or NullProgress()
    client.settings.api_key()  # a missing key variable stops here, not per call
    sampler = Sampler(corpus, chunker, options.seed, options.max_chars, clusters)
    state = _State(quota=quotas(options.size, options.types), embed=embed)
    counts = JudgeCounts()
    probed = False
    rounds = 0
    while state.need() and state.generated < options.cap:
        cands = plan_round(sampler, state, options.types, options.cap, rounds + 1)
        if not cands:
            break
        rounds += 1
        if not probed and estimate_calls(client, round_messages(cands, options.language),
                                         **round_params(cands, options.language)).calls:
            ok, why = run_sync(client.probe())
            if not ok:
                raise ConfigError(f"the LLM endpoint did not answer: {why}")
            probed = True
        with prog.task(f"writing questions (round {rounds})", len(cands)) as advance:
            answers = run_sync(_ask_round(client, cands, counts, advance,
                                          options.language))
        state.generated += len(cands)
        for c, got in zip(cands, answers, strict=True):
            check_candidate(state, c, got)
    items = [{"id": f"q{i}", **item} for i, item in enumerate(state.kept, start=1)]
    return TestsetResult(items, _report(corpus, chunker, options, state, rounds, counts,
                                        client))


def _notes(options: TestsetOptions, state: _State) -> list[str]:
    if len(state.kept) >= options.size:
        return []
    short = ", ".join(f"{t} {state.by_type[t]} of {q}" for t, q in state.quota.items()
                      if state.by_type[t] < q)
    why = []
    if state.generated >= options.cap:
        why.append(f"the candidate limit ({options.cap}) was reached")
    if state.exhausted:
        why.append("the corpus has no more passages for " + ", ".join(sorted(state.exhausted)))
    return [f"only {len(state.kept)} of {options.size} items ({short}): " + "; ".join(why)]


def _report(corpus: Corpus, chunker: Chunker, options: TestsetOptions, state: _State,
            rounds: int, counts: JudgeCounts, client: LLMClient) -> dict[str, Any]:
    reasons = Counter(r["reason"] for r in state.rejected)
    s = client.settings
    return {
        "corpus": corpus.source,
        "documents": len(corpus.documents),
        "chunker": chunker.name,
        "seed": options.seed,
        "size": options.size,
        "types": list(options.types),
        "quotas": state.quota,
        "generated": state.generated,
        "kept": len(state.kept),
        "rejected": sum(reasons.values()),
        "rejected_by_reason": {k: reasons[k] for k in REASONS if reasons[k]},
        "kept_by_type": {t: state.by_type[t] for t in options.types},
        "labelled_otherwise": dict(sorted(state.relabelled.items())),
        "kept_by_difficulty": {d: n for d in get_args(Difficulty)
                               if (n := sum(i["difficulty"] == d for i in state.kept))},
        "rounds": rounds,
        "max_candidates": options.cap,
        "duplicate_jaccard": DUPLICATE_JACCARD,
        "notes": _notes(options, state),
        "llm": llm_summary(s, client, counts),
        "rejections": state.rejected,
    }


def estimate_testset(corpus: Corpus, chunker: Chunker, options: TestsetOptions,
                     client: LLMClient, clusters: Sequence[int] | None = None
                     ) -> dict[str, Any]:
    """A dry run: the first round's calls (less those cached), their prompt tokens and
    cost, and the most candidates later rounds may add (``clusters``: as the run draws
    its passages). Calls nothing."""
    options.check(corpus)
    sampler = Sampler(corpus, chunker, options.seed, options.max_chars, clusters)
    state = _State(quota=quotas(options.size, options.types))
    cands = plan_round(sampler, state, options.types, options.cap, 1)
    messages = round_messages(cands, options.language)
    est = estimate_calls(client, messages, **round_params(cands, options.language))
    per_call = sum(map(estimate_tokens, messages)) / len(messages) if messages else 0.0
    s = client.settings
    return {
        "endpoint": s.display_url, "model": s.model,
        "first_round": len(cands), "calls": est.calls, "cached": est.cached,
        "estimated_prompt_tokens": est.prompt_tokens, "estimated_cost": est.cost,
        "max_candidates": options.cap,
        "max_prompt_tokens": round(per_call * options.cap),
    }
