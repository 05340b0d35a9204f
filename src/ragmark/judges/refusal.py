"""The refusal judge: whether an answer declines the question (says it does not know,
cannot answer, or that the information is not there) rather than answering it. With
``refusal_judge = true`` (``--refusal-judge``) its verdicts, not the default phrases and
patterns, say which answers are refusals for ``refusal`` and the abstention metrics; an
empty answer is a refusal without a call."""

from __future__ import annotations

from pydantic import BaseModel

from ragmark.judges.prompt import Prompt


class RefusalInput(BaseModel):
    question: str
    answer: str


class RefusalOutput(BaseModel):
    refused: bool


REFUSAL_PROMPT: Prompt[RefusalInput, RefusalOutput] = Prompt(
    name="refusal",
    instruction=(
        "Decide whether the answer declines the question instead of answering it: it says "
        "it does not know, that it cannot answer, or that the information is not "
        "available. An answer that answers, even wrongly, partly or with a caveat, does "
        "not decline. YES when the answer declines, NO when it answers."
    ),
    input_model=RefusalInput,
    output_model=RefusalOutput,
    output="yes_no",
    examples=(
        (RefusalInput(question="When was the Eiffel Tower finished?",
                      answer="The sources I have do not say when it was finished."),
         RefusalOutput(refused=True)),
        (RefusalInput(question="When was the Eiffel Tower finished?",
                      answer="I am not certain, but it was finished in 1889."),
         RefusalOutput(refused=False)),
    ),
)
