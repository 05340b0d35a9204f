"""Claim-level diagnostics, per question: RAGChecker's metrics (see
:mod:`ragmark.judges.claim_scores` for the definitions) and a blame label.

The calls for one question, all made once however many of the metrics are asked:

1. the claims of the answer and of the expected answer (faithfulness's extraction
   prompt, so its answer is shared with faithfulness through the call cache);
2. one call per retrieved chunk with every claim of both sides (entailment,
   neutral or contradiction for each, the count held exactly by the schema);
3. the answer's claims against the expected answer, and the expected answer's claims
   against the answer (one call each).

So ``2 + chunks + 2`` calls a question, where RAGChecker (claims checked five to a call
against each reference, each side on its own) makes ``2 + (1 + chunks) * (ceil(answer
claims / 5) + ceil(expected claims / 5))``.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from pydantic import BaseModel, Field

from ragmark.case import Case
from ragmark.judges.claim_scores import METRICS, Checked, claim_scores
from ragmark.judges.faithfulness import claims_call
from ragmark.judges.prompt import ChatClient, JudgeCounts, JudgeFailure, Numbered, Prompt
from ragmark.judges.reference import NO_REFERENCE
from ragmark.judges.spec import judge_spec
from ragmark.judges.unknown import Unknown, ask_or_unknown
from ragmark.types import Score, lower_better

GROUP = "claims"
"""The name that asks for every claim-level metric at once (``--metrics claims``)."""


class CheckInput(BaseModel):
    question: str
    passage: str
    claim: list[str]


class ClaimVerdict(BaseModel):
    claim: int = Field(description="the number of the claim, from 1")
    verdict: Literal["entailment", "neutral", "contradiction"]


class CheckOutput(BaseModel):
    verdicts: list[ClaimVerdict]


CHECK_PROMPT: Prompt[CheckInput, CheckOutput] = Prompt(
    name="claims.check",
    instruction=(
        "For each numbered claim, say what the passage makes of it: entailment when the "
        "passage states the claim or it follows directly from the passage, contradiction "
        "when the passage says otherwise, neutral when the passage does not settle it. "
        "Judge only against the passage, never from your own knowledge; the question only "
        "helps to read the claims. One verdict per claim, with the claim's number."
    ),
    input_model=CheckInput,
    output_model=CheckOutput,
    examples=(
        (
            CheckInput(
                question="Where does the Danube flow?",
                passage="The Danube flows through Vienna and Budapest and empties into "
                        "the Black Sea.",
                claim=["The Danube flows through Budapest.",
                       "The Danube empties into the North Sea.",
                       "The Danube is the second-longest river in Europe."],
            ),
            CheckOutput(verdicts=[ClaimVerdict(claim=1, verdict="entailment"),
                                  ClaimVerdict(claim=2, verdict="contradiction"),
                                  ClaimVerdict(claim=3, verdict="neutral")]),
        ),
    ),
    numbered=Numbered("verdicts", "claim", "claim"),
)


async def _claims(client: ChatClient, case: Case, text: str | None, counts: JudgeCounts,
                  none: str) -> list[str] | str | JudgeFailure | Unknown:
    if text is None or not text.strip():
        return none
    prompt, item = claims_call(case.question, text, case.history)
    got = await ask_or_unknown(client, prompt, item, counts)
    if isinstance(got, JudgeFailure | Unknown):
        return got  # type: ignore[no-any-return]
    return [c.strip() for c in got.claims if c.strip()]


async def _check(client: ChatClient, case: Case, passage: str, claims: list[str],
                 counts: JudgeCounts) -> list[bool] | JudgeFailure | Unknown:
    """For each claim, whether ``passage`` entails it (a blank passage entails nothing and
    is not asked)."""
    if not claims or not passage.strip():
        return [False] * len(claims)
    got = await ask_or_unknown(client, CHECK_PROMPT,
                     CheckInput(question=case.question, passage=passage, claim=claims), counts)
    if isinstance(got, JudgeFailure | Unknown):
        return got  # type: ignore[no-any-return]
    by = {v.claim: v.verdict == "entailment" for v in got.verdicts}
    return [by[i] for i in range(1, len(claims) + 1)]


def _sure_follow_ups(client: ChatClient, case: Case) -> None:
    """A dry run whose claims are unknown: the chunk checks and cross-checks will follow
    (each may be re-asked once)."""
    chunks = [c for c in case.contexts if c.strip()]
    cross = int(bool(case.answer.strip())) + int(bool((case.expected_answer or "").strip()))
    n = len(chunks) + (cross if cross == 2 else 0)
    each = (sum(len(c) for c in chunks) // max(len(chunks), 1) + len(case.answer)
            + len(case.expected_answer or "")) // 4 + 400
    client.follow(n, n, each)  # type: ignore[attr-defined]


async def diagnose(client: ChatClient, case: Case,
                   counts: JudgeCounts | None = None) -> tuple[Checked, int]:
    """The claims and verdicts of one question, and the judge calls it took."""
    mine = JudgeCounts()
    expected = case.expected_answer
    a, e = await asyncio.gather(
        _claims(client, case, case.answer, mine, "empty answer"),
        _claims(client, case, expected, mine, NO_REFERENCE))
    why: dict[str, str] = {}
    raw: dict[str, str | None] = {}
    if isinstance(a, Unknown) or isinstance(e, Unknown):
        _sure_follow_ups(client, case)
        dry = "dry run: the claims are not known yet"
        return Checked(None, None, len(case.contexts), why=dict.fromkeys(
            ("answer_claims", "expected_claims"), dry)), 0

    def known(side: str, got: Any) -> list[str] | None:
        if isinstance(got, JudgeFailure):
            why[side], raw[side] = got.reason, got.raw
            return None
        if isinstance(got, str):
            why[side] = got
            return None
        return list(got)

    answer_claims, expected_claims = known("answer_claims", a), known("expected_claims", e)
    both = (answer_claims or []) + (expected_claims or [])
    n_a = len(answer_claims or [])
    jobs = [_check(client, case, chunk, both, mine) for chunk in case.contexts]
    cross_a = (_check(client, case, expected or "", answer_claims, mine)
               if answer_claims is not None and expected else None)
    cross_e = (_check(client, case, case.answer, expected_claims, mine)
               if expected_claims is not None and case.answer.strip() else None)
    got = await asyncio.gather(*jobs, *(j for j in (cross_a, cross_e) if j is not None))
    by_chunk, rest = got[:len(jobs)], list(got[len(jobs):])
    out_a = rest.pop(0) if cross_a is not None else None
    out_e = rest.pop(0) if cross_e is not None else None
    failed = next((g for g in by_chunk if not isinstance(g, list)), None)
    a_by = e_by = None
    if failed is None:
        cols = [g for g in by_chunk if isinstance(g, list)]
        if answer_claims is not None:
            a_by = [[col[j] for col in cols] for j in range(n_a)]
        if expected_claims is not None:
            e_by = [[col[n_a + i] for col in cols] for i in range(len(expected_claims))]
    for piece, lack in (("answer_by_chunk", answer_claims), ("expected_by_chunk",
                                                             expected_claims)):
        if lack is None:
            why[piece] = why["answer_claims" if piece.startswith("answer")
                             else "expected_claims"]
        elif failed is not None:
            why[piece] = _reason(failed)
            raw[piece] = failed.raw if isinstance(failed, JudgeFailure) else None
    for piece, res, own, other in (
            ("answer_in_expected", out_a, "answer_claims", "expected_claims"),
            ("expected_in_answer", out_e, "expected_claims", "answer_claims")):
        if isinstance(res, JudgeFailure | Unknown):
            why[piece] = _reason(res)
            raw[piece] = res.raw if isinstance(res, JudgeFailure) else None
        elif res is None:  # its claims are not known, or the other side is not there
            why[piece] = why.get(own) or why.get(other) or (
                NO_REFERENCE if other == "expected_claims" else "empty answer")
    checked = Checked(
        answer_claims, expected_claims, len(case.contexts), a_by, e_by,
        out_a if isinstance(out_a, list) else None,
        out_e if isinstance(out_e, list) else None, why,
        {k: v for k, v in raw.items() if k in why})
    if counts is not None:
        counts.add(mine)
    return checked, mine.asked + mine.reasked


def _reason(got: Any) -> str:
    if isinstance(got, JudgeFailure):
        return got.reason
    return "dry run: the verdicts are not known yet"


async def claims_of(client: ChatClient, case: Case, counts: JudgeCounts) -> dict[str, Score]:
    """Every claim metric of one case, from one diagnosis (the judge of the claim
    metrics: asked once a case, whichever of them are asked)."""
    checked, calls = await diagnose(client, case, counts)
    return claim_scores(checked, calls)


_SUMMARY = {
    "claim_precision": "answer claims the expected answer entails / answer claims",
    "claim_recall": "expected-answer claims the answer entails / expected-answer claims",
    "claim_f1": "harmonic mean of claim_precision and claim_recall",
    "claim_context_recall": "expected-answer claims some retrieved chunk entails / "
                            "expected-answer claims",
    "claim_context_precision": "chunks that entail an expected-answer claim / chunks",
    "context_utilization": "expected-answer claims in the chunks the answer also makes / "
                           "expected-answer claims in the chunks",
    "noise_sensitivity_relevant": "incorrect answer claims a relevant chunk entails / "
                                  "answer claims",
    "noise_sensitivity_irrelevant": "incorrect answer claims only an irrelevant chunk "
                                    "entails / answer claims",
    "hallucination": "incorrect answer claims no chunk entails / answer claims",
    "self_knowledge": "correct answer claims no chunk entails / answer claims",
    "claim_faithfulness": "answer claims some chunk entails / answer claims",
}
_LABEL = {n: n.replace("_", " ").capitalize() for n in METRICS} | {
    "claim_f1": "Claim F1", "claim_faithfulness": "Claim faithfulness"}
_NEEDS = {n: ("answer", "contexts", "expected_answer") for n in METRICS} | {
    "claim_context_recall": ("contexts", "expected_answer"),
    "claim_context_precision": ("contexts", "expected_answer"),
    "claim_faithfulness": ("answer", "contexts")}

_ASK = {
    "claim_precision": "is everything the answer states also stated by the expected answer?",
    "claim_recall": "does the answer state everything the expected answer states?",
    "claim_f1": "does the answer state what the expected answer states, and nothing else?",
    "claim_context_recall": "do the retrieved chunks hold everything the expected answer "
                            "states?",
    "claim_context_precision": "does every retrieved chunk hold something the expected "
                               "answer states?",
    "context_utilization": "does the answer use what the chunks hold of the expected "
                           "answer?",
    "noise_sensitivity_relevant": "does the answer state something wrong that a relevant "
                                  "chunk holds?",
    "noise_sensitivity_irrelevant": "does the answer state something wrong that only an "
                                    "irrelevant chunk holds?",
    "hallucination": "does the answer state something wrong that no chunk holds?",
    "self_knowledge": "does the answer state something right that no chunk holds?",
    "claim_faithfulness": "is everything the answer states supported by the chunks?",
}
"""What people answer yes or no to about each claim-level metric."""

SPECS = lower_better(tuple(
    judge_spec(n, _SUMMARY[n] + " (RAGChecker)", _LABEL[n], _NEEDS[n], claims_of,
               ask=_ASK[n], group=GROUP)
    for n in METRICS), frozenset({"noise_sensitivity_relevant", "noise_sensitivity_irrelevant",
                                  "hallucination", "self_knowledge"}))  # RAGChecker's arrows
