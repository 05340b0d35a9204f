"""Judges of the user's own criteria (issue 63, item 4), defined in a config's
``[judges.NAME]`` table::

    [judges.plain_language]
    criterion = "The answer is written in plain words a patient understands, without jargon."
    scale = "yes/no"                  # or "1-5" (1 to N, N from 3 to 9)
    reads = ["question", "answer"]    # of question, answer, contexts, expected_answer, trajectory
    steps = ["...", "..."]            # optional: else the judge's model writes them once

As G-Eval does (Liu et al., 2023; DeepEval's GEval), the evaluation steps a criterion is
judged by are the user's, or written once by the judge's model from the criterion (a
call of its own, cached like every judge call, so a rerun uses the same steps) and kept
with the run (:func:`written_steps`). The value is the judge's probability of *yes* on a
yes/no scale, and the probability-weighted rating mapped to [0, 1], ``(E[rating] - 1) /
(N - 1)``, on a 1..N scale, where the endpoint gives log-probabilities; the hard verdict
otherwise (and always in ``details["hard_value"]``).

A criterion is a metric like any other once its config is read
(:func:`ragmark.config_judges.define`): its
name goes in ``--metrics``, the gates, compare, annotate (people are asked the
criterion) and judge-eval."""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import weakref
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator

from ragmark.case import Case, ChatClient, JudgeCounts
from ragmark.judges.agent import NO_TRAJECTORY, steps_text
from ragmark.judges.guidance import aligned
from ragmark.judges.odds import Weighed
from ragmark.judges.outcome import JudgeFailure
from ragmark.judges.prompt import Prompt, ask_weighed
from ragmark.judges.spec import judge_spec
from ragmark.judges.unknown import UNKNOWN, ask_or_unknown
from ragmark.types import MetricSpec, Score

READS = ("question", "trajectory", "contexts", "expected_answer", "answer")
"""What a criterion may read, in the order the judge is shown them (the answer last,
nearest its verdict)."""
_NEEDS = {"answer": "answer", "contexts": "contexts", "expected_answer": "expected_answer",
          "trajectory": "trajectory"}
_SCALE = re.compile(r"\s*1\s*(?:-|\.\.|to)\s*(\d+)\s*")


