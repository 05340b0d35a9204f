"""The API reranker against the scripted server's /rerank (Cohere/Jina protocol): scores
order the passages, each (endpoint, model, query, passage) score is cached so only new
passages are sent, requests are batched, concurrent, retried and counted, failures go
below and are noted, and `ragmark run` with [reranker] name = "api" uses it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from support.fake_llm_server import Reply, embed_tokens, fake_relevance

from ragmark.cli import main
from ragmark.errors import ConfigError
from ragmark.retrieval.api_rerank import APIReranker

TEXTS = ["apples and pears", "nothing here", "red apples grow", "which apples are red"]
QUERY = "which apples are red"


def reranker(server, **kw) -> APIReranker:
    return APIReranker(base_url=server.url, model="rerank-model", **kw)


def test_scores_come_from_the_endpoint_in_input_order(server, monkeypatch):
    monkeypatch.setenv("RERANK_KEY", "sk-secret")
    rr = reranker(server, api_key_env="RERANK_KEY")
    try:
        s = rr.score(QUERY, TEXTS)
        notes, acct = rr.summary()
    finally:
        rr.close()
    expected = [fake_relevance(QUERY, t) for t in TEXTS]
    assert np.allclose(s, expected, rtol=1e-6)
    assert np.argsort(-s).tolist() == [3, 2, 0, 1]
    (req,) = server.requests
    assert req.path == "/v1/rerank"
    assert req.body == {"model": "rerank-model", "query": QUERY, "documents": TEXTS,
                        "top_n": 4, "return_documents": False}
    assert req.headers["Authorization"] == "Bearer sk-secret"
    tokens = sum(embed_tokens(QUERY) + embed_tokens(t) for t in TEXTS)
    assert acct["calls"] == 1 and acct["prompt_tokens"] == tokens
    assert acct["passages_scored"] == 4 and acct["passages_failed"] == 0 and notes == []
    assert acct["endpoint"] == server.url and acct["model"] == "rerank-model"


def test_a_second_run_sends_only_the_passages_not_scored_yet(server):
    rr = reranker(server)
    try:
        first = rr.score(QUERY, TEXTS)
    finally:
        rr.close()
    again = reranker(server)
    try:
        second = again.score(QUERY, [*TEXTS, "red red apples"])
        acct = again.summary()[1]
    finally:
        again.close()
    assert np.array_equal(second[:4], first)
    assert len(server.requests) == 2
    assert server.requests[1].body["documents"] == ["red red apples"]
    assert acct["calls"] == 1 and acct["cache_hits"] == 4
    # another model at the same endpoint shares nothing
    other = APIReranker(base_url=server.url, model="other-model")
    try:
        other.score(QUERY, TEXTS[:1])
    finally:
        other.close()
    assert len(server.requests) == 3


def test_batches_go_out_concurrently_and_questions_too(server):
    server.rule = lambda body: Reply(body=None, delay=0.2)
    rr = reranker(server, batch_size=2, concurrency=4)
    try:
        got = rr.score_many(["q one", "q two", "q three"], [TEXTS, TEXTS[:2], []])
    finally:
        rr.close()
    assert [len(g) for g in got] == [4, 2, 0]
    assert len(server.requests) == 3  # 2 + 1 batches, nothing for the empty list
    assert all(len(r.body["documents"]) <= 2 for r in server.requests)
    assert server.max_active == 3


def test_a_failed_batch_goes_below_and_is_noted(server):
    def rule(body):
        if any("broken" in d for d in body["documents"]):
            return Reply(status=400, body={"error": "document too long"})
        return None

    server.rule = rule
    rr = reranker(server, batch_size=1, max_retries=0)
    try:
        s = rr.score(QUERY, ["a broken one", "red apples", "plain"])
        notes, acct = rr.summary()
    finally:
        rr.close()
    assert np.argsort(-s, kind="stable").tolist() == [1, 2, 0]
    assert acct["passages_failed"] == 1 and acct["failures"] == 1
    assert notes and notes[0].startswith("api reranker: 1 of 3 passages got no score")
    assert "HTTP 400" in notes[0]


def test_an_answer_missing_a_score_is_retried_then_counted(server):
    bad = Reply(body={"results": [{"index": 0, "relevance_score": 0.5}]})
    server.queue.extend([bad, Reply(status=429, headers={"Retry-After": "0"})])
    rr = reranker(server, max_retries=2)
    rr.settings = rr.client.settings = rr.settings.model_copy(update={"backoff_base": 0.0})
    try:
        s = rr.score(QUERY, TEXTS[:2])
        acct = rr.summary()[1]
    finally:
        rr.close()
    assert len(server.requests) == 3 and acct["retries"] == 2 and acct["failures"] == 0
    assert np.allclose(s, [fake_relevance(QUERY, t) for t in TEXTS[:2]], rtol=1e-6)


def test_settings_are_checked_when_built(monkeypatch):
    monkeypatch.setenv("RAGMARK_LLM_BASE_URL", "http://127.0.0.1:1/v1")
    with pytest.raises(ConfigError, match="api reranker needs 'base_url'"):
        APIReranker(model="m")  # the chat LLM's endpoint is not a rerank endpoint
    with pytest.raises(ConfigError, match="needs 'model'"):
        APIReranker(base_url="http://x/v1")
    with pytest.raises(ConfigError, match="base_url 'localhost:8080': base_url must be an http"):
        APIReranker(base_url="localhost:8080", model="m")
    with pytest.raises(ConfigError, match="batch_size must be a positive integer"):
        APIReranker(base_url="http://x/v1", model="m", batch_size=0)


DEMO = Path(__file__).resolve().parents[3] / "src" / "ragmark" / "demo"


def run_args(cfg: Path, out: Path) -> list[str]:
    return ["run", "--dataset", str(DEMO / "questions.json"), "--corpus", str(DEMO / "corpus"),
            "--config", str(cfg), "--max-queries", "4", "--skip-generation",
            "--metrics", "mrr,recall@5", "--include-details", "--output", str(out)]


def test_run_with_the_api_reranker(server, tmp_path, capsys):
    cfg = tmp_path / "api-rerank.toml"
    cfg.write_text(f'name = "bm25-api"\ntop_k = 5\n[reranker]\nname = "api"\n'
                   f'base_url = "{server.url}"\nmodel = "rerank-model"\n')
    out = tmp_path / "r.json"
    with pytest.raises(SystemExit) as e:
        main(run_args(cfg, out))
    assert e.value.code == 0
    data = json.loads(out.read_text())
    block = data["llm"]["reranker"]
    assert block["passages_scored"] == len(server.requests) * 5 == 20
    assert block["calls"] == 4 and block["protocol"] == "rerank"
    best = {r.body["query"]: max(fake_relevance(r.body["query"], d)
                                 for d in r.body["documents"]) for r in server.requests}
    for q in data["queries"]:
        scores = [r["score"] for r in q["retrieved"]]
        assert scores == sorted(scores, reverse=True)
        assert scores[0] == pytest.approx(best[q["question"]], rel=1e-6)
    assert "LLM reranker (rerank-model): 4 calls" in capsys.readouterr().out
    # rerun: every score from the cache
    with pytest.raises(SystemExit) as e:
        main(run_args(cfg, out))
    assert e.value.code == 0 and len(server.requests) == 4
    assert json.loads(out.read_text())["llm"]["reranker"]["cache_hits"] == 20


def test_a_config_without_a_model_is_exit_2_naming_the_key(tmp_path, capsys):
    cfg = tmp_path / "bad.toml"
    cfg.write_text('name = "x"\n[reranker]\nname = "api"\nbase_url = "http://127.0.0.1:1/v1"\n')
    with pytest.raises(SystemExit) as e:
        main(run_args(cfg, tmp_path / "r.json"))
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "key 'reranker'" in err and "needs 'model'" in err and "Traceback" not in err
