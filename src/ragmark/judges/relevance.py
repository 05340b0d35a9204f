"""Relevance of one passage to a question: the label of seed 003 (can an answer to the
question be derived from the passage? YES/NO at temperature 0, with an optional custom
prompt template) and a 0-3 grade (for the LLM reranker)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field

from ragmark.judges.prompt import (
    ChatClient,
    JudgeCounts,
    JudgeFailure,
    Prompt,
    ask,
)
from ragmark.types import Score


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


async def relevance_label(
    client: ChatClient,
    question: str,
    passage: str,
    *,
    template: str | None = None,
    counts: JudgeCounts | None = None,
) -> Score:
    """1.0 when an answer to ``question`` can be derived from ``passage``, else 0.0
    (temperature 0); missing with the reason when the judge gives no usable answer. In
    the data's language when it is stated (:func:`~ragmark.judges.language.speaking`)."""
    return await _asked(client, relevance_prompt(template), question,
                        passage, counts, lambda out: 1.0 if out.relevant else 0.0)




class GradeOutput(BaseModel):
    grade: int = Field(ge=0, le=3)


GRADE_PROMPT: Prompt[RelevanceInput, GradeOutput] = Prompt(
    name="relevance_grade",
    instruction=(
        "You grade search results. You get a question and one passage retrieved from a "
        "corpus of the same domain. Grade how well the passage answers the question: "
        "3 = it contains the complete answer; 2 = it contains part of the answer; "
        "1 = it is on the topic but gives no answer; 0 = it is unrelated."
    ),
    input_model=RelevanceInput,
    output_model=GradeOutput,
    examples=(
        (
            RelevanceInput(
                question="When was the Eiffel Tower completed?",
                passage="The tower was finished in March 1889 for the World's Fair.",
            ),
            GradeOutput(grade=3),
        ),
        (
            RelevanceInput(
                question="When was the Eiffel Tower completed?",
                passage="The Eiffel Tower is a wrought-iron tower on the Champ de Mars.",
            ),
            GradeOutput(grade=1),
        ),
    ),
)


async def relevance_grade(
    client: ChatClient,
    question: str,
    passage: str,
    *,
    counts: JudgeCounts | None = None,
) -> Score:
    """How well ``passage`` answers ``question`` on a 0-3 scale (temperature 0), as the
    grade itself; missing with the reason when the judge gives no usable answer.
    In the data's language when it is stated (:func:`~ragmark.judges.language.speaking`)."""
    return await _asked(client, GRADE_PROMPT, question, passage,
                        counts, lambda out: float(out.grade))


async def _asked(client: ChatClient, prompt: Prompt[RelevanceInput, Any], question: str,
                 passage: str, counts: JudgeCounts | None, value: Callable[[Any], float]
                 ) -> Score:
    """The judge's verdict on ``passage`` for ``question`` (temperature 0) as ``value``
    makes a score of it, or missing with the reason."""
    out = await ask(client, prompt, RelevanceInput(question=question, passage=passage),
                    counts=counts, temperature=0)
    if isinstance(out, JudgeFailure):
        return out.missing()
    return Score(value(out))
