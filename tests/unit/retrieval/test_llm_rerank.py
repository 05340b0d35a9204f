"""The LLM pointwise reranker against a scripted local OpenAI-protocol server: grades
order the passages, ties keep retrieval order, failures go below and are counted, a
second run is served from the cache, an endpoint that does not answer is an error."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from support.fake_llm_server import Reply, chat_reply

from ragmark.cli import main
from ragmark.config import load_config
from ragmark.errors import ConfigError
from ragmark.retrieval.llm_rerank import LLMReranker, LLMRerankerTable, order_scores


def chat(text: str) -> Reply:
    return chat_reply(text, 20, 4)


def passage_of(body) -> str:
    """The passage of the question asked (the last one in the messages; a re-ask comes
    after it, the few-shot examples before)."""
    text = "\n".join(m["content"] for m in body["messages"])
    return re.findall(r'<data name="passage">\n(.*?)\n</data>', text, re.S)[-1]


def grading(body):
    """apple -> 3, pear -> 2, plum -> 1, 'broken' -> garbage, anything else -> 0."""
    p = passage_of(body)
    if "broken" in p:
        return chat("I cannot say.")
    for word, grade in (("apple", 3), ("pear", 2), ("plum", 1)):
        if word in p:
            return chat(f'Sure: {{"grade": {grade}}}')
    return chat('{"grade": 0}')


TEXTS = ["a plum tree", "nothing here", "an apple", "a broken text", "a pear", "plum jam"]


def test_order_scores_sorts_by_grade_then_retrieval_order():
    s = order_scores([1.0, 0.0, 3.0, None, 2.0, 1.0])
    assert np.argsort(-s, kind="stable").tolist() == [2, 4, 0, 5, 1, 3]
    assert s[3] < s[1]  # ungraded below a judged 0
    assert np.all(s[[0, 5]] - 1.0 <= 0.5) and s[0] > s[5]


def test_grades_reorder_passages_and_failures_are_counted(server):
    server.rule = grading
    rr = LLMRerankerTable(base_url=server.url, model="test-model", max_retries=0).build()
    try:
        s = rr.score("which fruit?", TEXTS)
        order = np.argsort(-s, kind="stable").tolist()
        assert [TEXTS[i] for i in order] == ["an apple", "a pear", "a plum tree", "plum jam",
                                             "nothing here", "a broken text"]
        notes, acct = rr.summary()
    finally:
        rr.close()
    # six passages, the broken one asked twice (one re-ask)
    assert len(server.requests) == 7
    assert acct["passages_graded"] == 5 and acct["passages_failed"] == 1
    assert acct["calls"] == 7 and acct["cache_hits"] == 0 and acct["judge_reasks"] == 1
    assert len(notes) == 1 and notes[0].startswith("llm reranker: 1 of 6 passages could not")

    again = LLMRerankerTable(base_url=server.url, model="test-model", max_retries=0).build()
    try:
        assert np.array_equal(again.score("which fruit?", TEXTS), s)
        assert again.summary()[1]["cache_hits"] == 7
    finally:
        again.close()
    assert len(server.requests) == 7  # all from the cache


def test_binary_scale_uses_the_yes_no_label(server):
    server.rule = lambda body: chat("YES" if "apple" in passage_of(body) else "no.")
    rr = LLMRerankerTable(scale="binary", base_url=server.url, model="test-model").build()
    try:
        s = rr.score("q", ["a pear", "an apple", "a plum"])
    finally:
        rr.close()
    assert np.argsort(-s, kind="stable").tolist() == [1, 0, 2]


def test_an_endpoint_that_does_not_answer_is_an_error():
    rr = LLMRerankerTable(base_url="http://127.0.0.1:9/v1", model="m", max_retries=0,
                          timeout=1).build()
    try:
        with pytest.raises(ConfigError, match="llm reranker's endpoint .* did not answer"):
            rr.score("q", ["a"])
    finally:
        rr.close()


def test_without_an_endpoint_the_error_names_what_to_set(monkeypatch):
    monkeypatch.delenv("RAGMARK_LLM_BASE_URL", raising=False)
    with pytest.raises(ConfigError, match="llm reranker needs an endpoint"):
        LLMReranker()
    with pytest.raises(ConfigError, match="template needs scale"):
        LLMRerankerTable(template="{question} {passage}", base_url="http://x", model="m").build()


def test_auto_reranker_is_the_llm_one_when_only_an_endpoint_is_set(monkeypatch):
    monkeypatch.delenv("RAGMARK_RERANKER_MODEL", raising=False)
    monkeypatch.setenv("RAGMARK_LLM_BASE_URL", "http://127.0.0.1:1/v1")
    monkeypatch.setenv("RAGMARK_LLM_MODEL", "judge-model")
    cfg = load_config("hybrid-rerank")
    assert cfg.reranker is not None and cfg.reranker.name == "llm"
    assert cfg.reranker.params == {}  # the endpoint comes from RAGMARK_LLM_* at run time


DEMO = Path(__file__).resolve().parents[3] / "src" / "ragmark" / "demo"


def test_run_with_the_llm_reranker_reorders_and_accounts(server, tmp_path, capsys):
    """`ragmark run` with [reranker] name = "llm": passages naming 'reranker' are graded
    3 and rise to the top; every passage graded is in the report's reranker block."""
    server.rule = lambda body: chat('{"grade": 3}' if "rerank" in passage_of(body).lower()
                                    else '{"grade": 0}')
    cfg = tmp_path / "llm-rerank.toml"
    cfg.write_text(f'name = "bm25-llm"\ntop_k = 5\n[reranker]\nname = "llm"\n'
                   f'base_url = "{server.url}"\nmodel = "test-model"\n')
    out = tmp_path / "r.json"
    args = ["run", "--dataset", str(DEMO / "questions.json"), "--corpus", str(DEMO / "corpus"),
            "--config", str(cfg), "--max-queries", "3", "--skip-generation",
            "--metrics", "mrr,recall@5,ndcg@5", "--include-details", "--output", str(out),
            "--quiet"]
    with pytest.raises(SystemExit) as e:
        main(args)
    assert e.value.code == 0
    data = json.loads(out.read_text())
    block = data["llm"]["reranker"]
    # 3 questions x top 5 chunks, each graded once (the report ranks documents)
    assert block["passages_graded"] == 15 and block["passages_failed"] == 0
    assert block["calls"] == 15 == len(server.requests)
    for q in data["queries"]:
        top = [r for r in q["retrieved"] if r["score"] >= 3]
        # documents with a graded-3 passage come first
        assert [r["rank"] for r in top] == list(range(1, len(top) + 1))
    assert any(r["score"] >= 3 for q in data["queries"] for r in q["retrieved"])
    assert "LLM reranker (test-model): " in capsys.readouterr().out
    with pytest.raises(SystemExit) as e:
        main([*args, "--judge-metrics", "context_relevance", "--dry-run"])
    assert e.value.code == 2
    assert "--dry-run cannot run reranker 'llm'" in capsys.readouterr().err


def test_a_configs_language_reaches_the_reranker_judge(server, tmp_path, capsys):
    """language = "de": the llm reranker's judge is told the texts are German (recorded
    in the config); without a language its prompt is unchanged."""
    server.rule = lambda body: chat('{"grade": 1}')
    for lang in (None, "de"):
        cfg = tmp_path / f"{lang}.toml"
        said = "" if lang is None else f"language = {lang!r}"
        cfg.write_text(f'name = "x"\ntop_k = 2\n{said}\n[reranker]\nname = "llm"\n'
                       f'base_url = "{server.url}"\nmodel = "test-model"\n')
        server.requests.clear()
        out = tmp_path / f"{lang}.json"
        with pytest.raises(SystemExit) as e:
            main(["run", "--dataset", str(DEMO / "questions.json"), "--corpus",
                  str(DEMO / "corpus"), "--config", str(cfg), "--max-queries", "1",
                  "--skip-generation", "--metrics", "mrr", "--output", str(out),
                  "--no-history", "--quiet"])
        assert e.value.code == 0
        told = ["The texts are in German" in r.body["messages"][0]["content"]
                for r in server.requests]
        assert told and (all(told) if lang else not any(told))
        assert json.loads(out.read_text())["config"]["reranker"].get("language") == lang
