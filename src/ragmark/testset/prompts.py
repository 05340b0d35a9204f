"""The question-writing prompts of ``ragmark testset``: one typed prompt per question type.

Every prompt takes the source documents (fenced as numbered data blocks) and asks for one
question with its answer, one verbatim quote from each document, the question's type and
a difficulty. One-document types: factual, reasoning, summarization; two-document types:
comparative, multi_hop.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from ragmark.errors import ConfigError
from ragmark.judges.prompt import ParseError, Prompt
from ragmark.languages import language_name
from ragmark.testset.checks import (
    QuoteProblem,
    check_quotes,
    rephrase_advice,
    source_reference,
)

QuestionType = Literal["factual", "reasoning", "summarization", "comparative", "multi_hop"]
Difficulty = Literal["easy", "medium", "hard"]

DOCUMENTS: dict[str, int] = {
    "factual": 1, "reasoning": 1, "summarization": 1, "comparative": 2, "multi_hop": 2,
}
"""Question type -> how many documents it draws on."""

DEFAULT_TYPES = ("factual", "comparative", "reasoning", "summarization")

_DESCRIBE = {
    "factual": "asks for one fact that the document states (who, what, when, where, how "
    "many); the answer is found in one place.",
    "reasoning": "needs an inference from what the document states (why, what follows, "
    "whether a condition holds); it cannot be answered by copying one sentence.",
    "summarization": "asks for the gist of the document or of one of its parts; the answer "
    "condenses several statements into a few sentences.",
    "comparative": "compares something described in document 1 with something described in "
    "document 2 (a difference, a similarity, which is larger or earlier); the answer needs "
    "both documents.",
    "multi_hop": "links a fact from document 1 with a fact from document 2: answering it "
    "takes two steps, one in each document.",
}

_COMMON = (
    "You write test questions for evaluating a search-and-answer system over a document "
    "collection. From the document(s) given, write ONE question that someone who has not "
    "seen them could ask: name the subject instead of saying 'the document' or 'the "
    "passage'. Give: question; answer, complete and short, from the documents only; quotes: "
    "for EACH document, in order, one passage copied from it character for character (a "
    "sentence or two, 20 to 300 characters, no ellipsis, nothing changed) that supports the "
    "answer; type: the type of the question you wrote; difficulty: easy (stated in one "
    "sentence), medium (needs paraphrase or two facts) or hard (needs inference or "
    "combining distant parts)."
)


def normalise_type(text: str) -> str:
    """``"Multi-hop"`` -> ``"multi_hop"``: lower case, hyphens and spaces as underscores."""
    return "_".join(text.strip().lower().replace("-", " ").split())


def parse_types(text: str | None) -> tuple[str, ...]:
    """``"factual,comparative"`` -> known type names, in order, without repeats."""
    if text is None:
        return DEFAULT_TYPES
    names = [normalise_type(t) for t in text.split(",") if t.strip()]
    unknown = [n for n in names if n not in DOCUMENTS]
    if unknown or not names:
        what = f"unknown question type {unknown[0]!r}" if unknown else "no question type given"
        raise ConfigError(f"--types: {what}; known: {', '.join(DOCUMENTS)}")
    return tuple(dict.fromkeys(names))


class SourceInput(BaseModel):
    """The passages a question is written from (one or two)."""

    documents: list[str]


class Generated(BaseModel):
    """One generated question. Tolerant of common slips: a single ``quote`` string,
    upper-case or hyphenated type and difficulty names."""

    question: str = Field(min_length=1)
    answer: str = Field(min_length=1)
    quotes: list[str] = Field(description="one verbatim quote from each document, in order")
    type: QuestionType
    difficulty: Difficulty

    @model_validator(mode="before")
    @classmethod
    def _aliases(cls, data: Any) -> Any:
        if isinstance(data, dict):
            data = dict(data)
            if "quotes" not in data and "quote" in data:
                data["quotes"] = data.pop("quote")
            if isinstance(data.get("quotes"), str):
                data["quotes"] = [data["quotes"]]
        return data

    @field_validator("question", "answer", mode="before")
    @classmethod
    def _strip(cls, v: Any) -> Any:
        return v.strip() if isinstance(v, str) else v

    @field_validator("type", "difficulty", mode="before")
    @classmethod
    def _lower(cls, v: Any) -> Any:
        return normalise_type(v) if isinstance(v, str) else v


def _check(item: SourceInput, out: Generated) -> str | ParseError | None:
    # a question that points at "the passage", or a quote not in the documents, is
    # re-asked with what was wrong (the 1.5B model does both, and often mends it when
    # told); the type written is
    # the model's label only: the question counts as the type asked for
    n = len(item.documents)
    if len(out.quotes) < n:
        return f"expected one quote for each of the {n} document(s), got {len(out.quotes)}"
    if (words := source_reference(out.question)) is not None:
        return ParseError(f"the question says {words!r}: it points at its source, which "
                          f"someone asking has not seen; {rephrase_advice(words)}",
                          code="points_at_source")
    got = check_quotes(out.quotes, item.documents)
    return ParseError(got.message, code=got.code) if isinstance(got, QuoteProblem) else None


_EXAMPLES: dict[str, tuple[list[str], dict[str, Any]]] = {
    "factual": (
        ["The Vasa was a Swedish warship that sank on its maiden voyage in 1628, less than "
         "a nautical mile out of Stockholm harbour. It was raised in 1961."],
        {"question": "In what year did the Swedish warship Vasa sink?",
         "answer": "In 1628, on its maiden voyage.",
         "quotes": ["The Vasa was a Swedish warship that sank on its maiden voyage in 1628"],
         "type": "factual", "difficulty": "easy"},
    ),
    "reasoning": (
        ["The deck of the Aldern bridge is steel, which lengthens by about 12 mm per 100 m "
         "for every 10 degrees of warming. Its expansion joints leave a 30 mm gap every "
         "100 m."],
        {"question": "Are the expansion joints of the Aldern bridge wide enough for a "
         "20-degree rise in temperature?",
         "answer": "Yes: 20 degrees lengthen the deck by about 24 mm per 100 m, less than "
         "the 30 mm gap.",
         "quotes": ["lengthens by about 12 mm per 100 m for every 10 degrees of warming"],
         "type": "reasoning", "difficulty": "hard"},
    ),
    "summarization": (
        ["Lindby's drought plan has three parts. Lawn watering is banned from June to "
         "August. Leaking mains are replaced first in the old town. Households that fit "
         "rain barrels get half the cost back."],
        {"question": "What are the main measures of Lindby's drought plan?",
         "answer": "A summer ban on watering lawns, replacing leaking mains in the old town "
         "first, and refunding half the cost of rain barrels.",
         "quotes": ["Lawn watering is banned from June to August."],
         "type": "summarization", "difficulty": "medium"},
    ),
    "comparative": (
        ["Lake Baikal in Siberia reaches a depth of 1,642 m.",
         "Lake Tanganyika, shared by four African countries, is 1,470 m deep at its "
         "deepest point."],
        {"question": "Which is deeper, Lake Baikal or Lake Tanganyika, and by how much?",
         "answer": "Lake Baikal, by about 170 m (1,642 m against 1,470 m).",
         "quotes": ["Lake Baikal in Siberia reaches a depth of 1,642 m.",
                    "is 1,470 m deep at its deepest point"],
         "type": "comparative", "difficulty": "medium"},
    ),
    "multi_hop": (
        ["Ada Rinn wrote her first novel while working as a clerk in Tarsk.",
         "Tarsk is a river port on the Vell, at the mouth of the Oma."],
        {"question": "On which river lies the town where Ada Rinn wrote her first novel?",
         "answer": "The Vell: she wrote it in Tarsk, a port on the Vell.",
         "quotes": ["Ada Rinn wrote her first novel while working as a clerk in Tarsk.",
                    "Tarsk is a river port on the Vell"],
         "type": "multi_hop", "difficulty": "hard"},
    ),
}


def question_prompt(qtype: str, language: str | None = None
                    ) -> Prompt[SourceInput, Generated]:
    """The prompt that asks for one question of type ``qtype`` (written in ``language``
    when given: a code such as ``de`` or a name)."""
    if qtype not in DOCUMENTS:
        raise ConfigError(f"unknown question type {qtype!r}; known: {', '.join(DOCUMENTS)}")
    docs, out = _EXAMPLES[qtype]
    instruction = (
        f"{_COMMON}\n\nRequested question type: {qtype}. A {qtype} question "
        f"{_DESCRIBE[qtype]}"
    )
    if language is not None:
        instruction += (f"\n\nWrite the question and the answer in {language_name(language)}"
                        ", whatever the language of the example; copy the quotes exactly "
                        "as the documents write them.")
    return Prompt(
        name=f"testset.{qtype}",
        instruction=instruction,
        input_model=SourceInput,
        output_model=Generated,
        examples=((SourceInput(documents=docs), Generated.model_validate(out)),),
        check=_check,
    )

