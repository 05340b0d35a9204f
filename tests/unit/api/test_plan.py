"""One plan for the command line, the Python API and the pytest fixture (issue 21, item
1): a request becomes a frozen plan, checked before any work; execute runs, gates,
writes and records it; estimate dry-runs it. The three interfaces choose alike."""

from __future__ import annotations

import dataclasses
import json

import pytest
from support.beir import beir_folder
from support.cli import run_cli

from ragmark.analysis.gates import GateFailed
from ragmark.errors import ConfigError
from ragmark.history import list_runs
from ragmark.plan import CompareRequest, RunRequest, estimate, execute, plan_compare, plan_run
from ragmark.pytest_plugin import _run as fixture_run


@pytest.fixture
def data(tmp_path):
    """A BEIR folder of 25 questions over 60 documents (its corpus inside it)."""
    root, _ = beir_folder(tmp_path / "beir")
    return root, None


def test_a_plan_is_frozen_and_decided_before_any_work(data, tmp_path):
    ds, corpus = data
    plan = plan_run(RunRequest(dataset=ds, corpus=corpus, metrics="recall@20,mrr",
                               fail_under=["groundedness=0.1"], no_history=True))
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.metrics = ()  # type: ignore[misc]
    # the deepest cutoff asked for deepens top_k (the sparse default is 10), the gated
    # metric is computed besides the ones asked for, nothing is written
    assert plan.configs[0].top_k == 20
    assert plan.metrics == ("recall@20", "mrr") and plan.also == ("groundedness",)
    assert plan.targets.formats == () and plan.targets.history is None


def test_output_paths_are_checked_before_the_data_is_read(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(ConfigError, match="--output .*is a file, not a folder"):
        plan_run(RunRequest(dataset=tmp_path / "missing.json", output=str(blocker / "r")))


def test_output_means_the_json_report_in_run_as_in_compare(data, tmp_path):
    """One meaning of --output: the JSON report's path; a name without .json gets it,
    DIR/ means DIR/results.json (compare: DIR/eval.json), the other formats beside it."""
    ds, corpus = data
    for given, json_file in (("a", "a.json"), ("b.json", "b.json"), ("d/", "d/results.json"),
                             ("e.md", "e.json")):
        plan = plan_run(RunRequest(dataset=ds, corpus=corpus, metrics="mrr",
                                   output=f"{tmp_path}/{given}", formats="json,md",
                                   no_history=True))
        written = execute(plan).written
        assert written == [tmp_path / json_file, (tmp_path / json_file).with_suffix(".md")]
    plan, _ = plan_compare(CompareRequest(dataset=ds, corpus=corpus, metrics="mrr",
                                          output=str(tmp_path / "c") + "/", no_history=True))
    assert execute(plan).written == [tmp_path / "c" / "eval.json", tmp_path / "c" / "eval.md"]


def test_execute_runs_gates_writes_and_records(data, tmp_path):
    ds, corpus = data
    out, store = tmp_path / "r.json", tmp_path / "h.sqlite"
    plan = plan_run(RunRequest(dataset=ds, corpus=corpus, metrics="mrr,recall@1",
                               fail_under=["mrr=0.99"], output=str(out), history=store))
    outcome = execute(plan)
    report = outcome.report
    assert report.value("mrr@10") == pytest.approx(
        sum(q.metrics["mrr@10"].value for q in report.queries) / len(report.queries))
    assert outcome.written == [out]
    assert json.loads(out.read_text())["metrics"]["mrr@10"] == report.value("mrr@10")
    (row,) = list_runs(store)
    assert row.id == outcome.run_id
    # the verdict recorded is the gates' verdict, and the conditions say which failed:
    # BM25 over random words is far from an MRR of 0.99
    assert report.value("mrr@10") < 0.99
    (failed,) = [c.message for c in outcome.conditions if not c.passed]
    assert "mrr@10" in failed and row.verdict == "failed"


def test_estimate_counts_judge_calls_and_calls_nothing(data):
    ds, corpus = data
    plan = plan_run(RunRequest(dataset=ds, corpus=corpus, judge_metrics="faithfulness",
                               llm={"base_url": "http://127.0.0.1:9/v1", "model": "m"},
                               dry_run=True))
    est = estimate(plan)["run"]
    # faithfulness asks twice a question (the claims, then their verdicts); port 9 unused
    assert est["calls"] == 2 * 25 and est["cached"] == 0
    with pytest.raises(ConfigError, match="--judge-metrics"):
        plan_run(RunRequest(dataset=ds, corpus=corpus, dry_run=True))


def test_the_fixture_and_the_command_line_choose_alike(data, tmp_path, capsys):
    """``recall@20`` at the sparse default top_k of 10: the command line deepens top_k
    to 20, and so does the fixture now (it used to refuse the cutoff)."""
    ds, corpus = data
    out = tmp_path / "cli.json"
    code, _, _ = run_cli(["run", "--dataset", str(ds), "--metrics",
                          "recall@20,ndcg@20", "--output", str(out), "--no-history",
                          "--quiet", "--include-details"], capsys)
    assert code == 0
    cli = json.loads(out.read_text())
    got = fixture_run(ds, corpus=corpus, metrics=["recall_20", "ndcg_20"], history=False)
    assert got.report.config["top_k"] == cli["config"]["top_k"] == 20
    for m in ("recall@20", "ndcg@20"):
        assert got.value(m) == cli["metrics"][m]


def test_a_compare_plan_and_its_gates(data, tmp_path):
    ds, corpus = data
    plan, told = plan_compare(CompareRequest(
        dataset=ds, corpus=corpus, configs=["sparse"], metrics="mrr", no_history=True,
        fail_under=["sparse:mrr=2"]))
    assert told == [] and plan.compared == ("mrr",)
    outcome = execute(plan)
    assert list(outcome.result.reports) == ["sparse"]
    (failed,) = [c for c in outcome.conditions if not c.passed]
    assert "mrr" in failed.message
    with pytest.raises(GateFailed):
        from ragmark.analysis.gates import check

        check(outcome.conditions)
    with pytest.raises(ConfigError, match="no config named 'dense'"):
        plan_compare(CompareRequest(dataset=ds, corpus=corpus, configs=["sparse"],
                                    fail_under=["dense:mrr=0.5"]))
