"""A Python callable as the pipeline, imported from a module in the test's folder."""

from __future__ import annotations

import sys
import textwrap

import pytest

from ragmark.config import load_configs
from ragmark.data import load_dataset
from ragmark.errors import ConfigError
from ragmark.pipelines.base import Context
from ragmark.pipelines.config import PythonPipelineConfig
from ragmark.running.runner import run
from ragmark.running.source import ask_all

MODULE = '''
import asyncio
import time

PASSAGES = {
    "bm25": "BM25 ranks documents using term frequency and inverse document frequency.",
    "rerank": "A reranker reorders the candidate passages with a stronger model.",
}

def answer(question):
    if "BM25" in question:
        return {"answer": "BM25 ranks documents",
                "contexts": ["Something unrelated about tokenisers.", PASSAGES["bm25"]]}
    if "reranker" in question:
        return ("It reorders candidates", [{"text": PASSAGES["rerank"], "id": "rr", "score": 3}])
    if "slow" in question:
        time.sleep(1.0)
        return {"answer": "late", "contexts": []}
    if "crash" in question:
        raise ValueError("no index loaded")
    return 42

async def answer_async(question):
    await asyncio.sleep(0)
    return {"answer": question.upper(), "contexts": [question]}
'''


@pytest.fixture
def module(tmp_path, monkeypatch):
    """A module named after the test's folder (unique), importable from python_path."""
    name = "rag_" + tmp_path.name.replace("-", "_")
    (tmp_path / "svc").mkdir()
    (tmp_path / "svc" / f"{name}.py").write_text(textwrap.dedent(MODULE))
    monkeypatch.setattr(sys, "path", list(sys.path))
    yield name
    sys.modules.pop(name, None)


def config(tmp_path, module, function="answer", extra=""):
    p = tmp_path / f"{function}.toml"
    p.write_text(f'name = "py-{function}"\n[pipeline]\nkind = "python"\n'
                 f'target = "{module}:{function}"\npython_path = ["svc"]\n{extra}')
    return p


def test_dicts_pairs_exceptions_bad_values_and_timeouts_each_get_their_output(tmp_path, module):
    cfg = load_configs(config(tmp_path, module, extra="timeout = 0.3\nconcurrency = 2\n"))[0]
    assert cfg.pipeline.python_path == [str((tmp_path / "svc").resolve())]
    outs, retries = ask_all(cfg.pipeline, ["What does BM25 rank?", "What is a reranker?",
                                           "crash now", "a slow one", "something else"])
    assert retries == 0
    bm25, rr, crash, slow, other = outs
    assert bm25.answer == "BM25 ranks documents" and bm25.error is None
    assert [c.text for c in bm25.contexts][0] == "Something unrelated about tokenisers."
    assert rr.contexts == (Context("A reranker reorders the candidate passages with a stronger "
                                   "model.", "rr", None, 3.0),)
    assert crash.error == f"{module}:answer raised ValueError"
    assert crash.details == {"message": "no index loaded"}
    assert slow.error == f"timed out: {module}:answer gave no answer within 0.3 s"
    assert other.error == (f"{module}:answer returned a bad value: expected a mapping "
                           "{'answer': str, 'contexts': [...]} or a pair (answer, contexts), "
                           "got a number")
    assert other.shape_error and other.details == {"response": "42"}
    assert all(o.latency_s is not None for o in outs)
    assert slow.latency_s >= 0.3


def test_an_async_function_is_awaited(tmp_path, module):
    cfg = PythonPipelineConfig(kind="python", target=f"{module}:answer_async",
                               python_path=[str(tmp_path / "svc")], concurrency=3)
    outs, _ = ask_all(cfg, ["abc", "de"])
    assert [(o.answer, [c.text for c in o.contexts]) for o in outs] == [
        ("ABC", ["abc"]), ("DE", ["de"])]


def test_a_run_scores_the_answers_and_records_failures(tmp_path, module):
    ds_path = tmp_path / "set.json"
    ds_path.write_text(
        '[{"id": "a", "question": "What does BM25 rank?", "ground_truth_contexts": '
        '["BM25 ranks documents using term frequency and inverse document frequency."]},'
        ' {"id": "b", "question": "crash please", "ground_truth_contexts": '
        '["A reranker reorders the candidate passages with a stronger model."]}]')
    cfg = load_configs(config(tmp_path, module))[0]
    report = run(load_dataset(ds_path), cfg)
    a, b = report.queries
    assert a.metrics["mrr"].value == 1 / 2  # the passage is the second context
    assert a.metrics["precision@5"].value == 1 / 5
    assert a.answer == "BM25 ranks documents"
    assert b.metrics["mrr"].reason == f"{module}:answer raised ValueError"
    assert b.metrics["groundedness"].reason == f"{module}:answer raised ValueError"
    assert report.metrics["mrr"].value == 1 / 2
    assert report.metrics["mrr"].reasons == {f"{module}:answer raised ValueError": 1}
    assert report.notes == [f"pipeline {module}:answer: 1 of 2 questions failed "
                            f"({module}:answer raised ValueError (1 question)); their metrics "
                            "are missing with the reason; the first: "
                            f"{module}:answer raised ValueError: no index loaded",
                            "fewer contexts than a cutoff: @3 for 1 of 1 questions, @5 for 1 "
                            "of 1 questions, @10 for 1 of 1 questions; places past the end of "
                            "a ranking count as not relevant (as in trec_eval)"]
    assert report.short_rankings == {3: 1, 5: 1, 10: 1}
    assert report.config["pipeline"]["target"] == f"{module}:answer"
    assert "retriever" not in report.config and "pipeline_s" in report.timings


