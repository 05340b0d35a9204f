"""A judged run killed mid-way (SIGKILL) resumes from the call cache: no completed call is
made again, and the resumed run scores every question."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

from support.fake_llm_server import Reply

N = 40


def _written(home) -> int:
    """The calls the call cache holds (0 before it exists or while it is locked)."""
    try:
        with sqlite3.connect(home / "llm" / "calls.sqlite", timeout=0.1) as db:
            return int(db.execute("SELECT COUNT(*) FROM calls").fetchone()[0])
    except sqlite3.Error:
        return 0


def _settled(server, quiet: float = 0.5, at_most: float = 10.0) -> int:
    """The server's request count once no request has arrived for ``quiet`` seconds."""
    deadline = time.monotonic() + at_most
    seen, since = len(server.requests), time.monotonic()
    while time.monotonic() < deadline and time.monotonic() - since < quiet:
        time.sleep(0.02)
        if len(server.requests) != seen:
            seen, since = len(server.requests), time.monotonic()
    return seen


def test_killed_run_resumes_without_repeating_a_completed_call(tmp_path, server):
    items = [{"question": f"What does passage {i} say about topic number {i}?",
              "ground_truth_contexts": [f"Passage {i} says topic number {i} is well studied."]}
             for i in range(N)]
    dataset = tmp_path / "set.json"
    dataset.write_text(json.dumps(items))
    server.rule = lambda body: Reply(delay=0.25, body={
        "id": "x", "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant",
                                             "content": '{"rating": 3, "reason": "partly"}'}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 4}})
    home = tmp_path / "home"
    env = {**os.environ, "RAGMARK_HOME": str(home)}
    for var in ("RAGMARK_LLM_BASE_URL", "RAGMARK_LLM_MODEL", "RAGMARK_LLM_API_KEY_ENV"):
        env.pop(var, None)
    out = tmp_path / "r.json"
    cmd = [sys.executable, "-m", "ragmark", "run", "--dataset", str(dataset),
           "--judge-metrics", "answer_relevance", "--llm-base-url", server.url,
           "--llm-model", "test-model", "--output", str(out), "--quiet"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while len(server.requests) < 12 and time.monotonic() < deadline:
        time.sleep(0.02)
    while _written(home) == 0 and time.monotonic() < deadline:  # some answers are kept
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL and not out.exists()
    first = _settled(server)  # a request sent just before the kill may still arrive
    with sqlite3.connect(home / "llm" / "calls.sqlite") as db:
        done = db.execute("SELECT COUNT(*) FROM calls").fetchone()[0]
    assert 1 <= done < N  # some calls completed and were kept, not all

    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
    second = len(server.requests) - first
    assert second == N - done  # exactly the calls that had not completed
    data = json.loads(out.read_text())
    assert data["counts"]["answer_relevance"] == {"n": N, "missing": 0}
    assert data["metrics"]["answer_relevance"] == 0.5
    assert data["llm"]["cache_hits"] == done and data["llm"]["calls"] == N - done
