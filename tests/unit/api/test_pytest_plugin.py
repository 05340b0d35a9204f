"""The pytest plugin, exercised with pytester: a user's test file with ragmark_run."""

from __future__ import annotations

from pathlib import Path

DEMO = Path(__file__).resolve().parents[3] / "src" / "ragmark" / "demo"
FOREIGN = Path(__file__).resolve().parents[1] / "data" / "foreign"

USER_TESTS = f'''
import pytest

DATASET = {str(DEMO / "questions.json")!r}
CORPUS = {str(DEMO / "corpus")!r}


def test_quality(ragmark_run):
    report = ragmark_run(dataset=DATASET, corpus=CORPUS)
    report.assert_at_least(ndcg_10=0.6, mrr=0.5)
    assert report.value("recall@5") == 1.0


def test_too_strict(ragmark_run):
    report = ragmark_run(dataset=DATASET, corpus=CORPUS, metrics=["precision@5", "mrr"])
    report.assert_at_least(precision_5=0.9)


def test_no_regression_against_the_last_run(ragmark_run):
    first = ragmark_run(dataset=DATASET, corpus=CORPUS)
    again = ragmark_run(dataset=DATASET, corpus=CORPUS)
    again.assert_no_regression("last", metrics=["mrr", "ndcg@10"])


def test_a_planted_regression(ragmark_run, tmp_path):
    chunky = tmp_path / "chunky.toml"
    chunky.write_text('name = "sparse"\\nunit = "chunk"\\n[chunker]\\nname = "fixed"\\n'
                      'size = 120\\noverlap = 0\\n')
    ragmark_run(dataset=DATASET, corpus=CORPUS, config=str(chunky))
    now = ragmark_run(dataset=DATASET, corpus=CORPUS)
    now.assert_no_regression("last", metrics=["precision@5"])


def test_the_first_run_is_not_gated(ragmark_run, tmp_path):
    other = tmp_path / "other.toml"
    other.write_text('name = "first-of-its-kind"\\n')
    report = ragmark_run(dataset=DATASET, corpus=CORPUS, config=str(other))
    report.assert_no_regression("last", metrics=["mrr"])


def test_an_in_memory_pipeline(ragmark_run):
    def answer(question):
        return {{"answer": "retriever and generator", "contexts": ["A RAG pipeline has a "
                 "retriever and a generator."]}}
    report = ragmark_run(dataset=DATASET, corpus=CORPUS, pipeline=answer, history=False,
                         metrics=["keyword_coverage"])
    assert report.run_id is None and report.value("keyword_coverage") > 0


def test_a_ragas_log_in_german(ragmark_run):
    report = ragmark_run(outputs={str(FOREIGN / "ragas_outputs.jsonl")!r}, metrics=["mrr"],
                         history=False, input_format="ragas", language="de")
    assert report.value("mrr") == 0.75 and report.report.config["language"] == "de"
'''


def test_the_fixture_in_a_users_test_suite(pytester, tmp_path, monkeypatch):
    monkeypatch.setenv("RAGMARK_HISTORY", str(tmp_path / "history.sqlite"))
    pytester.makepyfile(test_rag=USER_TESTS)
    # in a process of its own: an in-process run drops the modules first imported inside
    # it, and the command line imports its commands' modules only when they are used
    result = pytester.runpytest_subprocess("-q", "-rs", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=4, failed=2, skipped=1)  # issue 25: the first run skips
    assert "no earlier run of 'first-of-its-kind' on this dataset" in result.stdout.str()
    text = result.stdout.str()
    assert "ragmark: precision@5 = 0.2250 < 0.9 over 8 questions; worst: q1 " in text
    assert "FAIL precision@5 vs run" in text and "0.6750 -> 0.2250" in text
    assert "; worse: q" in text
