"""Faithfulness: the share of an answer's claims that the retrieved contexts support
(claims extracted by one prompt, all checked against the contexts by a second)."""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from typing import Any

from pydantic import BaseModel, Field

from ragmark.case import Case
from ragmark.judges.odds import numbered_chances
from ragmark.judges.prompt import (
    ChatClient,
    JudgeCounts,
    JudgeFailure,
    Listed,
    Numbered,
    Prompt,
    ask,
    ask_weighed,
    in_order,
)
from ragmark.judges.spec import judge_spec, turn_texts
from ragmark.text import content_tokens
from ragmark.types import Score


class ClaimsInput(BaseModel):
    question: str
    answer: str


class ClaimsOutput(BaseModel):
    claims: list[str]


class Verdict(BaseModel):
    claim: int = Field(description="the number of the claim, from 1")
    supported: bool


class VerifyInput(BaseModel):
    context: list[str]
    claim: list[str]


class VerifyOutput(BaseModel):
    verdicts: list[Verdict]


CLAIMS_PROMPT: Prompt[ClaimsInput, ClaimsOutput] = Prompt(
    name="faithfulness.claims",
    instruction=(
        "Break the answer into its factual claims: short, self-contained statements that "
        "can each be checked on their own (replace pronouns with what they refer to). Use "
        "the question only to understand the answer. Leave out greetings, hedges and "
        "statements that assert nothing. An answer that asserts nothing has no claims."
    ),
    input_model=ClaimsInput,
    output_model=ClaimsOutput,
    listed=Listed("claims", "answer"),
    examples=(
        (
            ClaimsInput(
                question="Who wrote Dracula and when?",
                answer="Dracula was written by Bram Stoker. He published it in 1897.",
            ),
            ClaimsOutput(
                claims=["Bram Stoker wrote Dracula.", "Bram Stoker published Dracula in 1897."]
            ),
        ),
    ),
    writes="the claims",
)



VERIFY_PROMPT: Prompt[VerifyInput, VerifyOutput] = Prompt(
    name="faithfulness.verify",
    instruction=(
        "Check each numbered claim against the numbered context passages. A claim is "
        "supported only when the passages state it or it follows directly from them; "
        "general knowledge does not count. Give one verdict per claim, with the claim's "
        "number."
    ),
    input_model=VerifyInput,
    output_model=VerifyOutput,
    examples=(
        (
            VerifyInput(
                context=["The Rhine flows through Switzerland, Germany and the Netherlands."],
                claim=["The Rhine flows through Germany.", "The Rhine is 1,230 km long."],
            ),
            VerifyOutput(verdicts=[Verdict(claim=1, supported=True),
                                   Verdict(claim=2, supported=False)]),
        ),
    ),
    numbered=Numbered("verdicts", "claim", "claim"),
)


class TurnClaimsInput(BaseModel):
    conversation: list[str]
    question: str
    answer: str


class TurnVerifyInput(BaseModel):
    conversation: list[str]
    context: list[str]
    claim: list[str]


TURN_CLAIMS_PROMPT: Prompt[TurnClaimsInput, ClaimsOutput] = Prompt(
    name="faithfulness.claims_in_conversation",
    instruction=(
        "The answer is the latest turn of a conversation; the numbered earlier turns come "
        "first. Break the answer into its factual claims: short, self-contained statements "
        "that can each be checked on their own. Replace pronouns and references to earlier "
        "turns with what they refer to, using the conversation. Leave out greetings, hedges "
        "and statements that assert nothing. An answer that asserts nothing has no claims."
    ),
    input_model=TurnClaimsInput,
    output_model=ClaimsOutput,
    listed=Listed("claims", "answer"),
    examples=(
        (
            TurnClaimsInput(
                conversation=["user: Who wrote Dracula?\nassistant: Bram Stoker wrote it."],
                question="When was it published?",
                answer="He published it in 1897.",
            ),
            ClaimsOutput(claims=["Bram Stoker published Dracula in 1897."]),
        ),
    ),
    writes="the claims",
)

