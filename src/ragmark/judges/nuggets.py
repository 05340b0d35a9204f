"""Nugget evaluation as TREC RAG does it (the AutoNuggetizer; scores in
:mod:`ragmark.judges.nugget_scores`): the facts a good answer must hold, each vital or
okay, and whether an answer holds each.

The nuggets of a question come from the evaluation set (``nuggets``) when it gives them;
else the judge creates them as nuggetizer does: over the expected answer and the
relevant passages, ten passages a call, each call given the list so far and returning
it updated (at most 30 nuggets, 1-12 words each), then one call labels each vital or
okay. A question's nuggets are made once however many answers are scored against them
(the call cache keeps them for the next run too). Assignment: one call an answer with
every nugget numbered (exact count in the schema; in groups when the window does not
hold them all), each support, partial_support or not_support; an empty answer supports
none, without a call. The nuggets, their importance and assignments, where they came
from and the calls are in every nugget score's details.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from ragmark.case import Case
from ragmark.judges.lists import same_entry
from ragmark.judges.nugget_scores import METRICS, Assigned, nugget_scores
from ragmark.judges.prompt import ChatClient, JudgeCounts, JudgeFailure, Numbered, Prompt
from ragmark.judges.spec import judge_spec
from ragmark.judges.unknown import Unknown, ask_or_unknown
from ragmark.types import Nugget, Score

GROUP = "nuggets"
"""The name that asks for the four nugget scores at once (``--metrics nuggets``)."""
MOST = 30
"""The most nuggets the judge creates for a question (nuggetizer's cap)."""
PASSAGES_A_CALL = 10
"""Relevant passages a creation call reads (nuggetizer's window)."""
NOTHING_TO_CREATE_FROM = ("no nuggets for this question, and no expected_answer or "
                          "ground-truth passages to create them from")


class CreateInput(BaseModel):
    question: str
    expected_answer: str
    passage: list[str]
    nugget: list[str]


class CreateOutput(BaseModel):
    nuggets: list[str] = Field(max_length=MOST)


CREATE_PROMPT: Prompt[CreateInput, CreateOutput] = Prompt(
    name="nuggets.create",
    instruction=(
        "List the nuggets of a good answer to the question: the atomic facts (1 to 12 "
        "words each) it must hold, drawn only from the expected answer (when there is "
        "one) and the numbered passages. The nuggets found so far, from earlier passages, "
        "are numbered too (perhaps none): return the whole list updated, keeping them, "
        "adding what the passages bring and merging repeats, at most 30, the most "
        "important first. Write each nugget as a short statement, not a question."
    ),
    input_model=CreateInput,
    output_model=CreateOutput,
    examples=((
        CreateInput(
            question="Who built the Eiffel Tower, and when was it finished?",
            expected_answer="Gustave Eiffel's company built it; it was finished in 1889.",
            passage=["The tower was built by the company of Gustave Eiffel and completed "
                     "in March 1889 for the World's Fair.",
                     "Paris hosted the 1889 World's Fair."],
            nugget=[]),
        CreateOutput(nuggets=["Gustave Eiffel's company built the tower",
                              "The tower was finished in 1889",
                              "It was built for the 1889 World's Fair"])),),
    writes="the nuggets",
)


class ImportanceInput(BaseModel):
    question: str
    nugget: list[str]


class Label(BaseModel):
    nugget: int = Field(description="the number of the nugget, from 1")
    importance: Literal["vital", "okay"]


class ImportanceOutput(BaseModel):
    labels: list[Label]


IMPORTANCE_PROMPT: Prompt[ImportanceInput, ImportanceOutput] = Prompt(
    name="nuggets.importance",
    instruction=(
        "Label each numbered nugget for the question: vital when a good answer must hold "
        "it, okay when it is worth having but not essential. One label per nugget, with "
        "the nugget's number."
    ),
    input_model=ImportanceInput,
    output_model=ImportanceOutput,
    examples=((
        ImportanceInput(question="Who built the Eiffel Tower, and when was it finished?",
                        nugget=["Gustave Eiffel's company built the tower",
                                "The tower was finished in 1889",
                                "It was built for the 1889 World's Fair"]),
        ImportanceOutput(labels=[Label(nugget=1, importance="vital"),
                                 Label(nugget=2, importance="vital"),
                                 Label(nugget=3, importance="okay")])),),
    numbered=Numbered("labels", "nugget", "nugget"),
)


class AssignInput(BaseModel):
    question: str
    nugget: list[str]
    answer: str


class Verdict(BaseModel):
    nugget: int = Field(description="the number of the nugget, from 1")
    assignment: Literal["support", "partial_support", "not_support"]


class AssignOutput(BaseModel):
    verdicts: list[Verdict]


ASSIGN_PROMPT: Prompt[AssignInput, AssignOutput] = Prompt(
    name="nuggets.assign",
    instruction=(
        "For each numbered nugget, say whether the answer holds it: support when the "
        "answer states it fully, partial_support when it states part of it, not_support "
        "when it does not state it. Judge only what the answer says, not whether it is "
        "true. One verdict per nugget, with the nugget's number."
    ),
    input_model=AssignInput,
    output_model=AssignOutput,
    examples=((
        AssignInput(question="Who built the Eiffel Tower, and when was it finished?",
                    nugget=["Gustave Eiffel's company built the tower",
                            "The tower was finished in 1889",
                            "It was built for the 1889 World's Fair"],
                    answer="Gustave Eiffel's firm built it in the late 1880s."),
        AssignOutput(verdicts=[Verdict(nugget=1, assignment="support"),
                               Verdict(nugget=2, assignment="partial_support"),
                               Verdict(nugget=3, assignment="not_support")])),),
    numbered=Numbered("verdicts", "nugget", "nugget"),
)

Made = tuple[Nugget, ...] | JudgeFailure | Unknown | str
"""A question's nuggets, or why there are none (a failure, unknown in a dry run, or a
reason)."""


async def create(client: ChatClient, case: Case, counts: JudgeCounts) -> Made:
    """The nuggets the judge makes for ``case`` from its expected answer and relevant
    passages, vital ones first (see the module)."""
    expected = (case.expected_answer or "").strip()
    gold = [g for g in case.relevant if g.strip()]
    if not expected and not gold:
        return NOTHING_TO_CREATE_FROM
    prompt = CREATE_PROMPT
    texts: list[str] = []
    windows = [gold[i:i + PASSAGES_A_CALL] for i in range(0, len(gold), PASSAGES_A_CALL)]
    for done, window in enumerate(windows or [[]]):
        got = await ask_or_unknown(client, prompt, CreateInput(
            question=case.question, expected_answer=expected, passage=window,
            nugget=texts), counts)
        if isinstance(got, Unknown):  # the later windows and the labels will follow
            tokens = (len(expected) + sum(map(len, gold)) // max(len(windows), 1)) // 4 + 400
            later = max(len(windows) - done - 1, 0) + 1  # each may be re-asked once
            client.follow(later, later, tokens)  # type: ignore[attr-defined]
            return got
        if isinstance(got, JudgeFailure):
            return got
        texts = _once(got.nuggets)[:MOST]
    if not texts:
        return "the judge found no nugget in the expected answer and the relevant passages"
    labels = await ask_or_unknown(client, IMPORTANCE_PROMPT,
                                  ImportanceInput(question=case.question, nugget=texts),
                                  counts)
    if isinstance(labels, JudgeFailure | Unknown):
        return labels  # type: ignore[no-any-return]
    by = {lab.nugget: lab.importance for lab in labels.labels}
    made = [Nugget(t, by[i]) for i, t in enumerate(texts, start=1)]
    return tuple(sorted(made, key=lambda n: n.importance != "vital"))


def _once(texts: list[str]) -> list[str]:
    """``texts`` stripped, blanks dropped, each kept once (case and spacing aside)."""
    seen: dict[str, str] = {}
    for t in texts:
        key = same_entry(t)
        if key and key not in seen:
            seen[key] = t.strip()
    return list(seen.values())


def assessed_text(case: Case) -> str:
    """The answer as the nuggets are assigned against it: the texts of the sentences
    its source gave, joined by a space (TREC RAG's answer objects, as nuggetizer joins
    them: no citation markers), else the answer as it is."""
    if case.sentences is not None:
        return " ".join(text for text, _ in case.sentences if text)
    return case.answer


async def assign(client: ChatClient, case: Case, nuggets: tuple[Nugget, ...],
                 counts: JudgeCounts) -> list[Assigned] | JudgeFailure | Unknown:
    """What the answer of ``case`` (:func:`assessed_text`) makes of each nugget."""
    answer = assessed_text(case)
    if not answer.strip():
        return [Assigned(n, "not_support") for n in nuggets]
    got = await ask_or_unknown(client, ASSIGN_PROMPT,
                               AssignInput(question=case.question,
                                           nugget=[n.text for n in nuggets],
                                           answer=answer), counts)
    if isinstance(got, JudgeFailure | Unknown):
        return got  # type: ignore[no-any-return]
    by = {v.nugget: v.assignment for v in got.verdicts}
    return [Assigned(n, by[i]) for i, n in enumerate(nuggets, start=1)]


def _why(got: JudgeFailure | Unknown | str, what: str) -> Score:
    if isinstance(got, JudgeFailure):
        return got.missing()
    if isinstance(got, Unknown):
        return Score.missing(f"dry run: the {what} are not known yet")
    return Score.missing(got)


async def judge(client: ChatClient, case: Case,
                counts: JudgeCounts | None = None) -> dict[str, Score]:
    """The four nugget scores of one answer, each with the nuggets in its details."""
    mine = JudgeCounts()
    source = "set" if case.nuggets else "judge"
    try:
        made = case.nuggets if case.nuggets else await create(client, case, mine)
        if isinstance(made, Unknown) and case.answer.strip():  # its assignment will follow
            client.follow(1, 1, (len(case.answer) + 30 * 40) // 4 + 400)  # type: ignore[attr-defined]
        if not isinstance(made, tuple):
            return dict.fromkeys(METRICS, _why(made, "nuggets"))
        got = await assign(client, case, made, mine)
    finally:
        if counts is not None:
            counts.add(mine)
    if not isinstance(got, list):
        return dict.fromkeys(METRICS, _why(got, "assignments"))
    details = {"nuggets": [{"text": a.nugget.text, "importance": a.nugget.importance,
                            "assignment": a.assignment} for a in got],
               "source": source, "calls": mine.asked + mine.reasked,
               **({"answer_text": assessed_text(case)} if case.sentences is not None
                  else {})}
    return {m: Score(s.value, s.reason, details) for m, s in nugget_scores(got).items()}


_SUMMARY = {
    "nugget_vital_strict": "vital nuggets the answer supports / vital nuggets",
    "nugget_vital": "(vital nuggets supported + 0.5 x partly supported) / vital nuggets",
    "nugget_all_strict": "nuggets the answer supports / nuggets",
    "nugget_all": "(nuggets supported + 0.5 x partly supported) / nuggets",
}
_LABEL = {"nugget_vital_strict": "Vital nuggets (strict)", "nugget_vital": "Vital nuggets",
          "nugget_all_strict": "All nuggets (strict)", "nugget_all": "All nuggets"}

_ASK = {"nugget_vital_strict": "does the answer state every vital fact a good answer "
                                "must hold (each vital nugget)?",
        "nugget_all_strict": "does the answer state every fact of a good answer (each "
                             "nugget)?"}
_ASK |= {"nugget_vital": _ASK["nugget_vital_strict"], "nugget_all": _ASK["nugget_all_strict"]}

SPECS = tuple(judge_spec(n, _SUMMARY[n] + " (TREC RAG)", _LABEL[n], ("answer",), judge,
                         ask=_ASK[n], group=GROUP) for n in METRICS)
