"""Judges that need a reference: context recall and context precision (against the
expected answer), and citation correctness (the LLM generator's ``[n]`` citations).

- ``context_recall`` = statements of the expected answer attributable to the retrieved
  contexts / statements of the expected answer. Faithfulness's two calls asked of the
  expected answer: its statements listed, then each checked against the contexts.
- ``context_entity_recall`` = named entities of the expected answer the contexts mention
  / entities of the expected answer (RAGAS's entity recall; one call lists the entities
  and marks each, duplicates counted once).
- ``context_precision`` = sum over k of (precision@k * v_k) / (useful contexts in the top
  K), with v_k = 1 when the context at rank k is useful for arriving at the expected
  answer (rank-weighted: useful contexts ranked first score higher). 0 when none is
  useful. One call: a verdict per context.
- ``citation_correctness`` = cited sentences whose cited contexts support them / cited
  sentences. The sentences of the answer that cite ``[n]`` are found here (no model);
  one call checks each against the contexts it cites.

Worked examples in the tests: expected answer with statements [attributable, not] ->
context_recall 0.5; verdicts [useful, not, useful] -> context_precision
(1/1 + 2/3) / 2 = 0.8333; two cited sentences, one supported -> citation_correctness 0.5.
"""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from typing import Any

from pydantic import BaseModel, Field

from ragmark.case import Case
from ragmark.judges.faithfulness import (
    checked_claims,
    left_out_details,
    supported_share,
    weighed_details,
)
from ragmark.judges.odds import numbered_chances
from ragmark.judges.passages import each_passage, yes_chances
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
from ragmark.judges.spec import judge_spec
from ragmark.text import citing_sentences
from ragmark.types import Score, Sentences

NO_REFERENCE = "no expected_answer for this question"

# ---------------------------------------------------------------- context recall


async def context_recall(client: ChatClient, question: str, expected_answer: str | None,
                         contexts: Sequence[str], *,
                         counts: JudgeCounts | None = None) -> Score:
    """Share of the expected answer's statements the contexts support (``details``:
    ``unattributed`` statements): faithfulness's two calls asked of the expected answer
    (:func:`~ragmark.judges.faithfulness.checked_claims`), so the statements are listed
    once and the verdicts come by place. Missing without an expected answer or contexts,
    when the judge finds no statement, or on judge failure."""
    if expected_answer is None or not expected_answer.strip():
        return Score.missing(NO_REFERENCE)
    if not contexts:
        return Score.missing("no retrieved context")
    got = await checked_claims(
        client, question, expected_answer, contexts, counts=counts,
        none_found="the judge found no statement in the expected answer")
    if isinstance(got, Score):
        return got
    statements, flags, chances, told, echoes = got
    return Score(supported_share(chances), details={
        "statements": len(statements),
        "unattributed": [s for s, ok in zip(statements, flags, strict=True) if not ok],
        **left_out_details(echoes),
        **weighed_details(chances, flags, told, supported_share(flags))})


# ---------------------------------------------------------------- context entity recall


class EntityInput(BaseModel):
    expected_answer: str
    context: list[str]


class EntityPresence(BaseModel):
    entity: str
    in_context: bool


class EntityOutput(BaseModel):
    entities: list[EntityPresence]


CONTEXT_ENTITY_RECALL_PROMPT: Prompt[EntityInput, EntityOutput] = Prompt(
    name="context_entity_recall",
    instruction=(
        "List the named entities of the expected answer (people, places, organisations, "
        "dates, numbers with units, named things), each once. For each, decide whether the "
        "numbered context passages mention it (in_context: true; another wording of the "
        "same entity counts) or not (in_context: false)."
    ),
    input_model=EntityInput,
    output_model=EntityOutput,
    listed=Listed("entities", "expected_answer", "entity"),
    examples=(
        (
            EntityInput(expected_answer="The Eiffel Tower was finished in 1889 in Paris.",
                        context=["Gustave Eiffel's tower in Paris opened to visitors."]),
            EntityOutput(entities=[
                EntityPresence(entity="Eiffel Tower", in_context=True),
                EntityPresence(entity="1889", in_context=False),
                EntityPresence(entity="Paris", in_context=True)]),
        ),
    ),
    writes="the entities",
)


async def context_entity_recall(client: ChatClient, expected_answer: str | None,
                                contexts: Sequence[str], *,
                                counts: JudgeCounts | None = None) -> Score:
    """Share of the expected answer's entities the contexts mention (``details``:
    ``missing`` entities). Missing without an expected answer or contexts, or when the
    judge finds no entity in the expected answer."""
    if expected_answer is None or not expected_answer.strip():
        return Score.missing(NO_REFERENCE)
    if not contexts:
        return Score.missing("no retrieved context")
    out = await ask(client, CONTEXT_ENTITY_RECALL_PROMPT,
                    EntityInput(expected_answer=expected_answer, context=list(contexts)),
                    counts=counts)
    if isinstance(out, JudgeFailure):
        return out.missing()
    entities = {e.entity.strip().lower(): e for e in out.entities if e.entity.strip()}
    if not entities:
        return Score.missing("the judge found no entity in the expected answer")
    found = sum(e.in_context for e in entities.values())
    return Score(found / len(entities), details={
        "entities": len(entities),
        "missing": [e.entity for e in entities.values() if not e.in_context]})