TURN_VERIFY_PROMPT: Prompt[TurnVerifyInput, VerifyOutput] = Prompt(
    name="faithfulness.verify_in_conversation",
    instruction=(
        "Check each numbered claim against the numbered context passages and the numbered "
        "earlier turns of the conversation. A claim is supported when the passages state "
        "it or it follows directly from them, or when an earlier turn of the conversation "
        "established it; general knowledge does not count. Give one verdict per claim, "
        "with the claim's number."
    ),
    input_model=TurnVerifyInput,
    output_model=VerifyOutput,
    examples=(
        (
            TurnVerifyInput(
                conversation=["user: Which river flows through Vienna?\nassistant: The "
                              "Danube."],
                context=["The Danube empties into the Black Sea."],
                claim=["The Danube flows through Vienna.",
                       "The Danube empties into the Black Sea.",
                       "The Danube is 2,850 km long."],
            ),
            VerifyOutput(verdicts=[Verdict(claim=1, supported=True),
                                   Verdict(claim=2, supported=True),
                                   Verdict(claim=3, supported=False)]),
        ),
    ),
    numbered=Numbered("verdicts", "claim", "claim"),
)


def claims_call(question: str, answer: str, history: Sequence[tuple[str, str | None]] = ()
                ) -> tuple[Prompt[Any, ClaimsOutput], BaseModel]:
    """The prompt and input that extract the claims of ``answer``: in a conversation
    (``history``, the earlier turns) the one that resolves references to them (the
    claims are written in the data's language, when one is stated: ``writes``)."""
    if history:
        prompt: Prompt[Any, ClaimsOutput] = TURN_CLAIMS_PROMPT
        item: BaseModel = TurnClaimsInput(conversation=turn_texts(history),
                                          question=question, answer=answer)
    else:
        prompt, item = CLAIMS_PROMPT, ClaimsInput(question=question, answer=answer)
    return prompt, item


def supported_share(verdicts: Sequence[bool] | Sequence[float]) -> float:
    """Supported claims / all claims (``verdicts`` must not be empty): with each claim's
    probability of being supported, the expected share.

    >>> supported_share([True, True, False])
    0.6666666666666666
    >>> supported_share([0.9, 0.6, 0.0])
    0.5
    """
    return float(sum(verdicts)) / len(verdicts)


def weighed_details(chances: Sequence[float], hard: Sequence[bool], told: int,
                    hard_value: float) -> dict[str, Any]:
    """What a probability-weighted value keeps beside it: each item's probability, how
    many items had odds, and the hard value (the verdicts as 0 or 1)."""
    if not told:
        return {}
    return {"chances": [round(c, 4) for c in chances], "weighed": told,
            "hard_value": hard_value, "hard": [bool(h) for h in hard]}


ECHO = (0.7, 0.3, 6)
"""A listed claim restates the question, not the text, when at least 70% of its content
words are the question's and at most 30% the text's, the text having at least 6 content
words of its own (a short text, "Yes." or "1889", is read through the question)."""


def restates_question(claim: str, question: str, text: str) -> bool:
    """True when ``claim`` is the question said again rather than a claim of ``text``
    (:data:`ECHO`): a small model lists a question written as a statement (a SciFact
    claim, a search query) among the answer's claims.

    >>> q = "Rare variants have larger effects than common variants."
    >>> text = "GWAS signals need careful follow-up: synthetic associations arise."
    >>> restates_question("Rare variants have larger effects than common variants.", q, text)
    True
    >>> restates_question("Rare variants have larger effects.", q, "Yes.")
    False
    """
    words = set(content_tokens(claim))
    said = set(content_tokens(text))
    at_least, at_most, own = ECHO
    if not words or len(said) < own:
        return False
    asked = len(words & set(content_tokens(question))) / len(words)
    return asked >= at_least and len(words & said) / len(words) <= at_most


