"""`run --judge-metrics`: skipped with a reason without an endpoint, judged through a real
local HTTP server with one, cached on rerun, and the API key written nowhere."""

from __future__ import annotations

import json
import socket

from support.cli import run_cli
from support.fake_llm_server import Reply, chat_reply


def answering(text, prompt_tokens, completion_tokens):
    """A server rule: every chat request gets ``text`` with the given usage."""
    return lambda body: chat_reply(text, prompt_tokens, completion_tokens)


def test_without_an_endpoint_judge_metrics_are_missing_with_the_reason(dataset, tmp_path,
                                                                        capsys):
    out = tmp_path / "r.json"
    args = ["run", "--dataset", str(dataset), "--judge-metrics",
            "faithfulness,answer_relevance", "--output", str(out), "--quiet"]
    code, stdout, err = run_cli(args, capsys)
    # a metric asked for that got no value at all fails the implicit gate, outputs written
    why = "no LLM endpoint configured (set RAGMARK_LLM_BASE_URL and RAGMARK_LLM_MODEL)"
    assert code == 1
    assert err.splitlines() == [
        f"gate failed: faithfulness got no value for any of 2 questions: {why} (2 questions)",
        f"gate failed: answer_relevance got no value for any of 2 questions: {why} "
        "(2 questions)"]
    data = json.loads(out.read_text())
    assert data["metrics"]["faithfulness"] is None
    assert data["counts"]["faithfulness"] == {"n": 0, "missing": 2, "reasons": {why: 2}}
    assert data["notes"] == [f"judge metrics (faithfulness, answer_relevance) skipped: {why}"]
    assert "skipped: no LLM endpoint configured" in stdout
    code, _, err = run_cli([*args, "--allow-missing"], capsys)
    assert code == 0 and err == ""


def test_require_llm_makes_a_missing_or_dead_endpoint_an_error(dataset, capsys):
    code, _, err = run_cli(["run", "--dataset", str(dataset), "--judge-metrics",
                            "faithfulness", "--require-llm", "--quiet"], capsys)
    assert code == 2 and "error: --require-llm: no LLM endpoint configured" in err
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    code, _, err = run_cli(["run", "--dataset", str(dataset), "--judge-metrics",
                            "faithfulness", "--require-llm", "--llm-base-url", dead,
                            "--llm-model", "m", "--quiet"], capsys)
    assert code == 2 and "error: --require-llm: the LLM endpoint did not answer" in err
    code, _, err = run_cli(["run", "--dataset", str(dataset), "--judge-metrics", "faithfullness",
                            "--quiet"], capsys)
    assert code == 2 and "unknown judge metric 'faithfullness'; known: faithfulness" in err


def test_judged_through_a_local_server_cached_on_rerun_key_never_written(
    dataset, tmp_path, capsys, monkeypatch, server
):
    monkeypatch.setenv("JUDGE_KEY", "sk-test-SECRET-123")
    server.rule = answering('Here: {"rating": 4, "reason": "ok"}', 50, 9)
    out = tmp_path / "r.json"
    args = ["run", "--dataset", str(dataset), "--judge-metrics", "answer_relevance",
            "--llm-base-url", server.url, "--llm-model", "test-model", "--llm-api-key-env",
            "JUDGE_KEY", "--output", str(out), "--include-details", "--quiet"]
    code, stdout, _ = run_cli(args, capsys)
    assert code == 0
    data = json.loads(out.read_text())
    assert data["metrics"]["answer_relevance"] == 0.75  # rating 4 of 1-5
    assert data["counts"]["answer_relevance"] == {"n": 2, "missing": 0}
    assert data["llm"]["calls"] == 2 and data["llm"]["cache_hits"] == 0
    assert data["llm"]["prompt_tokens"] == 100
    assert len(server.requests) == 2
    assert server.requests[0].headers["Authorization"] == "Bearer sk-test-SECRET-123"
    assert "LLM judges (test-model): 2 calls, 0 cache hits, 0 re-asks" in stdout
    # the same run again: every judgement from the cache, the server sees nothing new
    code, _, _ = run_cli(args, capsys)
    assert code == 0 and len(server.requests) == 2
    again = json.loads(out.read_text())
    assert again["llm"]["calls"] == 0 and again["llm"]["cache_hits"] == 2
    assert again["metrics"]["answer_relevance"] == 0.75
    # the key is in no file ragmark wrote: results and every cache file
    home = tmp_path.parent
    written = [out, *(p for p in home.rglob("*") if p.is_file())]
    assert all(b"SECRET-123" not in contents(p) for p in written)


