"""The Python API: in-memory pipelines (a plain function, an async one, a callable
object) evaluated and compared like CLI runs, and recorded in the history."""

from __future__ import annotations

import asyncio
import json

import pytest
from support.fake_llm_server import chat_reply

import ragmark
from ragmark.errors import ConfigError
from ragmark.history import list_runs

PASSAGES = {
    "renal": "Metformin is contraindicated in severe renal impairment.",
    "code": "The ICD-10 code for type 2 diabetes mellitus is E11.",
}
ITEMS = [
    {"id": "q1", "question": "When should metformin be avoided?",
     "ground_truth_contexts": [PASSAGES["renal"]], "expected_answer": "severe renal impairment"},
    {"id": "q2", "question": "What is the ICD-10 code for type 2 diabetes?",
     "ground_truth_contexts": [PASSAGES["code"]], "expected_answer": "E11"},
]


@pytest.fixture
def dataset(tmp_path):
    p = tmp_path / "set.json"
    p.write_text(json.dumps(ITEMS))
    return p


def good(question: str) -> dict:
    """Retrieves the right passage first."""
    if "metformin" in question:
        return {"answer": "severe renal impairment", "contexts": [PASSAGES["renal"]]}
    return {"answer": "E11", "contexts": [PASSAGES["code"], PASSAGES["renal"]]}


async def slow_second(question: str) -> tuple[str, list[str]]:
    """Async, and puts the right passage second for the code question."""
    await asyncio.sleep(0)
    if "metformin" in question:
        return "severe renal impairment", [PASSAGES["renal"]]
    return "It is E11.", [PASSAGES["renal"], PASSAGES["code"]]


class Broken:
    def __call__(self, question: str) -> dict:
        raise RuntimeError("index offline")


def test_a_plain_function_is_scored_and_recorded(dataset, tmp_path):
    store = tmp_path / "h.sqlite"
    report = ragmark.evaluate_pipeline(good, dataset, metrics=["mrr", "recall@1",
                                                                "exact_match"],
                                       history=store)
    assert report.value("mrr") == 1.0 and report.value("recall@1") == 1.0
    assert report.value("exact_match") == 1.0
    assert [q.answer for q in report.queries] == ["severe renal impairment", "E11"]
    assert report.config["name"] == "good"
    (row,) = list_runs(store)
    assert row.configs == ("good",) and row.questions == 2


def test_an_async_function(dataset):
    report = ragmark.evaluate_pipeline(slow_second, str(dataset), metrics=["mrr"],
                                       history=False)
    assert report.value("mrr") == pytest.approx((1 + 1 / 2) / 2)


def test_a_failing_callable_object_leaves_metrics_missing(dataset):
    report = ragmark.evaluate_pipeline(Broken(), dataset, metrics=["mrr"], history=False)
    agg = report.metrics["mrr"]
    assert agg.n == 0 and agg.missing == 2
    why = f"{Broken.__module__.replace('.', '_')}:Broken raised RuntimeError"
    assert agg.reasons == {why: 2} and report.failures == {why: 2}
    assert report.notes[0].endswith(f"the first: {why}: index offline")
    with pytest.raises(ConfigError, match="is not callable"):
        ragmark.evaluate_pipeline(42, dataset, history=False)  # type: ignore[arg-type]


def test_compare_pipelines(dataset, tmp_path):
    store = tmp_path / "h.sqlite"
    result = ragmark.compare_pipelines({"good": good, "second": slow_second}, dataset,
                                       metrics=["mrr"], history=store)
    assert result.baseline == "good"
    (row,) = result.rows
    assert (row.config, row.metric, row.baseline_mean, row.value_mean) == (
        "second", "mrr", 1.0, 0.75)
    assert list_runs(store)[0].configs == ("good", "second")


def test_options_are_checked_as_keyword_arguments(dataset):
    with pytest.raises(TypeError) as e:
        ragmark.evaluate_pipeline(good, dataset, metric=["mrr"])  # type: ignore[call-arg]
    assert str(e.value) == (
        "evaluate_pipeline() got an unexpected keyword argument 'metric'; it takes "
        "concurrency, corpus, history, input_format, judge_metrics, language, llm, "
        "max_queries, metrics, name, split, timeout")
    with pytest.raises(TypeError, match="compare_pipelines.. got an unexpected keyword "
                                        "argument 'name'; it takes baseline, compared, "):
        ragmark.compare_pipelines({"good": good}, dataset, name="x")  # type: ignore[call-arg]
    result = ragmark.compare_pipelines({"good": good, "second": slow_second}, dataset,
                                       baseline="second", compared=["mrr"], history=False,
                                       concurrency=2, timeout=30)
    assert result.baseline == "second" and result.metrics == ["mrr"]


def test_the_api_works_inside_a_running_event_loop(dataset, server):
    """A notebook or an async app: the sync API is called while a loop runs (the async
    pipeline and the judges run on a loop of their own)."""
    server.rule = lambda body: chat_reply("1")  # not a usable verdict: re-asked, missing

    async def app() -> ragmark.RunReport:
        await asyncio.sleep(0)
        return ragmark.evaluate_pipeline(
            slow_second, dataset, metrics=["mrr"], judge_metrics=["answer_relevance"],
            llm={"base_url": server.url, "model": "m"}, history=False)

    report = asyncio.run(app())
    assert report.value("mrr") == pytest.approx((1 + 1 / 2) / 2)
    agg = report.metrics["answer_relevance"]
    assert agg.n == 0 and agg.missing == 2  # the judge's answers were unusable, not 0
    assert report.llm["calls"] == 4  # each question asked, then re-asked once
