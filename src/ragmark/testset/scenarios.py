"""Scenarios for ``ragmark simulate``, written from a corpus (``ragmark testset
--scenarios``): one passage each, drawn as the questions' are (spread over the
documents before any is used twice). The model writes what a person wants to find out
(in their words, never quoting the passage), who they are, what they already know, the
outcome that would satisfy them, and quotes copied from the passage that hold it. A
scenario is kept when at least one of its quotes really occurs in the passage (the check
the question writer uses; the others are dropped and counted: the 1.5B model often
copied one sentence and paraphrased another) and it is not a near-duplicate of one kept
(word overlap); the quotes found become the scenario's ``ground_truth_contexts``, the
answer its ``expected_answer``; a fact that states the answer is dropped (counted), a
scenario that states it is rejected (the 1.5B model wrote "You want to know how X does
Y" with "X does Y" the answer, and the simulated user then copied it).
Rounds go on until ``size`` are kept or ``2 * size`` were written.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from ragmark.aio import run_sync
from ragmark.chunking import Chunker
from ragmark.errors import ConfigError
from ragmark.judges.prompt import CALL_FAILED, JudgeCounts, JudgeFailure, Prompt, ask
from ragmark.llm import LLMClient
from ragmark.llm.accounting import llm_summary
from ragmark.progress import NullProgress
from ragmark.testset.checks import (
    MIN_QUOTE_CHARS,
    clean_quote,
    locate_quote,
    near_duplicate,
    question_words,
)
from ragmark.testset.sampling import Passage, Sampler
from ragmark.text import content_tokens, normalise
from ragmark.types import Corpus

REASONS = {
    "call_failed": "the call failed",
    "invalid_output": "invalid output after a re-ask",
    "quote_too_short": f"quote under {MIN_QUOTE_CHARS} characters",
    "quote_not_in_source": "quote not found in its source",
    "duplicate_scenario": "near-duplicate scenario",
    "scenario_states_answer": "the scenario states its answer",
}


class ScenarioSource(BaseModel):
    passage: str


class WrittenScenario(BaseModel):
    scenario: str = Field(min_length=1, description="what the person wants, addressed as you")
    user: str = Field(min_length=1, description="who they are and how they write")
    facts: list[str] = Field(description="what they already know and may be asked")
    expected_outcome: str = Field(min_length=1)
    answer: str = Field(min_length=1, description="the answer that satisfies them")
    quotes: list[str] = Field(description="copied from the passage, holding the answer")


SCENARIO_PROMPT: Prompt[ScenarioSource, WrittenScenario] = Prompt(
    name="testset.scenario",
    instruction=(
        "You write scenarios for testing a chat assistant that answers from a document "
        "collection. From the passage, write ONE scenario of a person who wants to find "
        "out something the passage answers, and who has not read it: scenario, what they "
        "want, addressed as 'You want to ...', naming the subject, never quoting the "
        "passage or saying 'the passage'; user, who they are and how they write, in one "
        "sentence; facts, one or two things they already know and may be asked, never the "
        "answer (may be empty); expected_outcome, what the assistant must tell them, as "
        "'The assistant says ...'; answer, that information (the scenario never holds "
        "it), complete and short; quotes, one or two passages copied from the passage "
        "character for character (20 to 300 characters, no ellipsis) that hold the "
        "answer."
    ),
    input_model=ScenarioSource,
    output_model=WrittenScenario,
    max_tokens=400,
    examples=((
        ScenarioSource(passage="The Vasa was a Swedish warship that sank on its maiden "
                               "voyage in 1628, less than a nautical mile out of Stockholm "
                               "harbour. It was raised in 1961."),
        WrittenScenario(
            scenario="You want to know when the Swedish warship Vasa sank and whether it "
                     "was ever recovered.",
            user="A student preparing a museum visit, who writes short informal questions.",
            facts=["You know the Vasa is in a museum in Stockholm."],
            expected_outcome="The assistant says the Vasa sank in 1628 on its maiden "
                             "voyage and was raised in 1961.",
            answer="It sank in 1628 on its maiden voyage and was raised in 1961.",
            quotes=["sank on its maiden voyage in 1628", "It was raised in 1961."])),),
)


@dataclass
class _Kept:
    items: list[dict[str, Any]] = field(default_factory=list)
    words: list[frozenset[str]] = field(default_factory=list)
    rejected: list[dict[str, Any]] = field(default_factory=list)
    quotes_dropped: int = 0
    facts_dropped: int = 0


GIVES_AWAY = 0.7
"""A fact holding this share of the answer's content words gives the answer away (the
user would not ask): it is dropped."""


def _gives_away(fact: str, answer: set[str]) -> bool:
    """Whether ``fact`` states the answer.

    >>> answer = set(content_tokens("Fra-1 regulates IL-6 in macrophages."))
    >>> _gives_away("You know Fra-1 regulates IL-6 in macrophages.", answer)
    True
    >>> _gives_away("You work on macrophages.", answer)
    False
    """
    return bool(answer) and len(set(content_tokens(fact)) & answer) >= GIVES_AWAY * len(answer)


def check_scenario(kept: _Kept, number: int, source: Passage,
                   got: WrittenScenario | JudgeFailure) -> None:
    """Keep ``got`` as a scenario, or record why not."""
    def reject(reason: str, detail: str) -> None:
        kept.rejected.append({"candidate": number, "source_ids": [source.doc_id],
                              "reason": reason, "detail": detail})

    if isinstance(got, JudgeFailure):
        reject("call_failed" if got.code == CALL_FAILED else "invalid_output", got.reason)
        return
    quotes = [clean_quote(q) for q in got.quotes]
    spans = [s for s in (locate_quote(q, source.text) for q in quotes) if s is not None]
    if not spans:
        short = [q for q in quotes if len(normalise(q)) < MIN_QUOTE_CHARS]
        if short or not quotes:
            reject("quote_too_short", f"quote {short[0]!r}" if short else "no quote")
        else:
            reject("quote_not_in_source", "quotes " + "; ".join(repr(q) for q in quotes))
        return
    answer = set(content_tokens(got.answer))
    if _gives_away(got.scenario, answer):  # the simulated user would copy it
        reject("scenario_states_answer", f"{got.scenario!r} holds {got.answer!r}")
        return
    words = question_words(got.scenario)
    dup = near_duplicate(words, kept.words)
    if dup is not None:
        reject("duplicate_scenario", f"{got.scenario!r} repeats "
                                     f"{kept.items[dup]['scenario']!r}")
        return
    kept.words.append(words)
    kept.quotes_dropped += len(quotes) - len(spans)
    facts = [f.strip() for f in got.facts if f.strip() and not _gives_away(f, answer)]
    kept.facts_dropped += sum(1 for f in got.facts if f.strip()) - len(facts)
    kept.items.append({
        "id": f"s{len(kept.items) + 1}", "scenario": got.scenario.strip(),
        "expected_outcome": got.expected_outcome.strip(), "user": got.user.strip(),
        **({"facts": facts} if facts else {}), "expected_answer": got.answer.strip(),
        "ground_truth_contexts": list(dict.fromkeys(spans)),
        "source_ids": [source.doc_id]})


def generate_scenarios(corpus: Corpus, chunker: Chunker, size: int, client: LLMClient, *,
                       seed: int = 0, max_chars: int = 4000, progress: Any = None
                       ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Up to ``size`` checked scenarios from ``corpus`` and the report of how they were
    written (generated, kept, rejected by reason, the LLM calls)."""
    prog = progress or NullProgress()
    client.settings.api_key()  # a missing key variable stops here, not per call
    ok, why = run_sync(client.probe())
    if not ok:
        raise ConfigError(f"the LLM endpoint did not answer: {why}")
    sampler = Sampler(corpus, chunker, seed, max_chars)
    kept, counts, generated, rounds = _Kept(), JudgeCounts(), 0, 0
    while len(kept.items) < size and generated < 2 * size:
        want = min(size - len(kept.items) + (size - len(kept.items)) // 4,
                   2 * size - generated)
        drawn = [p for p in (sampler.draw("factual") for _ in range(want)) if p]
        if not drawn:
            break
        rounds += 1
        with prog.task(f"writing scenarios (round {rounds})", len(drawn)) as advance:
            got = run_sync(_ask_all(client, [p[0] for p in drawn], counts, advance))
        for p, g in zip(drawn, got, strict=True):
            generated += 1
            if len(kept.items) < size:
                check_scenario(kept, generated, p[0], g)
    reasons = Counter(r["reason"] for r in kept.rejected)
    return kept.items, {
        "corpus": corpus.source, "documents": len(corpus.documents), "seed": seed,
        "size": size, "generated": generated, "kept": len(kept.items),
        "rejected": len(kept.rejected), "quotes_dropped": kept.quotes_dropped,
        "facts_dropped": kept.facts_dropped,
        "rejected_by_reason": {k: reasons[k] for k in REASONS if reasons[k]},
        "rounds": rounds, "notes": ([] if len(kept.items) >= size else [
            f"only {len(kept.items)} of {size} scenarios: "
            + ("the corpus has no more passages" if generated < 2 * size
               else f"the candidate limit ({2 * size}) was reached")]),
        "llm": llm_summary(client.settings, client, counts), "rejections": kept.rejected}


async def _ask_all(client: LLMClient, passages: list[Passage], counts: JudgeCounts,
                   advance: Any) -> list[WrittenScenario | JudgeFailure]:
    async def one(p: Passage) -> WrittenScenario | JudgeFailure:
        try:
            return await ask(client, SCENARIO_PROMPT, ScenarioSource(passage=p.text),
                             counts=counts)
        finally:
            advance(1)

    try:
        return list(await asyncio.gather(*(one(p) for p in passages)))
    finally:
        await client.aclose()
