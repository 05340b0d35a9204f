"""One case a question (issue 49, item 1): every metric, judge and plugin reads the same
:class:`ragmark.case.Case`, made once from whatever source answered; what a source gives
reaches it whole, so a field added to the output needs no type between to carry it."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.doors import isolated
from support.fake_llm_server import chat_reply

from ragmark.case import Case, Context, Output, Params, earlier_turns
from ragmark.config import RunConfig
from ragmark.data import load_dataset
from ragmark.llm import LLMSettings
from ragmark.metrics import names
from ragmark.metrics.names import MetricSpec, catalogue
from ragmark.running.runner import run
from ragmark.running.task import Task
from ragmark.types import Sample, Score

DEMO = Path(__file__).resolve().parents[2] / "src" / "ragmark" / "demo"


@dataclass(frozen=True, slots=True)
class WithSteps(Output):
    """A source's output with a field ragmark has never heard of (the shape an agent's
    trajectory will take): added here, in the source, and nowhere else."""

    steps: tuple[str, ...] = ()

    def recorded(self) -> dict[str, object]:
        return {"steps": list(self.steps)}


def test_a_field_a_source_adds_reaches_every_metric_and_judge_on_one_case(server,
                                                                         monkeypatch):
    """A log whose outputs carry ``steps``: an answer metric and a judge, added as
    plugins, read them from the case (``case.output.steps``); both get the same case
    object for a question, made once, with the answer, contexts, facts and parameters."""
    ds = load_dataset(str(DEMO / "questions.json"), str(DEMO / "corpus"))
    samples = ds.samples[:3]
    outputs = {s.id: WithSteps(f"answer {i}", (Context("a passage", "doc1"),),
                               latency_s=0.5 + i, steps=tuple(f"step {n}" for n in range(i)))
               for i, s in enumerate(samples)}
    seen: dict[str, list[Case]] = {"answer": [], "judge": []}

    def steps_of(case: Case) -> Score:
        seen["answer"].append(case)
        return Score(float(len(case.output.steps)))  # type: ignore[attr-defined]

    async def judged_steps(client, case: Case, counts) -> Score:  # type: ignore[no-untyped-def]
        seen["judge"].append(case)
        got = await client.chat([{"role": "user", "content": case.answer}])
        return Score(float(len(case.output.steps)) + float(got.text))  # type: ignore[attr-defined]

    isolated(monkeypatch, names.METRICS)
    names.register(MetricSpec("steps", "answer", "none", "steps taken", needs=("answer",),
                              compute=steps_of))
    names.register(MetricSpec("judged_steps", "judge", "none", "steps taken, judged",
                              needs=("answer", "llm"), compute=judged_steps))
    server.rule = lambda body: chat_reply("10")
    cfg = RunConfig(alpha=0.25)
    report = run(ds, cfg, Task(metrics=["steps"], judge_metrics=["judged_steps"],
                               max_queries=3, llm=LLMSettings(base_url=server.url,
                                                              model="m")),
                 outputs=outputs)
    assert [q.metrics["steps"].value for q in report.queries] == [0.0, 1.0, 2.0]
    assert [q.metrics["judged_steps"].value for q in report.queries] == [10.0, 11.0, 12.0]
    by_answer = {c.answer: c for c in seen["answer"]}
    for case in seen["judge"]:
        assert by_answer[case.answer] is case  # one case a question, read by both
        assert case.contexts == ("a passage",) and case.params == Params(alpha=0.25)
        assert case.facts["latency_s"] == case.output.latency_s  # type: ignore[union-attr]
        assert case.no_answer is None
    monkeypatch.undo()
    assert "steps" not in catalogue()  # the plugins were added to a copy
    # the results keep what the source recorded, written with the details, read back
    from ragmark.results.codec import run_from_json, run_to_json

    assert [q.recorded for q in report.queries] == [{"steps": []}, {"steps": ["step 0"]},
                                                     {"steps": ["step 0", "step 1"]}]
    written = json.loads(json.dumps(run_to_json(report, include_details=True)))
    assert [q["recorded"]["steps"] for q in written["queries"]] == [
        [], ["step 0"], ["step 0", "step 1"]]  # under the source's key, not beside ragmark's
    back = run_from_json(written)
    assert [q.recorded for q in back.queries] == [q.recorded for q in report.queries]
    assert "queries" not in run_to_json(report)  # details only with --include-details


def test_a_question_without_an_answer_says_why_and_its_judges_are_not_asked(server):
    """``no_answer`` carries the reason; the judges that read the answer are missing,
    those that do not are asked."""
    from ragmark.running.judging import NO_ANSWER, judge_async

    case = Case(Sample("q1", "What is BM25?"), contexts=("BM25 is a ranking function.",),
                no_answer="generation failed: timeout")
    assert case.answer_or_none is None
    server.rule = lambda body: chat_reply(json.dumps({"verdicts": [
        {"statement": 1, "reason": "it is", "relevant": "yes"}]}))
    got, _, _ = asyncio.run(judge_async(
        [case], ["faithfulness", "context_relevance"],
        LLMSettings(base_url=server.url, model="m")))
    assert got[0]["faithfulness"] == Score.missing(NO_ANSWER)
    assert list(got[0]) == ["faithfulness", "context_relevance"]  # in the order asked
    assert server.requests  # context relevance was asked


def test_earlier_turns_come_from_this_run_then_from_the_set():
    turn2 = Sample("c#2", "And when?", extra={"conversation_id": "c", "history": [
        {"question": "Who built it?", "answer": "logged answer"}]})
    first = Sample("c#1", "Who built it?")
    assert earlier_turns([first, turn2], ["Eiffel's company.", None]) == [
        (), (("Who built it?", "Eiffel's company."),)]
    assert earlier_turns([first, turn2], [None, None]) == [
        (), (("Who built it?", "logged answer"),)]


@pytest.mark.parametrize("answer", [None, "It ranks."])
def test_a_case_from_texts(answer):
    case = Case.of("What is BM25?", answer, ["BM25 ranks."], "A ranking function.",
                   relevant=("BM25 is a ranking function.",))
    assert case.question == "What is BM25?" and case.expected_answer == "A ranking function."
    assert case.relevant == ("BM25 is a ranking function.",)
    assert case.answer_or_none == answer and case.output.contexts == (Context("BM25 ranks."),)
