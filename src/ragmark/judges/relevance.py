"""The relevance label of seed 003: can an answer to the question be derived from the
passage? YES/NO at temperature 0, with an optional custom prompt template."""

from __future__ import annotations

from pydantic import BaseModel

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
        return out.missing()
    return Score(1.0 if out.relevant else 0.0)