class Criterion(BaseModel):
    """A ``[judges.NAME]`` table that defines a judge of its own."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    criterion: str
    """What is judged, in plain words, phrased so that *yes* (a high rating) is good."""
    scale: str = "yes/no"
    """``"yes/no"``, or a rating ``"1-N"`` (N from 3 to 9)."""
    reads: tuple[str, ...] = ("question", "answer")
    steps: tuple[str, ...] = ()
    """The evaluation steps; empty: the judge's model writes them once (G-Eval)."""

    @field_validator("criterion")
    @classmethod
    def _criterion(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("criterion is empty: say in plain words what is judged")
        return v.strip()

    @field_validator("scale")
    @classmethod
    def _scale(cls, v: str) -> str:
        text = v.strip().lower().replace(" ", "")
        if text in ("yes/no", "yesno", "binary"):
            return "yes/no"
        m = _SCALE.fullmatch(text)
        if m is None or not 3 <= int(m.group(1)) <= 9:
            raise ValueError(f"scale {v!r}: give \"yes/no\" or a rating \"1-N\" with N from 3 "
                             "to 9 (a rating of two digits shares its first token with 1, "
                             "so its probability cannot be read)")
        return f"1-{int(m.group(1))}"

    @field_validator("reads")
    @classmethod
    def _reads(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        wrong = [r for r in v if r not in READS]
        if wrong or not v:
            raise ValueError(f"reads {list(v)!r}: give one or more of {', '.join(READS)}")
        return tuple(r for r in READS if r in v)  # the order the judge is shown them

    @field_validator("steps")
    @classmethod
    def _steps(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        if any(not s.strip() for s in v):
            raise ValueError("steps: an evaluation step is empty")
        return tuple(s.strip() for s in v)

    @property
    def top(self) -> int | None:
        """N of a 1..N rating; None for yes/no."""
        return None if self.scale == "yes/no" else int(self.scale.split("-")[1])

    @property
    def hash(self) -> str:
        """What identifies the definition (the record of a run names it)."""
        text = json.dumps(self.model_dump(mode="json"), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


# ---------------------------------------------------------------- the steps, written once


class StepsInput(BaseModel):
    criterion: str
    reads: str


class StepsOutput(BaseModel):
    steps: list[str] = Field(min_length=2, max_length=6)


STEPS_PROMPT: Prompt[StepsInput, StepsOutput] = Prompt(
    name="criterion_steps",
    instruction=(
        "Write the evaluation steps a careful reviewer follows to decide whether a text "
        "meets the criterion: three to five short steps, each one thing to check in what "
        "the reviewer reads, in the order to check them. Write only the steps."
    ),
    input_model=StepsInput,
    output_model=StepsOutput,
    examples=(
        (StepsInput(criterion="The answer is polite.", reads="the question, the answer"),
         StepsOutput(steps=["Read the question to know what was asked.",
                            "Read the answer for rude, dismissive or sarcastic words.",
                            "Check that it addresses the person with respect.",
                            "Decide whether the answer as a whole is polite."])),
    ),
)


def _reads_text(reads: tuple[str, ...]) -> str:
    return ", ".join(f"the {r.replace('_', ' ')}" for r in reads)


class CriterionJudge:
    """The judge of one criterion: its metric's ``compute(client, case, counts)``."""

    def __init__(self, name: str, definition: Criterion) -> None:
        self.name, self.definition = name, definition
        fields: dict[str, Any] = {r: (list[str] if r in ("contexts", "trajectory") else str, ...)
                                  for r in definition.reads}
        self.input_model = create_model(f"{_camel(name)}Input", **fields)
        self.output_model: type[BaseModel] = create_model(
            f"{_camel(name)}Verdict", meets=(bool, ...)) if definition.top is None else \
            create_model(f"{_camel(name)}Rating",
                         rating=(int, Field(ge=1, le=definition.top)), reason=(str, ""))
        self._written: weakref.WeakKeyDictionary[Any, asyncio.Task[Any]] = \
            weakref.WeakKeyDictionary()
        self.written: dict[str, tuple[str, ...]] = {}
        """The steps each judge model wrote (model -> steps), for the record of a run."""

    def prompt(self, steps: tuple[str, ...]) -> Prompt[Any, Any]:
        d = self.definition
        listed = "\n".join(f"{i}. {s}" for i, s in enumerate(steps, start=1))
        verdict = ("YES when it meets the criterion, NO when it does not." if d.top is None
                   else f"Rate from 1 (it does not meet the criterion at all) to {d.top} "
                   "(it meets it fully), and give a one-sentence reason.")
        return Prompt(
            name=self.name,
            instruction=(f"You judge {_reads_text(d.reads)} against one criterion, and only "
                         f"that criterion.\n\nCriterion: {d.criterion}\n\nEvaluation steps:\n"
                         f"{listed}\n\n{verdict}"),
            input_model=self.input_model, output_model=self.output_model,
            output="yes_no" if d.top is None else "json")

    async def steps(self, client: ChatClient, counts: JudgeCounts
                    ) -> tuple[str, ...] | JudgeFailure:
        """The definition's steps, else those the client's model writes from the
        criterion, asked once for every case judged on that client."""
        if self.definition.steps:
            return self.definition.steps
        try:
            task = self._written[client]
        except KeyError:
            task = asyncio.ensure_future(self._write(client, counts))
            self._written[client] = task
        except TypeError:  # a client that cannot be a weak key: asked each time (cached)
            task = asyncio.ensure_future(self._write(client, counts))
        return await asyncio.shield(task)

    async def _write(self, client: ChatClient, counts: JudgeCounts
                     ) -> tuple[str, ...] | JudgeFailure:
        d = self.definition
        # unaligned, and at temperature 0 with one seed: the same steps however the
        # judge is then asked (its repeats sample the verdicts, not the steps)
        got = await aligned(ask_or_unknown(client, STEPS_PROMPT, StepsInput(
            criterion=d.criterion, reads=_reads_text(d.reads)), counts, temperature=0.0,
            seed=0), None)
        if got is UNKNOWN:  # a dry run: the judge calls are counted with steps like these
            return ("(a step the model writes)",) * 4
        if isinstance(got, JudgeFailure):
            return JudgeFailure(f"{self.name}: the evaluation steps could not be written: "
                                f"{got.reason}", got.raw, got.attempts, got.code)
        steps = tuple(s.strip() for s in got.steps if s.strip())
        self.written[model_of(client)] = steps
        return steps

    async def __call__(self, client: ChatClient, case: Case, counts: JudgeCounts) -> Score:
        item = self._item(case)
        if isinstance(item, Score):
            return item
        steps = await self.steps(client, counts)
        if isinstance(steps, JudgeFailure):
            return steps.missing()
        got = await ask_weighed(client, self.prompt(steps), item, counts=counts)
        if isinstance(got, JudgeFailure):
            return got.missing()
        return self.score(got)

    def score(self, got: Weighed[Any]) -> Score:
        """The value of a judge's answer: P(yes), or the expected rating on [0, 1]."""
        top = self.definition.top
        if top is None:
            hard = bool(got.out.meets)
            at = ("meets",) if got.weighed("meets") else ()  # a word, or JSON's bool
            details: dict[str, Any] = {"verdict": "yes" if hard else "no"}
            if got.weighed(*at):
                details["hard_value"] = float(hard)
            return Score(got.chance(*at, hard=hard), details=details)
        rating = got.out.rating
        expected = got.mean("rating", hard=rating)
        details = {"rating": rating, "reason": got.out.reason}
        if got.weighed("rating"):
            details |= {"expected_rating": round(expected, 4),
                        "hard_value": (rating - 1) / (top - 1)}
        return Score((expected - 1) / (top - 1), details=details)

    def _item(self, case: Case) -> BaseModel | Score:
        """What the judge reads of ``case``; missing with the reason when it lacks it."""
        values: dict[str, Any] = {}
        for r in self.definition.reads:
            if r == "question":
                values[r] = case.question
            elif r == "answer":
                if not case.answer.strip():
                    return Score.missing("empty answer")
                values[r] = case.answer
            elif r == "contexts":
                if not case.contexts:
                    return Score.missing("no retrieved context")
                values[r] = list(case.contexts)
            elif r == "expected_answer":
                if not (case.expected_answer or "").strip():
                    return Score.missing("no expected_answer for this question")
                values[r] = case.expected_answer
            else:
                t = case.output.trajectory
                if t is None:
                    return Score.missing(NO_TRAJECTORY)
                values[r] = steps_text(t)
        return self.input_model(**values)

    def spec(self) -> MetricSpec:
        d = self.definition
        how = ("the judge's probability of yes" if d.top is None else
               f"(its probability-weighted rating 1-{d.top} - 1) / {d.top - 1}")
        return judge_spec(
            self.name, f"{d.criterion} ({how}; reads {_reads_text(d.reads)})",
            self.name.replace("_", " ").capitalize(),
            tuple(_NEEDS[r] for r in d.reads if r in _NEEDS), self,
            ask=d.criterion if d.top is None else "",
            scale="" if d.top is None else d.criterion)


def _camel(name: str) -> str:
    return "".join(p.capitalize() for p in name.split("_")) or "Criterion"


def model_of(client: Any) -> str:
    settings = getattr(client, "settings", None)
    return str(getattr(settings, "model", None) or "the judge's model")