def test_a_target_that_does_not_import_is_a_config_error_at_load(tmp_path, module):
    p = tmp_path / "x.toml"
    p.write_text('[pipeline]\nkind = "python"\ntarget = "no_such_module_xyz:answer"\n')
    with pytest.raises(ConfigError) as e:
        load_configs(p)
    assert str(e.value) == (
        f"{p}, key 'pipeline.target': cannot import 'no_such_module_xyz': No module named "
        "'no_such_module_xyz'; put its folder in 'python_path' (relative to the config "
        "file) or on PYTHONPATH")
    with pytest.raises(ConfigError) as e:
        load_configs(config(tmp_path, module, function="nope"))
    assert str(e.value).endswith(f"key 'pipeline.target': '{module}' has no attribute 'nope'")
    p.write_text('[pipeline]\nkind = "python"\ntarget = "just_a_module"\n')
    with pytest.raises(ConfigError) as e:
        load_configs(p)
    assert "key 'pipeline.target': expected 'module:function'" in str(e.value)


IDS_MODULE = '''
def answer(question):
    return {"answer": "see the files",
            "contexts": [{"text": "Nothing relevant in this chunk at all.", "doc_id": "b.txt"},
                         {"text": "The first chunk of a.", "doc_id": "a.txt", "id": "a#0"},
                         {"text": "The second chunk of a.", "doc_id": "a.txt", "id": "a#1"}]}
'''


def test_context_ids_are_matched_against_file_name_ground_truth(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "path", list(sys.path))
    name = "ids_" + tmp_path.name.replace("-", "_")
    (tmp_path / f"{name}.py").write_text(IDS_MODULE)
    (tmp_path / "corpus").mkdir()
    for f in ("a.txt", "b.txt"):
        (tmp_path / "corpus" / f).write_text(f"The text of {f}, long enough to chunk.")
    (tmp_path / "kw.json").write_text(
        '[{"id": "k1", "question": "Where?", "expected_keywords": ["files"], '
        '"must_be_grounded_in": ["a.txt"]}]')
    p = tmp_path / "ids.toml"
    p.write_text(f'[pipeline]\nkind = "python"\ntarget = "{name}:answer"\npython_path = ["."]\n')
    report = run(load_dataset(tmp_path / "kw.json"), load_configs(p)[0])
    sys.modules.pop(name, None)
    q = report.queries[0]
    assert report.config["unit"] == "document"  # file-name ground truth: per document
    assert [(r.rank, r.id, r.grade) for r in q.retrieved] == [(1, "b.txt", 0), (2, "a.txt", 1)]
    assert q.metrics["mrr"].value == 1 / 2
    assert q.metrics["keyword_coverage"].value == 1.0


def test_every_question_failing_exits_1_with_the_first_message(tmp_path, module, capsys):
    from support.cli import run_cli

    ds_path = tmp_path / "set.json"
    ds_path.write_text(
        '[{"id": "a", "question": "crash one", "ground_truth_contexts": '
        '["BM25 ranks documents using term frequency and inverse document frequency."]},'
        ' {"id": "b", "question": "crash two", "ground_truth_contexts": '
        '["A reranker reorders the candidate passages with a stronger model."]}]')
    out = tmp_path / "r.json"
    code, stdout, err = run_cli(["run", "--dataset", str(ds_path), "--config",
                                 str(config(tmp_path, module)), "--output", str(out),
                                 "--quiet"], capsys)
    assert code == 1 and out.exists()  # the results are written all the same
    assert err == (f"gate failed: every question failed: {module}:answer raised ValueError "
                   "(2 questions)\n")
    assert (f"the first: {module}:answer raised ValueError: no index loaded"
            in " ".join(stdout.split()))
    code, _, _ = run_cli(["run", "--dataset", str(ds_path), "--config",
                          str(config(tmp_path, module)), "--output", str(out),
                          "--allow-missing", "--quiet"], capsys)
    assert code == 0
