"""Provider batch jobs against the scripted server's /files and /batches: the uncached
calls go out as one JSONL job keyed by their cache keys, the answers enter the cache,
re-asks go in a follow-up job, the job states (completed, failed, expired, partial
errors) end as answers or reasons, a killed run resumes its job instead of submitting a
second one, and the cost takes the batch discount."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.cli import run_cli
from support.fake_llm_server import Reply, chat_reply

from ragmark.llm import LLMCallFailed, LLMClient, LLMSettings, open_client

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "src" / "ragmark" / "demo"


def client(url: str, **kw) -> LLMClient:
    return open_client(LLMSettings(base_url=url, model="test-model", batch=True,
                                   batch_poll=0.01, **kw))


def ask_all(c: LLMClient, texts: list[str]):
    async def go():
        async with c:
            return await c.run_many([[{"role": "user", "content": t}] for t in texts])
    return asyncio.run(go())


def chat_paths(server) -> list[str]:
    return [r.path for r in server.requests]


@pytest.fixture
def status(caplog):
    """The status lines of batch jobs (logger ragmark.status, which the command line
    shows on stderr unless --quiet)."""
    log = logging.getLogger("ragmark.status")
    log.addHandler(caplog.handler)
    caplog.set_level(logging.INFO, logger="ragmark.status")
    yield caplog
    log.removeHandler(caplog.handler)


def test_uncached_calls_go_out_as_one_job_and_enter_the_cache(server, status):
    c = client(server.url, prices={"test-model": (1.0, 2.0)})
    got = ask_all(c, ["a", "b", "a", "c"])
    assert [g.text for g in got] == ["echo: a", "echo: b", "echo: a", "echo: c"]
    assert chat_paths(server) == ["/v1/files", "/v1/batches"]  # no chat request
    (job,) = server.batches.jobs.values()
    assert [line["custom_id"] for line in job.lines] == [
        c.key_of([{"role": "user", "content": t}]) for t in "abc"]
    assert {line["url"] for line in job.lines} == {"/v1/chat/completions"}
    assert job.lines[0]["body"]["messages"] == [{"role": "user", "content": "a"}]
    assert server.requests[1].body["endpoint"] == "/v1/chat/completions"
    st = c.stats
    assert st.calls == 3 == st.batch_calls and st.cache_hits == 1
    # 3 calls x (11 prompt, 3 completion) tokens at $1/$2 per million, half price
    assert st.estimated_cost() == pytest.approx((33 * 1.0 + 9 * 2.0) / 1e6 * 0.5)
    err = "\n".join(status.messages)
    assert "submitted provider batch batch_1 (3 calls)" in err
    assert "provider batch batch_1: completed, 3 of 3 done" in err
    again = client(server.url)
    assert [g.text for g in ask_all(again, ["a", "b", "c"])] == ["echo: a", "echo: b", "echo: c"]
    assert len(server.batches.created) == 1 and again.stats.cache_hits == 3


def test_partial_errors_fail_only_their_calls(server):
    server.rule = lambda body: (Reply(status=400, body={"error": {"message": "too long"}})
                                if body["messages"][0]["content"] == "bad" else None)
    got = ask_all(client(server.url), ["ok", "bad"])
    assert got[0].text == "echo: ok"
    assert isinstance(got[1], LLMCallFailed)
    assert got[1].reason.startswith("batch request failed: HTTP 400: ")
    assert "too long" in got[1].reason


def test_a_failed_job_fails_every_call_and_a_rerun_submits_again(server):
    server.batches.plan = ["validating", "failed"]
    server.batches.errors = [{"code": "invalid_jsonl", "message": "line 1 is wrong"}]
    got = ask_all(client(server.url), ["a", "b"])
    assert all(isinstance(g, LLMCallFailed) for g in got)
    assert got[0].reason == ("provider batch batch_1 failed: line 1 is wrong; rerun to "
                             "send the calls left")
    server.batches.plan = ["completed"]
    got = ask_all(client(server.url), ["a", "b"])
    assert [g.text for g in got] == ["echo: a", "echo: b"]
    assert server.batches.created == ["batch_1", "batch_2"]


def test_an_expired_job_keeps_what_it_answered(server):
    server.batches.plan = ["in_progress", "expired"]
    server.batches.expire_after = 2
    got = ask_all(client(server.url), ["a", "b", "c"])
    assert [g.text for g in got[:2]] == ["echo: a", "echo: b"]
    assert isinstance(got[2], LLMCallFailed) and "expired" in got[2].reason
    server.batches.plan = ["completed"]
    got = ask_all(client(server.url), ["a", "b", "c"])
    assert got[2].text == "echo: c"
    assert [line["body"]["messages"][0]["content"]
            for line in server.batches.jobs["batch_2"].lines] == ["c"]


def judged_args(server, out: Path, *more: str) -> list[str]:
    return ["run", "--dataset", str(DEMO / "questions.json"), "--corpus", str(DEMO / "corpus"),
            "--max-queries", "3", "--judge-metrics",
            "answer_relevance,context_relevance", "--llm-base-url", server.url,
            "--llm-model", "test-model", "--llm-prices", "1,2", "--include-details",
            "--output", str(out), "--quiet", *more]


def judge_rule(body):
    """answer_relevance: a rating, except a first unusable answer about MRR (re-asked);
    context_relevance, a passage a call: relevant when the passage's text has an even
    length (any rule the two runs share)."""
    users = [m["content"] for m in body["messages"] if m["role"] == "user"]
    reask = "could not be used" in users[-1]
    item = users[-2] if reask else users[-1]
    if '"rating"' in body["messages"][0]["content"]:
        if not reask and "reciprocal rank" in item:
            return chat_reply("no idea")
        return chat_reply('{"rating": 4, "reason": "fine"}')
    passage = re.findall(r'<data name="passage">\n(.*?)\n</data>', item, re.S)[0]
    return chat_reply("YES" if len(passage) % 2 == 0 else "NO")


def metrics_of(path: Path) -> dict:
    data = json.loads(path.read_text())
    return data["per_query"]


def test_judges_in_batches_match_the_interactive_run(server, tmp_path, capsys, monkeypatch):
    server.rule = judge_rule
    monkeypatch.setenv("RAGMARK_LLM_BATCH_POLL", "0.01")
    code, _, err = run_cli(judged_args(server, tmp_path / "i.json"), capsys)
    assert code == 0, err
    interactive = len([r for r in server.requests if r.path.endswith("/chat/completions")])
    monkeypatch.setenv("RAGMARK_HOME", str(tmp_path / "fresh-home"))
    code, _, err = run_cli(judged_args(server, tmp_path / "b.json", "--llm-batch"), capsys)
    assert code == 0, err
    assert "provider batch" not in err  # --quiet: no status lines
    assert metrics_of(tmp_path / "b.json") == metrics_of(tmp_path / "i.json")
    jobs = [server.batches.jobs[b] for b in server.batches.created]
    assert len(jobs) == 2  # the first calls, then the re-ask
    assert sum(len(j.lines) for j in jobs) == interactive
    assert all("could not be used" in json.dumps(line["body"]) for line in jobs[1].lines)
    llm = json.loads((tmp_path / "b.json").read_text())["llm"]
    assert llm["batch_jobs"] == ["batch_1", "batch_2"] and llm["batch_calls"] == interactive
    inter = json.loads((tmp_path / "i.json").read_text())["llm"]
    assert llm["estimated_cost"] == pytest.approx(inter["estimated_cost"] * 0.5)


def test_a_killed_run_resumes_its_job(server, tmp_path, capsys, monkeypatch):
    """Kill the run while it waits for its job; the rerun picks the job up (no second
    submission) and its results equal an interactive run's."""
    server.rule = judge_rule
    server.batches.hold = True
    home = tmp_path / "home"
    env = {**os.environ, "RAGMARK_HOME": str(home), "RAGMARK_LLM_BATCH_POLL": "0.05",
           "PYTHONPATH": str(ROOT / "src")}
    out = tmp_path / "b.json"
    proc = subprocess.Popen([sys.executable, "-m", "ragmark",
                             *judged_args(server, out, "--llm-batch")], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not (server.batches.created
                   and server.batches.jobs["batch_1"].polls >= 3):
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            assert time.monotonic() < deadline, "the run never waited on its job"
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert not out.exists()
    saved = list((home / "llm" / "batches").glob("*.json"))
    assert len(saved) == 1 and json.loads(saved[0].read_text())["batch_id"] == "batch_1"

    server.batches.hold = False
    monkeypatch.setenv("RAGMARK_HOME", str(home))
    monkeypatch.setenv("RAGMARK_LLM_BATCH_POLL", "0.01")
    loud = [a for a in judged_args(server, out, "--llm-batch") if a != "--quiet"]
    code, _, err = run_cli(loud, capsys)  # without --quiet: the status lines on stderr
    assert code == 0, err
    assert "ragmark: resuming provider batch batch_1" in err
    assert server.batches.created == ["batch_1", "batch_2"]  # batch_2: the re-ask
    assert not list((home / "llm" / "batches").glob("*.json"))
    monkeypatch.setenv("RAGMARK_HOME", str(tmp_path / "interactive"))
    code, _, err = run_cli(judged_args(server, tmp_path / "i.json"), capsys)
    assert code == 0, err
    assert metrics_of(out) == metrics_of(tmp_path / "i.json")
    assert json.loads(out.read_text())["llm"]["batch_jobs_resumed"] == 1


def test_the_flag_is_refused_where_it_does_not_apply(server, tmp_path, capsys):
    code, _, err = run_cli([*judged_args(server, tmp_path / "x.json", "--llm-batch"),
                            "--llm-prices", "1,2,1.5"], capsys)
    assert code == 2 and "batch discount (0 to 1)" in err


def test_a_dry_run_prices_the_calls_at_the_batch_price(server, tmp_path, capsys):
    args = [*judged_args(server, tmp_path / "x.json"), "--dry-run"]
    code, plain, _ = run_cli(args, capsys)
    assert code == 0
    code, batched, _ = run_cli([*args, "--llm-batch"], capsys)
    assert code == 0 and server.batches.created == []
    cost = [float(re.search(r"estimated cost \$([0-9.]+)", t).group(1)) for t in (plain, batched)]
    assert cost[0] > 0 and cost[1] == pytest.approx(cost[0] / 2, abs=1e-4)
