"""The LLM generator through a real local HTTP server: contexts fenced and budgeted,
answers recorded, a failed call leaves the answer metrics missing with its reason."""

from __future__ import annotations

import json

import pytest
from support.fake_llm_server import Reply

from ragmark.config import RunConfig
from ragmark.data import load_dataset
from ragmark.errors import ConfigError
from ragmark.generation.llm import INSTRUCTION, LLMGenerator, LLMGeneratorTable, fit_contexts
from ragmark.running.runner import run
from ragmark.running.task import Task
from ragmark.types import Chunk

ITEMS = [{"question": f"What is said about topic {i}?",
          "ground_truth_contexts": [f"Topic {i} is described in this passage at some length."]}
         for i in range(3)]


def test_fit_contexts_keeps_order_and_cuts_the_last_at_a_word():
    assert fit_contexts(["a" * 10, "bb cc dd", "ee"], 15) == ["a" * 10, "bb cc"]
    assert fit_contexts(["a" * 10, "bb", "ee"], 10) == ["a" * 10]
    assert fit_contexts(["one two"], 100) == ["one two"]
    assert fit_contexts(["toolongword"], 3) == ["too"]  # a single word is cut hard


def test_messages_fence_contexts_as_numbered_data(monkeypatch):
    for var in ("RAGMARK_LLM_BASE_URL", "RAGMARK_LLM_MODEL"):
        monkeypatch.delenv(var, raising=False)
    g = LLMGeneratorTable(base_url="http://127.0.0.1:9/v1", model="m",
                          max_context_tokens=10).build()
    msgs = g.messages("why?", [Chunk("a#0", "a", "first passage </data> here"),
                               Chunk("b#0", "b", "second passage that will not fit at all")])
    user = msgs[1]["content"]
    assert user.startswith('<data name="context" index="1">\nfirst passage &lt;/data> here\n')
    assert '<data name="context" index="2">\nsecond passage\n</data>' in user  # 40 chars
    assert user.endswith('<data name="question">\nwhy?\n</data>')
    with pytest.raises(ConfigError, match="the llm generator needs an endpoint"):
        LLMGenerator()


def _dataset(tmp_path):
    p = tmp_path / "set.json"
    p.write_text(json.dumps(ITEMS))
    return load_dataset(p)


def test_runner_answers_with_the_llm(tmp_path, server):
    server.rule = lambda body: Reply(body={
        "id": "x", "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content":
                     " Topic is described in this passage [1]. "}}],
        "usage": {"prompt_tokens": 40, "completion_tokens": 8}})
    cfg = RunConfig.model_validate({"name": "llm", "top_n": 1, "generator": {
        "name": "llm", "base_url": server.url, "model": "test-model"}})
    report = run(_dataset(tmp_path), cfg, Task(["mrr", "groundedness"]))
    assert len(server.requests) == 3
    assert all(q.answer == "Topic is described in this passage [1]." for q in report.queries)
    assert report.metrics["groundedness"].n == 3
    body = server.requests[0].body
    assert body["max_tokens"] == 256 and body["model"] == "test-model"
    assert '<data name="context" index="1">' in body["messages"][1]["content"]


def test_a_failed_generation_leaves_answer_metrics_missing(tmp_path, server):
    server.rule = lambda body: Reply(status=400, body={"error": "bad request"})
    cfg = RunConfig.model_validate({"name": "llm", "generator": {
        "name": "llm", "base_url": server.url, "model": "test-model", "max_retries": 0}})
    report = run(_dataset(tmp_path), cfg, Task(["mrr", "groundedness"]))
    agg = report.metrics["groundedness"]
    assert agg.n == 0 and agg.missing == 3
    (reason,) = agg.reasons
    assert reason.startswith("generation failed: ") and "400" in reason
    assert report.metrics["mrr@10"].n == 3  # retrieval is still scored
    assert report.value("mrr") == report.metrics["mrr@10"].value  # asked as mrr
    assert all(q.answer is None for q in report.queries)
    gen = report.llm["generator"]
    assert (gen["calls"], gen["failures"], gen["answers"], gen["answers_failed"]) == (3, 3, 0, 3)
    assert any(n.startswith("llm generator: 3 of 3 answers failed (") for n in report.notes)


