"""The metric catalogue: one place for every metric (retrieval, answer, judge) with its
kind, cutoff rule, needs, formula and label; defaults from the needs the dataset meets
(the same lists as before); judge names parsed with the others; console labels from it;
a plugin metric through the ``ragmark.metric`` entry-point group."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
from dataclasses import replace
from pathlib import Path

import pytest
from support.cli import run_cli
from support.doors import isolated

from ragmark.data import load_dataset
from ragmark.errors import UnknownComponentError
from ragmark.metrics import names
from ragmark.metrics.names import catalogue, judge_metrics, parse_metric, parse_metrics
from ragmark.report.console import label
from ragmark.running.selection import default_metrics

DEMO = Path(__file__).resolve().parents[3] / "src" / "ragmark" / "demo"
OLD_RETRIEVAL = ["recall@3", "recall@5", "recall@10", "precision@5", "hit@5", "mrr",
                 "ndcg@10", "map"]


def test_every_metric_is_one_kind_of_object():
    names.catalogue()  # the judges join on first use (alone, this test is the first)
    assert {s.kind for s in catalogue().values()} == {"retrieval", "answer", "judge", "aggregate",
                                                 "label"}
    assert tuple(n for n, s in catalogue().items() if s.kind == "judge") == judge_metrics()
    for s in catalogue().values():
        assert s.summary and set(s.needs) <= set(names.NEEDS), s.name
    assert parse_metric("faithfulness").kind == "judge"
    assert [str(m) for m in parse_metrics("ndcg@10,context_recall")] == [
        "ndcg@10", "context_recall"]
    assert label("ndcg@10") == "nDCG@10" and label("faithfulness") == "Faithfulness"
    assert label("keyword_coverage") == "keyword_coverage"  # unchanged outputs
    assert label("grounded_ratio") == "Grounded ratio" and label("nope@3") == "nope@3"
    assert label("judged_precision@3") == "Judged precision@3"
    assert parse_metric("Relative_Recall@2").kind == "label"
    # built-ins and plugins come through one door, register: a name is there once
    built_in = [s.name for s in names._BUILTIN_SPECS]
    assert list(catalogue())[:len(built_in)] == built_in  # (a plugin a test added comes after)
    names.register(catalogue()["mrr"], plugin=False)  # the same one again: nothing
    with pytest.raises(UnknownComponentError, match="'mrr' is already there .built-in.; "
                                                    "registered cannot take its name"):
        names.register(replace(catalogue()["mrr"], summary="another"))


def test_defaults_are_the_metrics_whose_needs_the_dataset_meets(tmp_path):
    demo = load_dataset(str(DEMO / "questions.json"), str(DEMO / "corpus"))
    assert [str(m) for m in default_metrics(demo)] == [
        *OLD_RETRIEVAL, "keyword_coverage", "context_overlap", "combined_score",
        "groundedness"]
    ctx = tmp_path / "ctx.json"
    ctx.write_text(json.dumps([{"question": "q?", "expected_answer": "a",
                                "ground_truth_contexts": ["a passage long enough here"]}]))
    ds = load_dataset(str(ctx), str(DEMO / "corpus"))
    assert [str(m) for m in default_metrics(ds)] == [
        *OLD_RETRIEVAL, "context_overlap", "groundedness", "exact_match", "token_f1"]


def test_a_plugin_metric_joins_the_catalogue(monkeypatch, tmp_path, capsys):
    """A plugin reads the case (``compute(case)``), as the built-ins do; one of the old
    form ``compute(sample, answer, contexts)`` still works, with a DeprecationWarning."""
    eps = [importlib.metadata.EntryPoint(n, f"support.metric_plugin:{v}", "ragmark.metric")
           for n, v in (("short_answer", "SHORT_ANSWER"),
                        ("short_answer_old", "SHORT_ANSWER_OLD"))]
    real = importlib.metadata.entry_points
    isolated(monkeypatch, names.METRICS, reload=True)
    monkeypatch.setattr(importlib.metadata, "entry_points",
                        lambda group=None, **kw: eps if group == "ragmark.metric"
                        else real(group=group, **kw))
    with pytest.warns(DeprecationWarning, match="'short_answer_old'.*declare compute"):
        names.catalogue()
    out = tmp_path / "r.json"
    code, stdout, err = run_cli(["run", "--dataset", str(DEMO / "questions.json"), "--corpus",
                                 str(DEMO / "corpus"), "--metrics",
                                 "mrr,short_answer,short_answer_old",
                                 "--output", str(out), "--include-details"], capsys)
    assert code == 0, err
    data = json.loads(out.read_text())
    for q in data["queries"]:
        words = len(q["answer"].split())
        assert q["metrics"]["short_answer"]["value"] == (1.0 if words <= 20 else 0.0)
        assert q["metrics"]["short_answer_old"] == q["metrics"]["short_answer"]
    assert "Short answer" in stdout
    with pytest.raises(Exception, match="with a compute function"):
        names.register(names.MetricSpec("bad", "retrieval", "none", "x"))  # no compute
    with pytest.raises(Exception, match="only retrieval metrics"):
        names.register(names.MetricSpec("bad", "aggregate", "none", "x", compute=len))


def test_the_metrics_command_lists_the_catalogue(capsys):
    code, out, _ = run_cli(["metrics", "--json"], capsys)
    assert code == 0
    listed = json.loads(out)
    assert [m["name"] for m in listed] == list(catalogue())
    bpref = next(m for m in listed if m["name"] == "bpref")
    assert bpref["needs"] == ["qrels"] and bpref["kind"] == "retrieval"
    code, out, _ = run_cli(["metrics"], capsys)
    assert code == 0 and "ndcg[@k]" in out and "context_recall" in out


def test_metrics_all_is_every_metric_whose_needs_are_met(server, tmp_path, capsys,
                                                          monkeypatch):
    for var in ("RAGMARK_LLM_BASE_URL", "RAGMARK_LLM_MODEL"):
        monkeypatch.delenv(var, raising=False)
    ctx = tmp_path / "ctx.json"
    ctx.write_text(json.dumps([{"question": "What does a retriever do?",
                                "expected_answer": "It finds passages.",
                                "ground_truth_contexts": ["retrieval finds the passages"]}]))
    base = ["run", "--dataset", str(ctx), "--corpus", str(DEMO / "corpus"), "--metrics",
            "all", "--quiet", "--allow-missing"]
    out = tmp_path / "plain.json"
    code, _, err = run_cli([*base, "--output", str(out)], capsys)
    assert code == 0, err
    got = list(json.loads(out.read_text())["metrics"])
    assert not set(got) & set(judge_metrics())  # no endpoint: no judge
    dense = importlib.util.find_spec("sentence_transformers") is not None
    assert ("answer_similarity" in got) == dense
    assert {"r_precision@10", "exact_match", "token_f1", "groundedness"} <= set(got)
    assert "bpref@10" not in got  # a context set has no qrels
    out = tmp_path / "judged.json"
    code, _, err = run_cli([*base, "--llm-base-url", server.url, "--llm-model", "m",
                            "--output", str(out)], capsys)
    assert code == 0, err
    got = list(json.loads(out.read_text())["metrics"])
    agents = {"task_completion", "argument_correctness"}  # they need a trajectory
    assert set(judge_metrics()) - agents <= set(got) and not agents & set(got)


def test_compare_metrics_all(tmp_path, capsys, monkeypatch):
    for var in ("RAGMARK_LLM_BASE_URL", "RAGMARK_LLM_MODEL"):
        monkeypatch.delenv(var, raising=False)
    out = tmp_path / "c"
    code, _, err = run_cli(["compare", "--dataset", str(DEMO / "questions.json"), "--corpus",
                            str(DEMO / "corpus"), "--configs", "sparse", "--metrics", "all",
                            "--output", str(out), "--quiet"], capsys)
    assert code == 0, err
    got = json.loads((tmp_path / "c.json").read_text())["configs"]["sparse"]["metrics"]
    assert {"r_precision@10", "keyword_coverage", "groundedness", "mrr@10"} <= set(got)
    assert not set(got) & set(judge_metrics())


def test_a_label_metric_asked_of_run_or_compare_says_which_command_computes_it(
        tmp_path, capsys):
    """Issue 34: the label metrics are catalogue entries (kind label); run and compare
    refuse them before any work, through --metrics and through a gate."""
    data = ["--dataset", str(DEMO / "questions.json"), "--corpus", str(DEMO / "corpus"),
            "--output", str(tmp_path / "r"), "--quiet"]
    for args in (["run", *data, "--metrics", "mrr,judged_precision@3"],
                 ["run", *data, "--fail-under", "answer_presence@2=0.5"],
                 ["compare", *data, "--configs", "sparse", "--metrics", "accuracy@1"]):
        code, _, err = run_cli(args, capsys)
        assert code == 2 and "is a label metric: 'ragmark label' computes it" in err, args
        assert not (tmp_path / "r.json").exists()


def test_every_name_a_table_shows_is_a_metric_name(tmp_path, capsys):
    """The aggregates a table shows (grounded_ratio, aurc) are names --metrics, the
    gates and ``ragmark metrics`` know (issue 33, item 18); aurc asked for where no
    question recorded a confidence is missing with why, and the run exits 1."""
    log = tmp_path / "log.jsonl"
    log.write_text("\n".join(json.dumps(r) for r in [
        {"question": "q1?", "answer": "Mars is red.", "contexts": ["Mars is a red planet."],
         "expected_answer": "Mars is red.", "confidence": 0.9},
        {"question": "q2?", "answer": "Blue.", "contexts": ["Mars is a planet."],
         "expected_answer": "red", "confidence": 0.2}]) + "\n")
    out = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--outputs", str(log), "--output", str(out),
                            "--no-history", "--quiet"], capsys)
    assert code == 0, err
    shown = list(json.loads(out.read_text())["metrics"])
    assert {"aurc", "grounded_ratio"} <= set(shown)
    assert [str(parse_metric(m)) for m in shown] == shown
    code, listed, _ = run_cli(["metrics"], capsys)
    assert all(f"\n{m} " in "\n" + listed for m in shown if "@" not in m)
    # asked for by name: the aggregate and what it is made from; gated by name
    code, _, err = run_cli(["run", "--outputs", str(log), "--metrics", "aurc,grounded_ratio",
                            "--fail-under", "grounded_ratio=0.6", "--output", str(out),
                            "--no-history", "--quiet"], capsys)
    data = json.loads(out.read_text())
    # q1 worst-first risk: answering q1 (right) 0, then both 1/2: aurc = (0 + 0.5) / 2
    assert data["metrics"]["aurc"] == 0.25 and data["metrics"]["grounded_ratio"] == 0.5
    assert code == 1 and "grounded_ratio" in err
    for row in (0, 1):
        lines = log.read_text().splitlines()
        lines[row] = json.dumps({k: v for k, v in json.loads(lines[row]).items()
                                 if k != "confidence"})
        log.write_text("\n".join(lines) + "\n")
    code, _, err = run_cli(["run", "--outputs", str(log), "--metrics", "aurc", "--no-history",
                            "--quiet"], capsys)
    assert code == 1 and "aurc got no value for any of 2 questions: no confidence" in err


def test_evaluate_loads_no_llm_stack():
    """Parsing retrieval metric names needs nothing of the judges (issue 33, item 24):
    ``ragmark.evaluate`` on a fresh interpreter imports neither httpx nor pydantic nor the
    judges; naming a judge metric brings them."""
    import subprocess
    import sys

    code = ("import sys, ragmark\n"
            "v = ragmark.evaluate({'q': {'d1': 1}}, {'q': {'d1': 1.0, 'd2': 0.5}},"
            " ['ndcg@10', 'recall@5', 'mrr', 'P@5'])\n"
            "assert v == {'ndcg@10': 1.0, 'recall@5': 1.0, 'mrr': 1.0, 'precision@5': 0.2}, v\n"
            "print(sorted(m for m in ('httpx', 'pydantic', 'ragmark.judges', 'ragmark.llm')"
            " if m in sys.modules))\n"
            "from ragmark.metrics.names import parse_metrics\n"
            "parse_metrics('faithfulness,claims')\n"
            "print('ragmark.judges' in sys.modules)\n")
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split("\n")
    assert got[:2] == ["[]", "True"]


def test_every_name_of_the_catalogue_is_known_everywhere_a_user_gives_one(capsys):
    """Each metric the catalogue holds (a table may show it) is read by --metrics, the
    gates and the pytest helper, labelled by the reports and listed by `ragmark
    metrics` (issue 34: metric names live in the catalogue only)."""
    import json

    from support.cli import run_cli

    from ragmark.analysis.gates import metric_name
    from ragmark.metrics.names import catalogue, parse_metrics
    from ragmark.report.console import label
    from ragmark.testing import metric_key

    code, out, _ = run_cli(["metrics", "--json"], capsys)
    assert code == 0
    listed = json.loads(out)
    listed_names = {m["name"] for m in listed} if isinstance(listed, list) else set(listed)
    for name, spec in catalogue().items():
        text = f"{name}@5" if spec.cutoff == "required" else name
        if spec.kind == "label":  # known everywhere, computed by `ragmark label` only
            with pytest.raises(UnknownComponentError, match=f"{text} is a label metric: "
                               "'ragmark label' computes it"):
                parse_metrics(text)
        else:
            assert str(parse_metrics(text)[0]) == text, name
        assert metric_name(text) == text, name
        assert metric_key(text) == text, name
        assert label(text), name
        assert name in listed_names, name


def test_a_metrics_parameters_are_typed_in_its_spec(capsys):
    """Issue 49, item 2: the config keys a metric reads are declared in its spec, typed as
    ir_measures' ParamInfo (name, type, default, meaning), each a field of the case's
    Params; `ragmark metrics` lists them, and the config's value reaches the metric."""
    import dataclasses

    from ragmark.case import Case, Params, params_of
    from ragmark.config import RunConfig
    from ragmark.types import Sample

    read = {p.name for s in names.catalogue().values() for p in s.params}
    assert read == {f.name for f in dataclasses.fields(Params)}  # each read, none unknown
    alpha = names.catalogue()["combined_score"].params
    assert [(p.name, p.dtype, p.default) for p in alpha] == [("alpha", float, 0.5)]
    code, out, _ = run_cli(["metrics", "--json"], capsys)
    listed = {m["name"]: m["params"] for m in json.loads(out)}
    assert listed["groundedness"][0]["name"] == "grounded_threshold"
    assert listed["refusal"][0]["type"] == "tuple" and listed["mrr"] == []
    # coverage 1/2 (one of two keywords), overlap 1 (every token in the gold context):
    # 0.25 * 0.5 + 0.75 * 1 = 0.875 at alpha 0.25 (0.75 at the default 0.5)
    params = params_of(RunConfig(alpha=0.25))
    case = Case(Sample("q", "q?", expected_keywords=("bm25", "dense")), "bm25 ranks",
                gold=("bm25 ranks documents",), params=params)
    assert names.catalogue()["combined_score"].compute(case).value == pytest.approx(0.875)