def test_compare_tests_a_judge_metric_like_any_other(dataset, tmp_path, capsys, server):
    server.rule = answering('{"rating": 5, "reason": "direct"}', 5, 2)
    other = tmp_path / "b0.toml"
    other.write_text('[retriever]\nname = "bm25"\nb = 0.0\n')
    code, stdout, _ = run_cli(["compare", "--dataset", str(dataset), "--configs", "sparse",
                               str(other), "--metrics", "mrr,answer_relevance",
                               "--llm-base-url", server.url, "--llm-model", "test-model",
                               "--output", str(tmp_path / "cmp"), "--quiet"], capsys)
    assert code == 0
    assert "| Config | MRR@10 | Answer relevance | Queries |" in stdout
    data = json.loads((tmp_path / "cmp.json").read_text())
    assert data["configs"]["sparse"]["metrics"]["answer_relevance"] == 1.0
    row = next(c for c in data["comparisons"] if c["metric"] == "answer_relevance")
    assert row["p_value"] == 1.0 and row["n"] == 2 and not row["significant"]


def test_compare_notes_skipped_judges_in_the_markdown(dataset, tmp_path, capsys):
    code, _, _ = run_cli(["compare", "--dataset", str(dataset), "--configs", "sparse",
                          "--judge-metrics", "faithfulness", "--output", str(tmp_path / "c"),
                          "--quiet"], capsys)
    assert code == 1  # faithfulness got no value at all: the implicit gate; files written
    md = (tmp_path / "c.md").read_text()
    assert "Note: judge metrics (faithfulness) skipped: no LLM endpoint configured" in md


def test_dry_run_counts_calls_tokens_and_cost_without_calling(dataset, tmp_path, capsys,
                                                              server):
    out = tmp_path / "r.json"
    code, stdout, _ = run_cli(["run", "--dataset", str(dataset), "--judge-metrics",
                               "answer_relevance,answer_correctness,faithfulness",
                               "--llm-base-url", server.url, "--llm-model", "test-model",
                               "--llm-prices", "1.0,2.0", "--dry-run", "--output", str(out),
                               "--quiet"], capsys)
    assert code == 0
    assert server.requests == [] and not out.exists()
    # 2 questions x (relevance + correctness + claims + the claims' verification)
    assert stdout.startswith("dry run: 8 judge calls (at most 16 with re-asks) to test-model "
                             "at http://127.0.0.1:")
    assert ", 0 more served from the cache; about " in stdout
    assert "estimated cost $0.00" in stdout
    assert "Nothing was called and no results were written." in stdout
    code, _, err = run_cli(["run", "--dataset", str(dataset), "--dry-run", "--quiet"], capsys)
    assert code == 2 and "--dry-run estimates judge calls: give --judge-metrics too" in err


def test_compare_dry_run_estimates_each_config_and_the_total(dataset, tmp_path, capsys,
                                                              server):
    other = tmp_path / "one.toml"
    other.write_text('name = "one-context"\ntop_n = 1\n')
    code, stdout, _ = run_cli(["compare", "--dataset", str(dataset), "--configs", "sparse",
                               str(other), "--judge-metrics", "answer_relevance,faithfulness",
                               "--llm-base-url", server.url, "--llm-model", "test-model",
                               "--llm-prices", "1.0,2.0", "--dry-run", "--output",
                               str(tmp_path / "c"), "--quiet"], capsys)
    assert code == 0
    assert server.requests == [] and not (tmp_path / "c.json").exists()
    lines = stdout.strip().splitlines()
    # per config: 2 questions x (relevance + claims + the claims' verification)
    assert lines[0].startswith("dry run: sparse: 6 judge calls (at most 12 with re-asks) to "
                               "test-model")
    assert lines[1].startswith("dry run: one-context: 6 judge calls (at most 12 with "
                               "re-asks) to test-model")
    assert lines[2].startswith("dry run: all configs: 12 calls, about ")
    assert "upper bound" in lines[2] and "estimated cost $0.00" in lines[2]
    assert lines[3] == "Nothing was called and no results were written."