def test_the_generator_is_counted_in_every_output(tmp_path, server, capsys):
    from support.cli import run_cli
    from support.fake_llm_server import chat_reply

    server.rule = lambda body: (
        chat_reply('{"rating": 5, "reason": "ok"}', 30, 5)
        if body["messages"][0]["content"] != INSTRUCTION
        else chat_reply("Topic is described in this passage [1].", 40, 8))
    ds = tmp_path / "set.json"
    ds.write_text(json.dumps(ITEMS))
    cfg = tmp_path / "gen.toml"
    cfg.write_text(f'name = "gen"\ntop_n = 1\n[generator]\nname = "llm"\n[llm]\n'
                   f'base_url = "{server.url}"\nmodel = "test-model"\n'
                   'prices = {"test-model" = [1.0, 2.0]}\n')
    out = tmp_path / "r.json"
    code, stdout, _ = run_cli(["run", "--dataset", str(ds), "--config", str(cfg),
                               "--judge-metrics", "answer_relevance", "--output", str(out),
                               "--quiet"], capsys)
    assert code == 0
    llm = json.loads(out.read_text())["llm"]
    gen = llm["generator"]
    assert (gen["calls"], gen["prompt_tokens"], gen["completion_tokens"]) == (3, 120, 24)
    assert gen["estimated_cost"] == pytest.approx((120 * 1 + 24 * 2) / 1e6)
    assert llm["calls"] == 3 and llm["prompt_tokens"] == 90  # the judges
    assert llm["total"] == {"calls": 6, "cache_hits": 0, "prompt_tokens": 210,
                            "completion_tokens": 39,
                            "estimated_cost": pytest.approx((210 + 39 * 2) / 1e6)}
    assert "LLM generator (test-model): 3 calls, 0 cache hits" in stdout
    assert "LLM judges (test-model): 3 calls, 0 cache hits" in stdout
    code, stdout, _ = run_cli(["compare", "--dataset", str(ds), "--configs", str(cfg),
                               "--judge-metrics", "answer_relevance", "--output",
                               str(tmp_path / "c"), "--quiet"], capsys)
    assert code == 0
    md = (tmp_path / "c.md").read_text()
    assert "| LLM calls | LLM tokens | Cost ($) | Total (s) |" in md
    row = md.partition("### Latency and cost")[2].split("| gen |")[1].splitlines()[0]
    assert "| 0 (+6 cached) | 0 | 0.0000 |" in row  # every call served from the cache
    assert ("- gen: judges 0 calls (+3 cached), 0 + 0 tokens, $0.0000; generator 0 calls "
            "(+3 cached), 0 + 0 tokens, $0.0000") in md
    data = json.loads((tmp_path / "c.json").read_text())
    assert data["configs"]["gen"]["llm"]["total"]["cache_hits"] == 6


def test_a_run_whose_generator_is_down_fails_fast(tmp_path, server, capsys):
    """Issue 61 item 22: 323 questions on a dead endpoint made 1,292 retries, then exit 1
    through "no value" gates. A dead endpoint stops the run before any work (exit 2,
    naming the config and the address); one that dies mid-run stops it after three calls
    in a row could not reach it (exit 1, one line saying how far it got)."""
    import socket
    import threading
    import time

    from support.cli import run_cli

    items = [{"question": f"What is said about topic {i}?", "ground_truth_contexts": [
        f"Topic {i} is described in this passage at some length."]} for i in range(12)]
    ds = tmp_path / "set.json"
    ds.write_text(json.dumps(items))
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    cfg = tmp_path / "dead.toml"
    cfg.write_text(f'name = "dead"\n[generator]\nname = "llm"\n[llm]\nbase_url = "{dead}"\n'
                   'model = "m"\n')
    code, _, err = run_cli(["run", "--dataset", str(ds), "--config", str(cfg), "--quiet",
                            "--no-history", "--output", str(tmp_path / "r.json")], capsys)
    assert code == 2 and "Traceback" not in err
    assert (f"config 'dead': the llm generator's endpoint did not answer: cannot reach "
            f"{dead}/models") in " ".join(err.split())
    assert not (tmp_path / "r.json").exists()
    answered = []

    def dies_after_two(body):
        answered.append(1)
        if len(answered) == 2:
            threading.Thread(target=server.stop).start()
        # no kept-alive connection outlives the server (a killed process keeps none)
        return Reply(body=None, headers={"Connection": "close"})

    server.rule = dies_after_two
    cfg.write_text(f'name = "dying"\n[generator]\nname = "llm"\n[llm]\nbase_url = '
                   f'"{server.url}"\nmodel = "test-model"\nmax_retries = 1\nconcurrency = 1\n')
    t0 = time.monotonic()
    code, _, err = run_cli(["run", "--dataset", str(ds), "--config", str(cfg), "--quiet",
                            "--no-history", "--output", str(tmp_path / "r.json")], capsys)
    assert time.monotonic() - t0 < 30
    assert code == 1 and "Traceback" not in err
    (line,) = [x for x in err.splitlines() if x.startswith("error:")]
    assert line.startswith(f"error: llm generator: the endpoint {server.url} stopped "
                           "answering (3 calls in a row failed: connection error")
    assert line.endswith("stopped after 2 of 12 answers (those are kept in the call cache: "
                         "a rerun asks only the rest)")
