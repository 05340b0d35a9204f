"""Judges of an agent's trajectory, where no expected call says what was right (DeepEval's
TaskCompletion and ArgumentCorrectness are the anchors):

- ``task_completion``: does the final answer accomplish what the question asked, given
  what the agent did (its tool calls and their results, shown to the judge)? Yes 1, no 0
  (one word asked: the fewest tokens that carry the verdict);
- ``argument_correctness``: for each tool call, are its arguments right for the question
  and for what the agent knew when it made the call (the results of the calls before
  it)? The share of calls judged right, their numbers one verdict each (an exact-count
  schema), one call a question.

Both read the case's trajectory (:mod:`ragmark.trajectory`); missing with the reason
when the source recorded none, when the agent made no call (``argument_correctness``),
or when the answer is empty (``task_completion``).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable

from pydantic import BaseModel, Field

from ragmark.case import Case
from ragmark.judges.lists import in_order
from ragmark.judges.prompt import ChatClient, JudgeCounts, JudgeFailure, Numbered, Prompt, ask
from ragmark.judges.spec import judge_spec
from ragmark.trajectory import Call, Trajectory
from ragmark.types import Score

NO_TRAJECTORY = "no trajectory recorded (its source gave no messages, tool calls or tool spans)"
RESULT_CHARS = 300
"""Characters of a tool's result shown to a judge."""


def _args(c: Call) -> str:
    return (c.raw or "") if c.arguments is None else json.dumps(dict(c.arguments),
                                                               ensure_ascii=False)


def _result(c: Call) -> str:
    text = f"failed: {c.error}" if c.error is not None else (c.result or "(no result)")
    return text if len(text) <= RESULT_CHARS else text[:RESULT_CHARS] + " …"


def steps_text(t: Trajectory) -> list[str]:
    """The trajectory as a judge reads it: each call with its arguments and result."""
    return [f"{c.name}({_args(c) or ''}) -> {_result(c)}" for c in t.calls()] or [
        "(the agent called no tool)"]


# ---------------------------------------------------------------- task completion


class CompletionInput(BaseModel):
    question: str
    steps: list[str]
    answer: str


class CompletionOutput(BaseModel):
    completed: bool


TASK_COMPLETION_PROMPT: Prompt[CompletionInput, CompletionOutput] = Prompt(
    name="task_completion",
    instruction=(
        "An agent was given the task in the question. Its steps are the tool calls it made "
        "with what each returned; its answer is its final reply. Decide whether the answer "
        "accomplishes the task, using what the steps returned: YES when it does what was "
        "asked, NO when it does not, does it only in part, or rests on a failed step."
    ),
    input_model=CompletionInput,
    output_model=CompletionOutput,
    output="yes_no",
    examples=(
        (CompletionInput(question="Book the cheapest flight from Paris to Rome on May 3.",
                         steps=['search_flights({"from": "Paris", "to": "Rome", "date": '
                                '"05-03"}) -> AF 120 EUR, AZ 95 EUR',
                                'book({"flight": "AF"}) -> booked AF'],
                         answer="I booked flight AF for you."),
         CompletionOutput(completed=False)),
    ),
)


async def task_completion(client: ChatClient, c: Case, counts: JudgeCounts | None = None
                          ) -> Score:
    """Whether the answer accomplishes the question's task, given the trajectory."""
    t = c.output.trajectory
    if t is None:
        return Score.missing(NO_TRAJECTORY)
    if not c.answer.strip():
        return Score.missing("empty answer")
    out = await ask(client, TASK_COMPLETION_PROMPT,
                    CompletionInput(question=c.question, steps=steps_text(t), answer=c.answer),
                    counts=counts)
    if isinstance(out, JudgeFailure):
        return out.missing()
    return Score(1.0 if out.completed else 0.0)


# ---------------------------------------------------------------- argument correctness


class ArgumentsInput(BaseModel):
    question: str
    call: list[str] = Field(description="each call, after what the calls before it returned")


class CallVerdict(BaseModel):
    call: int = Field(description="the number of the call, from 1")
    correct: bool


class ArgumentsOutput(BaseModel):
    verdicts: list[CallVerdict]


ARGUMENT_CORRECTNESS_PROMPT: Prompt[ArgumentsInput, ArgumentsOutput] = Prompt(
    name="argument_correctness",
    instruction=(
        "An agent made the numbered tool calls, in order, to answer the question; each "
        "shows its arguments and what it returned. For each call decide whether its "
        "arguments are right for the question and for what the earlier calls returned "
        "(correct: true), or wrong, off the question or ignoring what it already knew "
        "(correct: false). One verdict per call, with the call's number."
    ),
    input_model=ArgumentsInput,
    output_model=ArgumentsOutput,
    numbered=Numbered("verdicts", "call", "call"),
)


async def argument_correctness(client: ChatClient, c: Case,
                               counts: JudgeCounts | None = None) -> Score:
    """The share of the agent's tool calls whose arguments the judge finds right
    (``details``: ``wrong``, the numbers of the others, from 1)."""
    t = c.output.trajectory
    if t is None:
        return Score.missing(NO_TRAJECTORY)
    calls = steps_text(t) if t.calls() else []
    if not calls:
        return Score.missing("the agent made no tool call")
    out = await ask(client, ARGUMENT_CORRECTNESS_PROMPT,
                    ArgumentsInput(question=c.question, call=calls), counts=counts)
    if isinstance(out, JudgeFailure):
        return out.missing()
    ordered = in_order({v.call: v.correct for v in out.verdicts}, len(calls))
    return Score(sum(ordered) / len(ordered),
                 details={"wrong": [i for i, ok in enumerate(ordered, start=1) if not ok]})


def task_completion_of(client: ChatClient, c: Case, counts: JudgeCounts) -> Awaitable[Score]:
    return task_completion(client, c, counts)


def argument_correctness_of(client: ChatClient, c: Case, counts: JudgeCounts) -> Awaitable[Score]:
    return argument_correctness(client, c, counts)


SPECS = (
    judge_spec("task_completion", "1 when the final answer accomplishes the question's task "
               "given the agent's tool calls and their results, else 0", "Task completion",
               ("answer", "trajectory"), task_completion_of,
               ask="does the answer accomplish what the question asked?"),
    judge_spec("argument_correctness", "tool calls whose arguments are right for the "
               "question and what earlier calls returned / tool calls",
               "Argument correctness", ("trajectory",), argument_correctness_of,
               ask="are the agent's tool calls made with the right arguments?"),
)
"""The agent judges of the catalogue."""

