"""A whole run on an executor that spreads work (every shard pickled across a boundary,
completed out of order) equals the local run: retrieval shards, matching shards, and an
LLM reranker that stays on the driver."""

from __future__ import annotations

import re

from support.executors import PicklingExecutor
from support.fake_llm_server import chat_reply

from ragmark.config import RunConfig, load_config
from ragmark.data import load_dataset
from ragmark.demo.tour import demo_path
from ragmark.running.runner import run
from ragmark.running.task import Task

PASSAGE = re.compile(r'<data name="passage">\n(.*)\n</data>', re.DOTALL)


def _records(report):
    return [(q.id, [(r.rank, r.id, r.score, r.grade) for r in q.retrieved], q.metrics)
            for q in report.queries]


def _demo():
    return load_dataset(demo_path() / "questions.json", demo_path() / "corpus")


def test_sparse_run_on_a_spreading_executor_equals_local(monkeypatch):
    monkeypatch.setattr("ragmark.running.stages.SHARD", 2)  # several retrieval shards
    monkeypatch.setattr("ragmark.running.scoring.MATCH_SHARD", 3)
    ds, cfg = _demo(), load_config("sparse")
    local = run(ds, cfg, Task(latency_sample=2))
    ex = PicklingExecutor()
    spread = run(ds, cfg, Task(latency_sample=2, executor=ex))
    assert _records(spread) == _records(local)
    assert spread.executor == {"name": "pickling"} and local.executor["name"] == "local"
    # the last map was matching: 8 questions in shards of 3
    assert [len(item[0]) for item in ex.items] == [3, 3, 2]


def test_llm_reranker_stays_on_the_driver(server):
    def grade(body):
        users = [m["content"] for m in body["messages"] if m["role"] == "user"]
        passage = PASSAGE.search(users[-1]).group(1)
        return chat_reply('{"grade": 3}' if "rerank" in passage.lower() else '{"grade": 0}')

    server.rule = grade
    ds = _demo()
    cfg = RunConfig.model_validate({"name": "llm-rerank", "top_k": 5, "reranker": {
        "name": "llm", "base_url": server.url, "model": "m"}})
    local = run(ds, cfg, Task(["mrr"], skip_generation=True, latency_sample=2))
    calls = len(server.requests)
    spread = run(ds, cfg, Task(["mrr"], skip_generation=True, latency_sample=2,
                               executor=PicklingExecutor()))
    assert _records(spread) == _records(local)
    assert spread.llm["reranker"]["calls"] == 0  # every grade from the driver's cache
    assert local.llm["reranker"]["calls"] == calls == 8 * 5
    assert any(r.score >= 3 for q in spread.queries for r in q.retrieved)
