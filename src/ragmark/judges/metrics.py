"""LLM-judged metrics built on typed prompts. Each returns a :class:`~ragmark.types.Score`:
a value, or missing with the reason (and the judge's raw output in ``details``).

The scoring maths (``supported / claims``, rating -> [0, 1]) is in small pure helpers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from ragmark.judges.prompt import ChatClient, JudgeCounts, JudgeFailure, Prompt, ask
from ragmark.types import Score

# ---------------------------------------------------------------- relevance label


class RelevanceInput(BaseModel):
    question: str
    passage: str


class RelevanceOutput(BaseModel):
    relevant: bool


RELEVANCE_INSTRUCTION = (
    "You label search results. You get a question and one passage retrieved from a corpus "
    "of the same domain. Decide whether an answer to the question can be derived from the "
    "passage alone. Answer YES if the passage contains the information needed to answer "
    "the question, NO otherwise (also NO when it is only on the same topic)."
)

# seed 003 used {query} and {document}: accepted as aliases
_ALIASES = {"{query}": "{question}", "{document}": "{passage}"}


def relevance_prompt(template: str | None = None) -> Prompt[RelevanceInput, RelevanceOutput]:
    """The YES/NO relevance-label prompt; ``template`` (with ``{question}`` and
    ``{passage}``, or ``{query}`` and ``{document}``) replaces the default user message."""
    if template is not None:
        for old, new in _ALIASES.items():
            template = template.replace(old, new)
    return Prompt(
        name="relevance_label",
        instruction=RELEVANCE_INSTRUCTION,
        input_model=RelevanceInput,
        output_model=RelevanceOutput,
        examples=(
            (
                RelevanceInput(
                    question="When was the Eiffel Tower completed?",
                    passage="Construction of the tower finished in March 1889, in time "
                    "for the World's Fair.",
                ),
                RelevanceOutput(relevant=True),
            ),
            (
                RelevanceInput(
                    question="How tall is the Eiffel Tower?",
                    passage="Gustave Eiffel's company also built bridges in Portugal.",
                ),
                RelevanceOutput(relevant=False),
            ),
        ),
        output="yes_no",
        template=template,
    )


def _failed(f: JudgeFailure, **details: Any) -> Score:
    return Score.missing(f.reason, raw=f.raw, **details)


async def relevance_label(
    client: ChatClient,
    question: str,
    passage: str,
    *,
    template: str | None = None,
    counts: JudgeCounts | None = None,
) -> Score:
    """1.0 when an answer to ``question`` can be derived from ``passage``, else 0.0
    (temperature 0); missing with the reason when the judge gives no usable answer."""
    prompt = relevance_prompt(template)
    out = await ask(
        client,
        prompt,
        RelevanceInput(question=question, passage=passage),
        counts=counts,
        temperature=0,
    )
    if isinstance(out, JudgeFailure):
        return _failed(out)
    return Score(1.0 if out.relevant else 0.0)


# ---------------------------------------------------------------- faithfulness


class ClaimsInput(BaseModel):
    question: str
    answer: str


class ClaimsOutput(BaseModel):
    claims: list[str]


class Verdict(BaseModel):
    claim: int = Field(description="the number of the claim, from 1")
    supported: bool
    reason: str = ""


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
)


def _check_verdicts(item: VerifyInput, out: VerifyOutput) -> str | None:
    want = set(range(1, len(item.claim) + 1))
    got = [v.claim for v in out.verdicts]
    if sorted(got) != sorted(want):
        return f"expected one verdict for each claim 1..{len(item.claim)}, got claims {got}"
    return None


VERIFY_PROMPT: Prompt[VerifyInput, VerifyOutput] = Prompt(
    name="faithfulness.verify",
    instruction=(
        "Check each numbered claim against the numbered context passages. A claim is "
        "supported only when the passages state it or it follows directly from them; "
        "general knowledge does not count. Give one verdict per claim, with the claim's "
        "number and a short reason."
    ),
    input_model=VerifyInput,
    output_model=VerifyOutput,
    examples=(
        (
            VerifyInput(
                context=["The Rhine flows through Switzerland, Germany and the Netherlands."],
                claim=["The Rhine flows through Germany.", "The Rhine is 1,230 km long."],
            ),
            VerifyOutput(
                verdicts=[
                    Verdict(claim=1, supported=True, reason="stated in passage 1"),
                    Verdict(claim=2, supported=False, reason="no length is given"),
                ]
            ),
        ),
    ),
    check=_check_verdicts,
)


def supported_share(verdicts: Sequence[bool]) -> float:
    """Supported claims / all claims (``verdicts`` must not be empty).

    >>> supported_share([True, True, False])
    0.6666666666666666
    """
    return sum(verdicts) / len(verdicts)


async def faithfulness(
    client: ChatClient,
    question: str,
    answer: str,
    contexts: Sequence[str],
    *,
    counts: JudgeCounts | None = None,
) -> Score:
    """Share of the answer's claims that the retrieved ``contexts`` support.

    Two prompts: claims extracted from the answer, then all claims checked against the
    contexts. ``details``: ``claims``, ``unsupported`` (claim texts), ``reasons``.
    Missing for an empty answer, no context, an answer with no claims, or a judge failure.
    """
    if not answer.strip():
        return Score.missing("empty answer")
    if not any(c.strip() for c in contexts):
        return Score.missing("no retrieved context to check the answer against")
    got = await ask(
        client, CLAIMS_PROMPT, ClaimsInput(question=question, answer=answer), counts=counts
    )
    if isinstance(got, JudgeFailure):
        return _failed(got)
    claims = [c.strip() for c in got.claims if c.strip()]
    if not claims:
        return Score.missing("the judge found no claims in the answer", claims=[])
    checked = await ask(
        client, VERIFY_PROMPT, VerifyInput(context=list(contexts), claim=claims), counts=counts
    )
    if isinstance(checked, JudgeFailure):
        return _failed(checked, claims=claims)
    by_claim = {v.claim: v for v in checked.verdicts}
    flags = [by_claim[i].supported for i in range(1, len(claims) + 1)]
    return Score(
        supported_share(flags),
        details={
            "claims": claims,
            "unsupported": [c for c, ok in zip(claims, flags, strict=True) if not ok],
            "reasons": [by_claim[i].reason for i in range(1, len(claims) + 1)],
        },
    )


# ---------------------------------------------------------------- answer relevance


class Rated(BaseModel):
    rating: int = Field(ge=1, le=5)
    reason: str = ""


def rating_score(rating: int) -> float:
    """A 1-5 rating mapped linearly to [0, 1]: ``(rating - 1) / 4``.

    >>> rating_score(4)
    0.75
    """
    return (rating - 1) / 4


class AnswerRelevanceInput(BaseModel):
    question: str
    answer: str


ANSWER_RELEVANCE_PROMPT: Prompt[AnswerRelevanceInput, Rated] = Prompt(
    name="answer_relevance",
    instruction=(
        "Rate how directly the answer addresses the question, whether or not it is true. "
        "5: answers exactly what was asked; 4: answers it with some unneeded material; "
        "3: answers part of it; 2: on the topic but does not answer; 1: off-topic, evasive "
        "or a refusal. Give the rating (1-5) and a one-sentence reason."
    ),
    input_model=AnswerRelevanceInput,
    output_model=Rated,
    examples=(
        (
            AnswerRelevanceInput(
                question="What is the boiling point of water at sea level?",
                answer="Water is a molecule made of hydrogen and oxygen.",
            ),
            Rated(rating=2, reason="About water, but gives no boiling point."),
        ),
    ),
)


async def answer_relevance(
    client: ChatClient,
    question: str,
    answer: str,
    *,
    counts: JudgeCounts | None = None,
) -> Score:
    """How directly ``answer`` addresses ``question``: a 1-5 judge rating mapped to [0, 1]
    (``details``: ``rating``, ``reason``). Missing for an empty answer or judge failure."""
    if not answer.strip():
        return Score.missing("empty answer")
    out = await ask(
        client,
        ANSWER_RELEVANCE_PROMPT,
        AnswerRelevanceInput(question=question, answer=answer),
        counts=counts,
    )
    if isinstance(out, JudgeFailure):
        return _failed(out)
    return Score(rating_score(out.rating), details={"rating": out.rating, "reason": out.reason})


# ---------------------------------------------------------------- context relevance


class ContextRelevanceInput(BaseModel):
    question: str
    context: list[str]


class PassageVerdict(BaseModel):
    passage: int = Field(description="the number of the passage, from 1")
    relevant: bool


class ContextRelevanceOutput(BaseModel):
    verdicts: list[PassageVerdict]


def _check_passages(item: ContextRelevanceInput, out: ContextRelevanceOutput) -> str | None:
    got = sorted(v.passage for v in out.verdicts)
    if got != list(range(1, len(item.context) + 1)):
        return f"expected one verdict for each passage 1..{len(item.context)}, got {got}"
    return None


CONTEXT_RELEVANCE_PROMPT: Prompt[ContextRelevanceInput, ContextRelevanceOutput] = Prompt(
    name="context_relevance",
    instruction=(
        "For each numbered context passage, decide whether it contains information that "
        "helps answer the question (relevant: true) or not (relevant: false). Give one "
        "verdict per passage, with the passage's number."
    ),
    input_model=ContextRelevanceInput,
    output_model=ContextRelevanceOutput,
    check=_check_passages,
)


async def context_relevance(
    client: ChatClient,
    question: str,
    contexts: Sequence[str],
    *,
    counts: JudgeCounts | None = None,
) -> Score:
    """Share of the retrieved ``contexts`` that help answer ``question`` (``details``:
    ``irrelevant`` passage numbers, from 1). Missing with no context or a judge failure."""
    if not contexts:
        return Score.missing("no retrieved context")
    out = await ask(
        client,
        CONTEXT_RELEVANCE_PROMPT,
        ContextRelevanceInput(question=question, context=list(contexts)),
        counts=counts,
    )
    if isinstance(out, JudgeFailure):
        return _failed(out)
    flags = {v.passage: v.relevant for v in out.verdicts}
    ordered = [flags[i] for i in range(1, len(contexts) + 1)]
    return Score(
        supported_share(ordered),
        details={"irrelevant": [i for i, ok in enumerate(ordered, start=1) if not ok]},
    )


# ---------------------------------------------------------------- answer correctness


class CorrectnessInput(BaseModel):
    question: str
    expected_answer: str
    answer: str


class CorrectnessOutput(BaseModel):
    verdict: Literal["correct", "partially_correct", "incorrect"]
    reason: str = ""


CORRECTNESS_VALUES = {"correct": 1.0, "partially_correct": 0.5, "incorrect": 0.0}

CORRECTNESS_PROMPT: Prompt[CorrectnessInput, CorrectnessOutput] = Prompt(
    name="answer_correctness",
    instruction=(
        "Compare the answer with the expected answer to the question. 'correct': it states "
        "the same facts (wording may differ; extra true detail is fine); "
        "'partially_correct': some of the expected facts are right and none contradicted, "
        "or it is right but incomplete; 'incorrect': it contradicts the expected answer or "
        "misses its point. Give the verdict and a one-sentence reason."
    ),
    input_model=CorrectnessInput,
    output_model=CorrectnessOutput,
    examples=(
        (
            CorrectnessInput(
                question="What are the two official languages of Canada?",
                expected_answer="English and French.",
                answer="Canada's official languages include French.",
            ),
            CorrectnessOutput(verdict="partially_correct", reason="English is missing."),
        ),
    ),
)


async def answer_correctness(
    client: ChatClient,
    question: str,
    answer: str,
    expected_answer: str | None,
    *,
    counts: JudgeCounts | None = None,
) -> Score:
    """1 / 0.5 / 0 for a correct / partially correct / incorrect answer against
    ``expected_answer`` (``details``: ``verdict``, ``reason``). Missing without an
    expected answer, for an empty answer, or on judge failure."""
    if expected_answer is None or not expected_answer.strip():
        return Score.missing("no expected_answer for this question")
    if not answer.strip():
        return Score.missing("empty answer")
    out = await ask(
        client,
        CORRECTNESS_PROMPT,
        CorrectnessInput(question=question, expected_answer=expected_answer, answer=answer),
        counts=counts,
    )
    if isinstance(out, JudgeFailure):
        return _failed(out)
    return Score(
        CORRECTNESS_VALUES[out.verdict], details={"verdict": out.verdict, "reason": out.reason}
    )