def test_ollama_native_api_end_to_end_through_run(dataset, tmp_path, capsys, ollama_server):
    ollama_server.rule = lambda body: Reply(body={
        "model": body["model"], "done": True, "prompt_eval_count": 30, "eval_count": 6,
        "message": {"role": "assistant", "content": '{"rating": 3, "reason": "partly"}'}})
    out = tmp_path / "r.json"
    args = ["run", "--dataset", str(dataset), "--judge-metrics", "answer_relevance",
            "--llm-provider", "ollama", "--llm-base-url", ollama_server.url, "--llm-model",
            "test-model", "--require-llm", "--output", str(out), "--quiet"]
    code, stdout, _ = run_cli(args, capsys)
    assert code == 0
    data = json.loads(out.read_text())
    assert data["metrics"]["answer_relevance"] == 0.5  # rating 3 of 1-5
    assert data["counts"]["answer_relevance"] == {"n": 2, "missing": 0}
    assert data["llm"]["calls"] == 2 and data["llm"]["prompt_tokens"] == 60
    assert data["llm"]["completion_tokens"] == 12
    assert [r.path for r in ollama_server.requests] == ["/api/chat", "/api/chat"]
    assert all(r.body["options"]["temperature"] == 0 for r in ollama_server.requests)
    code, _, _ = run_cli(args, capsys)
    assert code == 0 and len(ollama_server.requests) == 2
    assert json.loads(out.read_text())["llm"]["cache_hits"] == 2


def _judge_rule(body):
    """Answers by prompt: the claims of the metformin answer are unusable the first time
    (so the run re-asks), every other call is answered at once."""
    system = body["messages"][0]["content"]
    last = body["messages"][-1]["content"]
    if system.startswith("Break the answer into its factual claims"):
        if "metformin" in last.lower() and not last.startswith("That answer could not"):
            return chat_reply("I would say it is about kidneys.", 30, 8)
        return chat_reply('{"claims": ["First claim.", "Second claim."]}', 30, 8)
    if system.startswith("Check each numbered claim"):
        return chat_reply('{"verdicts": [{"claim": 1, "supported": true}, '
                          '{"claim": 2, "supported": false}]}', 40, 12)
    if '"verdict"' in system:
        return chat_reply('{"verdict": "correct"}', 20, 4)
    return chat_reply('{"rating": 4, "reason": "ok"}', 20, 4)


def _dry_numbers(stdout):
    import re

    m = re.match(r"dry run: (\d+) judge calls(?: \(at most (\d+) with re-asks\))? to .*?, "
                 r"(\d+) more served from the cache", stdout)
    assert m is not None, stdout
    calls, most, cached = m.groups()
    return int(calls), int(most or calls), int(cached)


def test_a_dry_run_agrees_with_the_run_that_follows(dataset, tmp_path, capsys, server):
    server.rule = _judge_rule
    out = tmp_path / "r.json"
    args = ["run", "--dataset", str(dataset), "--judge-metrics",
            "answer_relevance,answer_correctness,faithfulness", "--llm-base-url", server.url,
            "--llm-model", "test-model", "--output", str(out), "--quiet"]
    code, stdout, _ = run_cli([*args, "--dry-run"], capsys)
    assert code == 0 and server.requests == []
    # 2 questions x (relevance, correctness, claims, the check of the claims); each may
    # need a re-ask
    assert _dry_numbers(stdout) == (8, 16, 0)
    code, _, _ = run_cli(args, capsys)
    assert code == 0
    llm = json.loads(out.read_text())["llm"]
    assert llm["judge_reasks"] == 1 and llm["calls"] == 9 == len(server.requests)
    assert 8 <= llm["calls"] <= 16
    # everything is cached now: the dry run follows the cached answers (the re-ask too)
    code, stdout, _ = run_cli([*args, "--dry-run"], capsys)
    assert _dry_numbers(stdout) == (0, 0, 9)
    code, _, _ = run_cli(args, capsys)
    again = json.loads(out.read_text())["llm"]
    assert (again["calls"], again["cache_hits"]) == (0, 9) and len(server.requests) == 9


def contents(p):
    """A file's bytes; b"" when it went away meanwhile (an earlier test's SQLite -wal
    file is removed when its connection is collected)."""
    try:
        return p.read_bytes()
    except FileNotFoundError:
        return b""