# ---------------------------------------------------------------- context precision


class UsefulInput(BaseModel):
    question: str
    expected_answer: str
    passage: str


class AnswerUsefulInput(BaseModel):
    question: str
    answer: str
    passage: str


class Usefulness(BaseModel):
    useful: bool


def _useful_prompt(name: str, against: str, model: type[BaseModel]) -> Prompt[Any, Usefulness]:
    """The yes/no question of context precision about one passage: was it useful for
    arriving at ``against`` (the expected answer, or the answer given)?"""
    return Prompt(
        name=name,
        instruction=(
            f"You get a question, {against} and one passage retrieved for the question. "
            f"Decide whether the passage was useful for arriving at {against}: YES if it "
            "states something the answer needs, NO if not (also NO when it is only on the "
            "same topic)."),
        input_model=model, output_model=Usefulness, output="yes_no")


CONTEXT_PRECISION_PROMPT = _useful_prompt("context_precision", "the expected answer",
                                          UsefulInput)
ANSWER_PRECISION_PROMPT = _useful_prompt("context_precision_without_reference",
                                         "the answer given", AnswerUsefulInput)


def rank_weighted_precision(useful: Sequence[bool] | Sequence[float]) -> float:
    """sum_k precision@k * v_k / (number useful); 0 when none is. With each passage's
    probability of being useful as v_k, the same sum with the expected counts (a
    plug-in value, not the expectation of the hard one): for [1, 0.5, 0.5],
    (1 * 1/1 + 0.5 * 1.5/2 + 0.5 * 2/3) / 2.

    >>> round(rank_weighted_precision([True, False, True]), 4)
    0.8333
    >>> round(rank_weighted_precision([1.0, 0.5, 0.5]), 4)
    0.8542
    """
    total, found = 0.0, 0.0
    for k, v in enumerate(useful, start=1):
        found += float(v)
        total += float(v) * found / k
    return total / found if found else 0.0


async def context_precision(client: ChatClient, question: str, expected_answer: str | None,
                            contexts: Sequence[str], *,
                            counts: JudgeCounts | None = None) -> Score:
    """Rank-weighted precision of the contexts useful for the expected answer, each
    passage judged on its own (``details``: ``useful`` passage numbers, from 1; with
    log-probabilities each passage's ``chances``, counted as expected counts)."""
    if expected_answer is None or not expected_answer.strip():
        return Score.missing(NO_REFERENCE)
    return await _precision(client, CONTEXT_PRECISION_PROMPT, [UsefulInput(
        question=question, expected_answer=expected_answer, passage=c) for c in contexts],
        counts)


async def context_precision_without_reference(
        client: ChatClient, question: str, answer: str, contexts: Sequence[str], *,
        counts: JudgeCounts | None = None) -> Score:
    """Context precision for sets without an expected answer (RAGAS's
    LLMContextPrecisionWithoutReference): the passages useful for arriving at the answer
    the system gave. Missing for an empty answer."""
    if not answer.strip():
        return Score.missing("empty answer")
    return await _precision(client, ANSWER_PRECISION_PROMPT, [AnswerUsefulInput(
        question=question, answer=answer, passage=c) for c in contexts], counts)


async def _precision(client: ChatClient, prompt: Prompt[Any, Usefulness], items: list[Any],
                     counts: JudgeCounts | None) -> Score:
    if not items:
        return Score.missing("no retrieved context")
    got = await each_passage(client, prompt, items, counts)
    if isinstance(got, JudgeFailure):
        return got.missing()
    hard, chances, told = yes_chances(got, "useful")
    return Score(rank_weighted_precision(chances), details={
        "useful": [i for i, u in enumerate(hard, start=1) if u],
        **weighed_details(chances, hard, told, rank_weighted_precision(hard))})


# ---------------------------------------------------------------- citation correctness

def cited_sentences(answer: str, n_contexts: int, sentences: Sentences | None = None
                    ) -> list[tuple[str, list[int]]]:
    """The answer's sentences that cite a context (``sentences`` when its source gave
    them, else :func:`ragmark.text.citing_sentences`), with the numbers they cite within
    1..n_contexts, markers removed from the text.

    >>> cited_sentences("Paris is big [1]. It is old [2][3]. No cite.", 2)
    [('Paris is big.', [1]), ('It is old.', [2])]
    """
    out = []
    for text, cites in (citing_sentences(answer) if sentences is None else sentences):
        within = [c for c in cites if 1 <= c <= n_contexts]
        if within:
            out.append((text, within))
    return out