async def checked_claims(client: ChatClient, question: str, text: str,
                         contexts: Sequence[str], *, counts: JudgeCounts | None = None,
                         history: Sequence[tuple[str, str | None]] = (),
                         none_found: str
                         ) -> tuple[list[str], list[bool], list[float], int, list[str]] | Score:
    """The claims of ``text`` (an answer to ``question``) and, for each, whether the
    ``contexts`` support it: two calls, the claims extracted, then all checked at once
    (a verdict per claim by its number: no claim restated, no reason, which halved the
    1.5B model's tokens with the same separation on SciFact). Faithfulness asks it of
    the answer, context recall of the expected answer: the same calls, so the client's
    cache answers the second when the texts are the same. The claims, their hard
    verdicts, each one's probability of being supported (the hard verdict where the
    endpoint gives no log-probabilities), how many had one, and the listed claims left
    out because they restate the question (:func:`restates_question`); a missing score
    (``none_found`` when the text has no claim) on failure."""
    prompt, item = claims_call(question, text, history)
    got = await ask(client, prompt, item, counts=counts)
    if isinstance(got, JudgeFailure):
        return got.missing()
    listed = [c.strip() for c in got.claims if c.strip()]
    echoes = [c for c in listed if restates_question(c, question, text)]
    claims = [c for c in listed if c not in echoes]
    if not claims:
        return Score.missing(none_found, claims=[], **left_out_details(echoes))
    if history:
        checked = await ask_weighed(client, TURN_VERIFY_PROMPT, TurnVerifyInput(
            conversation=turn_texts(history), context=list(contexts), claim=claims),
            counts=counts)
    else:
        checked = await ask_weighed(client, VERIFY_PROMPT,
                                    VerifyInput(context=list(contexts), claim=claims),
                                    counts=counts)
    if isinstance(checked, JudgeFailure):
        return checked.missing(claims=claims, **left_out_details(echoes))
    chances, told = numbered_chances(checked, "verdicts", "claim", "supported", len(claims))
    flags = in_order({v.claim: v.supported for v in checked.out.verdicts}, len(claims))
    return claims, flags, chances, told, echoes


def left_out_details(echoes: Sequence[str]) -> dict[str, Any]:
    """The details that name the listed claims left out as the question said again."""
    return {"left_out_as_question": list(echoes)} if echoes else {}


async def faithfulness(
    client: ChatClient,
    question: str,
    answer: str,
    contexts: Sequence[str],
    *,
    counts: JudgeCounts | None = None,
    history: Sequence[tuple[str, str | None]] = (),
) -> Score:
    """Share of the answer's claims that the retrieved ``contexts`` support.

    Two prompts (:func:`checked_claims`): claims extracted from the answer, then all
    claims checked against the contexts. In a conversation (``history``: the earlier
    turns, question and answer) both prompts read the earlier turns too: references to
    them are resolved, and a claim an earlier turn established counts as supported.
    ``details``: ``claims``, ``unsupported`` (claim texts). Missing for an empty answer,
    no context, an answer with no claims, or a judge failure.
    """
    if not answer.strip():
        return Score.missing("empty answer")
    if not any(c.strip() for c in contexts):
        return Score.missing("no retrieved context to check the answer against")
    got = await checked_claims(client, question, answer, contexts, counts=counts,
                               history=history,
                               none_found="the judge found no claims in the answer")
    if isinstance(got, Score):
        return got
    claims, flags, chances, told, echoes = got
    return Score(supported_share(chances), details={
        "claims": claims,
        "unsupported": [c for c, ok in zip(claims, flags, strict=True) if not ok],
        **left_out_details(echoes),
        **weighed_details(chances, flags, told, supported_share(flags))})


def faithfulness_of(client: ChatClient, c: Case, counts: JudgeCounts) -> Awaitable[Score]:
    return faithfulness(client, c.question, c.answer, c.contexts, counts=counts,
                        history=c.history)


SPECS = (
    judge_spec("faithfulness", "claims of the answer supported by the contexts / claims",
               "Faithfulness", ("answer", "contexts"), faithfulness_of,
               ask="is everything the answer states supported by the contexts?",
               verdict_at=1.0),
)