class CitationInput(BaseModel):
    context: list[str]
    cited: list[str] = Field(description="each statement with the passages it cites")


class CitationVerdict(BaseModel):
    statement: int = Field(description="the number of the statement, from 1")
    supported: bool


class CitationOutput(BaseModel):
    verdicts: list[CitationVerdict]



CITATION_PROMPT: Prompt[CitationInput, CitationOutput] = Prompt(
    name="citation_correctness",
    instruction=(
        "Each numbered statement cites some of the numbered context passages (after "
        "'cites'). Decide for each statement whether the passages it cites support it "
        "(supported: true) or not (supported: false): only the cited passages count, not "
        "the others and not your own knowledge. One verdict per statement, with its number."
    ),
    input_model=CitationInput,
    output_model=CitationOutput,
    numbered=Numbered("verdicts", "statement", "cited"),
)


async def citation_correctness(client: ChatClient, answer: str, contexts: Sequence[str], *,
                               counts: JudgeCounts | None = None,
                               sentences: Sentences | None = None) -> Score:
    """Share of the answer's cited sentences that their cited contexts support
    (``details``: ``unsupported`` sentences). Missing when the answer cites nothing.
    ``sentences``: the answer's sentences and citations, when its source gave them."""
    if not contexts:
        return Score.missing("no retrieved context")
    cited = cited_sentences(answer, len(contexts), sentences)
    if not cited:
        return Score.missing("the answer cites no context ([n])")
    got = await ask_weighed(client, CITATION_PROMPT, CitationInput(
        context=list(contexts),
        cited=[f"{text} (cites {', '.join(map(str, nums))})" for text, nums in cited]),
        counts=counts)
    if isinstance(got, JudgeFailure):
        return got.missing()
    ordered = in_order({v.statement: v.supported for v in got.out.verdicts}, len(cited))
    chances, told = numbered_chances(got, "verdicts", "statement", "supported", len(cited))
    return Score(supported_share(chances), details={
        "cited": len(cited),
        "unsupported": [t for (t, _), ok in zip(cited, ordered, strict=True) if not ok],
        **weighed_details(chances, ordered, told, supported_share(ordered))})


def context_recall_of(client: ChatClient, c: Case, counts: JudgeCounts) -> Awaitable[Score]:
    return context_recall(client, c.question, c.expected_answer, c.contexts, counts=counts)


def context_entity_recall_of(client: ChatClient, c: Case, counts: JudgeCounts) -> Awaitable[Score]:
    return context_entity_recall(client, c.expected_answer, c.contexts, counts=counts)


def context_precision_of(client: ChatClient, c: Case, counts: JudgeCounts) -> Awaitable[Score]:
    return context_precision(client, c.question, c.expected_answer, c.contexts,
                             counts=counts)


def answer_precision_of(client: ChatClient, c: Case, counts: JudgeCounts) -> Awaitable[Score]:
    return context_precision_without_reference(client, c.question, c.answer, c.contexts,
                                               counts=counts)


def citation_correctness_of(client: ChatClient, c: Case, counts: JudgeCounts) -> Awaitable[Score]:
    return citation_correctness(client, c.answer, c.contexts, counts=counts,
                                sentences=c.sentences)


SPECS = (
    judge_spec("context_recall", "statements of the expected answer the contexts support "
               "/ statements", "Context recall", ("contexts", "expected_answer"),
               context_recall_of,
               ask="do the contexts contain everything the expected answer states?"),
    judge_spec("context_entity_recall", "named entities of the expected answer the "
               "contexts mention / entities", "Context entity recall",
               ("contexts", "expected_answer"), context_entity_recall_of,
               ask="do the contexts mention every entity of the expected answer?"),
    judge_spec("context_precision", "sum over ranks of precision@k for each context "
               "useful for the expected answer / useful contexts", "Context precision",
               ("contexts", "expected_answer"), context_precision_of,
               ask="are the contexts that help reach the expected answer ranked first?"),
    judge_spec("context_precision_without_reference", "sum over ranks of precision@k for "
               "each context useful for the answer given / useful contexts (RAGAS's "
               "LLMContextPrecisionWithoutReference)", "Context precision (by the answer)",
               ("answer", "contexts"), answer_precision_of,
               ask="are the contexts that the answer draws on ranked first?"),
    judge_spec("citation_correctness", "[n]-citing sentences their cited contexts support "
               "/ citing sentences", "Citation correctness", ("answer", "contexts"),
               citation_correctness_of,
               ask="does every cited context support the sentence citing it?"),
)
