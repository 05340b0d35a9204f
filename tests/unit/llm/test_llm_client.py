"""LLMClient against a real local HTTP server: retries, timeouts, cache, concurrency."""

from __future__ import annotations

import asyncio
import socket
import sqlite3
import time
from collections.abc import Coroutine, Sequence
from contextlib import closing
from email.utils import formatdate
from pathlib import Path
from typing import Any, TypeVar

import pytest
from support.fake_llm_server import FakeLLMServer, Reply, chat_reply

from ragmark.errors import ConfigError
from ragmark.llm import LLMCache, LLMCallFailed, LLMClient, LLMResult, LLMSettings, Usage
from ragmark.llm.client import parse_retry_after
from ragmark.llm.dry import estimate_calls

T = TypeVar("T")
KEY = "sk-test-SECRET-0123456789"


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def settings(url: str, **kw: Any) -> LLMSettings:
    base: dict[str, Any] = {
        "base_url": url,
        "model": "test-model",
        "timeout": 5.0,
        "backoff_base": 0.01,
        "backoff_max": 0.05,
        "retry_after_max": 2.0,
    }
    base.update(kw)
    return LLMSettings(**base)


def msgs(text: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": "be brief"}, {"role": "user", "content": text}]


async def chat_once(client: LLMClient, text: str, **params: Any) -> LLMResult:
    async with client:
        return await client.chat(msgs(text), **params)


async def many(client: LLMClient, lists: Sequence[Any], **kw: Any) -> list[Any]:
    async with client:
        return await client.run_many(lists, **kw)


def test_plain_call_sends_openai_request_and_reads_usage(server: FakeLLMServer) -> None:
    client = LLMClient(settings(server.url))
    r = run(chat_once(client, "hello", max_tokens=20))
    assert r == LLMResult("echo: hello", Usage(11, 3), cached=False, attempts=1)
    [req] = server.requests
    assert req.path == "/v1/chat/completions"
    assert req.body == {
        "model": "test-model",
        "messages": msgs("hello"),
        "temperature": 0.0,
        "seed": 0,
        "max_tokens": 20,
    }
    assert "authorization" not in {k.lower() for k in req.headers}
    s = client.stats
    assert (s.calls, s.cache_hits, s.retries, s.failures) == (1, 0, 0, 0)
    assert (s.prompt_tokens, s.completion_tokens) == (11, 3)
    assert s.estimated_cost() is None


def test_429_honours_retry_after_then_succeeds(server: FakeLLMServer) -> None:
    server.queue.append(Reply(429, {"error": "slow down"}, {"Retry-After": "0.3"}))
    client = LLMClient(settings(server.url), use_cache=False)
    r = run(chat_once(client, "hi"))
    assert r.text == "echo: hi" and r.attempts == 2
    first, second = server.requests
    assert second.at - first.at >= 0.3
    assert client.stats.retries == 1 and client.stats.failures == 0


def test_retry_after_is_capped(server: FakeLLMServer) -> None:
    server.queue.append(Reply(429, {"error": "later"}, {"Retry-After": "30"}))
    client = LLMClient(settings(server.url, retry_after_max=0.1), use_cache=False)
    t0 = time.monotonic()
    r = run(chat_once(client, "hi"))
    assert r.attempts == 2 and time.monotonic() - t0 < 2.0


def test_500_twice_then_success(server: FakeLLMServer) -> None:
    server.queue.extend([Reply(500, {"error": "boom"}), Reply(503, "upstream down")])
    client = LLMClient(settings(server.url))
    r = run(chat_once(client, "x"))
    assert (r.text, r.attempts) == ("echo: x", 3)
    assert len(server.requests) == 3 and client.stats.retries == 2


def test_bad_json_is_retried(server: FakeLLMServer) -> None:
    server.queue.extend([Reply(200, "{not json"), Reply(200, {"choices": []})])
    client = LLMClient(settings(server.url))
    r = run(chat_once(client, "x"))
    assert r.attempts == 3


def test_a_local_timeout_is_not_asked_again_and_says_what_to_set(
        server: FakeLLMServer) -> None:
    """Issue 61 item 24: a local server goes on computing a call the client gave up on,
    so asking again paid each value up to five times and lost it. A loopback timeout
    is given up at once, and the reason says which setting gives it more time."""
    server.rule = lambda body: Reply(delay=1.0)
    client = LLMClient(settings(server.url, timeout=0.2, max_retries=2))
    t0 = time.monotonic()
    with pytest.raises(LLMCallFailed) as info:
        run(chat_once(client, "slow"))
    assert time.monotonic() - t0 < 0.9
    e = info.value
    assert e.attempts == 1 and len(server.requests) == 1
    assert e.reason == (f"timeout: no answer from {server.url} within 0.2 s (a slow model "
                        "needs more: --llm-timeout SECONDS, RAGMARK_LLM_TIMEOUT or timeout "
                        "in the [llm] table) (gave up after 1 attempts)")
    s = client.stats
    assert (s.calls, s.retries, s.failures) == (1, 0, 1)
    assert len(client.cache or []) == 0  # a failure is not cached


def test_an_endpoint_that_stops_answering_is_not_asked_again(server: FakeLLMServer) -> None:
    """Issue 61 items 3 and 22: a server that died mid-run cost every remaining call its
    retries (1,292 for 323 questions). After three calls in a row could not reach it,
    the rest fail at once with the reason, unasked; an answer between resets the count."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    client = LLMClient(settings(f"http://127.0.0.1:{port}/v1", max_retries=1,
                                concurrency=1), use_cache=False)
    got = run(many(client, [msgs(str(i)) for i in range(10)]))
    assert all(isinstance(r, LLMCallFailed) for r in got)
    gone = (f"the endpoint http://127.0.0.1:{port}/v1 stopped answering (3 calls in a row "
            "failed: connection error")
    tried = [r for r in got if r.reason.endswith("(gave up after 2 attempts)")]
    assert len(tried) == 3 and all("connection error" in r.reason for r in tried)
    stopped = [r for r in got if r not in tried]  # stopped before their retry
    assert len(stopped) == 7 and all(gone in r.reason and r.attempts == 1 for r in stopped)
    assert client.stats.failures == 10 and client.down is not None
    [late] = run(many(client, [msgs("late")]))
    assert late.reason.startswith("not asked: " + gone) and late.attempts == 0
    # a server that answers between failures is not taken as gone
    flaky = iter([Reply(status=500)] * 2 + [chat_reply("ok")] + [Reply(status=500)] * 20)
    server.rule = lambda body: next(flaky)
    client = LLMClient(settings(server.url, max_retries=0, concurrency=1), use_cache=False)
    got = run(many(client, [msgs(str(i)) for i in range(5)]))
    assert [isinstance(r, LLMResult) for r in got] == [False, False, True, False, False]
    assert client.down is None  # HTTP 500 reached the server: an answer, not absence


def test_an_html_error_page_is_one_line(server: FakeLLMServer) -> None:
    """Issue 61 item 3: through a proxy the whole HTML error page was pasted into the
    report; a reason is one line: the page's title."""
    page = ("<!DOCTYPE html>\n<html>\n<head><title>502 Bad Gateway</title></head>\n"
            "<body>\n<center><h1>502 Bad Gateway</h1></center>\n<hr><center>nginx"
            "</center>\n</body>\n</html>\n")
    server.rule = lambda body: Reply(status=400, body=page)
    with pytest.raises(LLMCallFailed) as info:
        run(chat_once(LLMClient(settings(server.url), use_cache=False), "x"))
    assert info.value.reason == f"HTTP 400 from {server.url}/chat/completions: 502 Bad Gateway"


def test_400_is_not_retried_and_names_status_and_body(server: FakeLLMServer) -> None:
    body = '{"error": "bad request: ' + "x" * 400 + '"}'
    server.queue.append(Reply(400, body))
    client = LLMClient(settings(server.url, max_retries=4))
    with pytest.raises(LLMCallFailed) as info:
        run(chat_once(client, "x"))
    e = info.value
    assert len(server.requests) == 1 and e.attempts == 1 and not e.retryable
    assert "HTTP 400" in e.reason and "/v1/chat/completions" in e.reason
    assert body[:200] in e.reason and body[:201] not in e.reason
    assert client.stats.failures == 1 and client.stats.retries == 0


def test_rerun_is_served_from_cache(server: FakeLLMServer) -> None:
    lists = [msgs(f"q{i}") for i in range(5)]
    first = run(many(LLMClient(settings(server.url)), lists))
    assert len(server.requests) == 5
    again = LLMClient(settings(server.url), cache=LLMCache())  # a new process, same home
    second = run(many(again, lists))
    assert len(server.requests) == 5
    assert [r.text for r in second] == [r.text for r in first]
    assert [r.usage for r in second] == [r.usage for r in first]
    assert all(r.cached and r.attempts == 0 for r in second)
    assert (again.stats.calls, again.stats.cache_hits) == (0, 5)
    assert again.cache is not None and len(again.cache) == 5
    # another parameter is another call
    run(chat_once(again, "q0", temperature=0.5))
    assert len(server.requests) == 6


def test_same_model_name_on_another_server_is_not_a_cache_hit(server: FakeLLMServer) -> None:
    other = FakeLLMServer("openai").start()
    try:
        server.rule = lambda body: chat_reply("from A")
        other.rule = lambda body: chat_reply("from B")
        a = run(chat_once(LLMClient(settings(server.url)), "verdict?"))
        b = run(chat_once(LLMClient(settings(other.url)), "verdict?"))
        assert (a.text, a.cached) == ("from A", False)
        assert (b.text, b.cached) == ("from B", False)  # not A's answer from the cache
        assert len(server.requests) == 1 and len(other.requests) == 1
        # each endpoint still finds its own answer, credentials or not
        port = server.url.split(":")[2].split("/")[0]
        again = run(chat_once(LLMClient(settings(f"http://u:pw@127.0.0.1:{port}/v1/")),
                              "verdict?"))
        assert (again.text, again.cached) == ("from A", True)
        assert len(server.requests) == 1
    finally:
        other.stop()


def test_duplicate_calls_in_one_run_are_made_once(server: FakeLLMServer) -> None:
    server.rule = lambda body: Reply(delay=0.1)
    client = LLMClient(settings(server.url))
    out = run(many(client, [msgs("same")] * 4))
    assert len(server.requests) == 1
    assert [r.text for r in out] == ["echo: same"] * 4
    assert (client.stats.calls, client.stats.cache_hits) == (1, 3)


def test_api_key_is_sent_but_never_stored(
    server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAGMARK_TEST_KEY", KEY)
    s = settings(server.url, api_key_env="RAGMARK_TEST_KEY")
    client = LLMClient(s)
    run(many(client, [msgs("a"), msgs("b")]))
    assert server.requests[0].headers["Authorization"] == f"Bearer {KEY}"
    assert client.cache is not None
    path = client.cache.path
    client.cache.close()
    files = [p for p in path.parent.iterdir() if p.name.startswith(path.name)]
    assert files
    for p in files:
        assert KEY.encode() not in p.read_bytes(), p
    for shown in (repr(s), str(s), s.model_dump_json()):
        assert KEY not in shown
    # a server that echoes the key in its error body
    server.queue.append(Reply(401, {"error": f"Incorrect API key provided: {KEY}"}))
    with pytest.raises(LLMCallFailed) as info:
        run(chat_once(LLMClient(s), "c"))
    assert KEY not in info.value.reason and "[redacted]" in info.value.reason


def test_key_pasted_as_env_name_is_refused_without_echo() -> None:
    with pytest.raises(ValueError) as info:
        LLMSettings(base_url="http://x", model="m", api_key_env=KEY)
    assert KEY not in str(info.value)


def test_missing_key_variable_is_a_config_error(
    server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RAGMARK_NO_SUCH_KEY", raising=False)
    client = LLMClient(settings(server.url, api_key_env="RAGMARK_NO_SUCH_KEY"))
    with pytest.raises(ConfigError, match="RAGMARK_NO_SUCH_KEY"):
        run(many(client, [msgs("a")]))
    assert server.requests == []


def test_concurrency_limit_is_respected(server: FakeLLMServer) -> None:
    server.rule = lambda body: Reply(delay=0.1)
    client = LLMClient(settings(server.url, concurrency=3), use_cache=False)
    out = run(many(client, [msgs(f"c{i}") for i in range(15)]))
    assert len(out) == 15 and len(server.requests) == 15
    assert 2 <= server.max_active <= 3


def test_run_many_keeps_order_and_counts_failures(server: FakeLLMServer) -> None:
    def rule(body: Any) -> Reply | None:
        text = body["messages"][-1]["content"]
        if text.startswith("bad"):
            return Reply(400, {"error": f"refused {text}"})
        if text.startswith("down"):
            return Reply(500, {"error": "down"})
        return Reply(delay=0.02 * (hash(text) % 3))

    server.rule = rule
    texts = ["ok0", "bad1", "ok2", "down3", "ok4", "bad5", "ok6", "ok7"]
    done: list[int] = []
    client = LLMClient(settings(server.url, max_retries=1, concurrency=4))
    out = run(many(client, [msgs(t) for t in texts], progress=done.append))
    assert len(out) == len(texts) and sum(done) == len(texts)
    for t, r in zip(texts, out, strict=True):
        if t.startswith("ok"):
            assert isinstance(r, LLMResult) and r.text == f"echo: {t}"
        else:
            assert isinstance(r, LLMCallFailed)
            assert (
                ("HTTP 400" in r.reason and t in r.reason)
                if t.startswith("bad")
                else ("HTTP 500" in r.reason and r.attempts == 2)
            )
    s = client.stats
    assert (s.failures, s.calls, s.retries) == (3, 8, 1)
    assert (s.prompt_tokens, s.completion_tokens) == (5 * 11, 5 * 3)


def test_ollama_native_chat(ollama_server: FakeLLMServer) -> None:
    s = settings(ollama_server.url, provider="ollama")
    client = LLMClient(s)
    r = run(chat_once(client, "hallo", max_tokens=16, response_format={"type": "json_object"}))
    assert r == LLMResult("echo: hallo", Usage(7, 2), cached=False, attempts=1)
    [req] = ollama_server.requests
    assert req.path == "/api/chat"
    assert req.body == {
        "model": "test-model",
        "messages": msgs("hallo"),
        "stream": False,
        "format": "json",
        "options": {"temperature": 0.0, "seed": 0, "num_predict": 16},
    }
    assert (client.stats.prompt_tokens, client.stats.completion_tokens) == (7, 2)


def test_probe(server: FakeLLMServer, ollama_server: FakeLLMServer) -> None:
    ok, reason = run(LLMClient(settings(server.url)).probe())
    assert ok and "'test-model' is listed" in reason and server.gets[0].path == "/v1/models"
    ok, reason = run(LLMClient(settings(server.url, model="absent")).probe())
    assert ok and "not among 2 listed" in reason
    ok, reason = run(LLMClient(settings(ollama_server.url, provider="ollama")).probe())
    assert ok and ollama_server.gets[0].path == "/api/tags"
    ok, reason = run(LLMClient(settings(server.url + "/nope")).probe())
    assert not ok and "HTTP 404" in reason


def test_probe_nothing_listening() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    ok, reason = run(LLMClient(settings(f"http://127.0.0.1:{port}/v1")).probe(timeout=1.0))
    assert not ok and "cannot reach" in reason and str(port) in reason


def test_connection_refused_call_fails_with_reason() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    client = LLMClient(settings(f"http://127.0.0.1:{port}/v1", max_retries=1))
    [r] = run(many(client, [msgs("a")]))
    assert isinstance(r, LLMCallFailed) and "connection error" in r.reason
    assert client.stats.failures == 1


def test_estimate_and_cost(server: FakeLLMServer) -> None:
    prices = {"test-model": (2.0, 8.0)}
    client = LLMClient(settings(server.url, prices=prices))
    lists = [msgs("a" * 40), msgs("b" * 80), msgs("a" * 40)]
    est = estimate_calls(client, lists)
    # (8 + 40) / 4 + 2 * 4 = 20 and (8 + 80) / 4 + 8 = 30; the duplicate is one call
    assert (est.calls, est.prompt_tokens, est.cached) == (2, 50, 1)
    assert est.cost == pytest.approx(50 * 2.0 / 1e6)
    run(many(client, lists[:1]))
    assert estimate_calls(client, lists)[:2] == (1, 30)
    assert client.stats.estimated_cost() == pytest.approx((11 * 2.0 + 3 * 8.0) / 1e6)
    assert estimate_calls(LLMClient(settings(server.url)), lists).cost is None


def test_sync_wrapper_runs_twice(server: FakeLLMServer) -> None:
    client = LLMClient(settings(server.url), use_cache=False)
    a = client.run_many_sync([msgs("one")])
    b = client.run_many_sync([msgs("two")])  # a second event loop
    assert [r.text for r in a + b if isinstance(r, LLMResult)] == ["echo: one", "echo: two"]


def test_cache_file_is_under_ragmark_home(server: FakeLLMServer, tmp_path: Path) -> None:
    client = LLMClient(settings(server.url), cache=LLMCache(tmp_path / "c.sqlite"))
    run(chat_once(client, "x"))
    assert client.cache is not None and len(client.cache) == 1
    assert LLMCache().path.parts[-2:] == ("llm", "calls.sqlite")


def test_each_answer_is_committed_as_it_completes(server: FakeLLMServer) -> None:
    client = LLMClient(settings(server.url))
    run(many(client, [msgs(f"d{i}") for i in range(6)]))
    assert client.cache is not None
    # another connection sees every row while the client's connection is still open
    with closing(sqlite3.connect(client.cache.path)) as con:
        assert con.execute("SELECT COUNT(*) FROM calls").fetchone()[0] == 6
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        row = con.execute("SELECT text, prompt_tokens, completion_tokens FROM calls").fetchone()
    assert row[0].startswith("echo: d") and tuple(row[1:]) == (11, 3)


def test_parse_retry_after() -> None:
    assert parse_retry_after("2") == 2.0
    assert parse_retry_after("0.25") == 0.25
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None
    when = formatdate(time.time() + 30, usegmt=True)
    assert 25 < (parse_retry_after(when) or 0) <= 30


def test_log_probabilities_cached_in_an_earlier_format_are_asked_again(
        server: FakeLLMServer, tmp_path: Path) -> None:
    """Hesitations stored before their offsets were counted from where the answer
    starts (a plain JSON list) may be misplaced: the call is sent again and the entry
    replaced; the new format is read from the cache."""
    import math

    from ragmark.llm.logprobs import asking

    def weighed(body: Any) -> Any:
        from support.fake_llm_server import chat_reply
        reply = chat_reply("YES")
        reply.body["choices"][0]["logprobs"] = {"content": [
            {"token": "YES", "logprob": math.log(0.7), "top_logprobs": [
                {"token": "YES", "logprob": math.log(0.7)},
                {"token": "NO", "logprob": math.log(0.3)}]}]}
        return reply

    server.rule = weighed
    cache = LLMCache(tmp_path / "c.sqlite")
    client = LLMClient(settings(server.url), cache=cache)
    key = client.key_of(msgs("is it?"), **asking())
    cache.put(key, provider="openai", model="test-model", text="YES", prompt_tokens=1,
              completion_tokens=1, seconds=0.1, alternatives='[[3,"YES",[["NO",-0.1]]]]')
    got = run(chat_once(client, "is it?", **asking()))
    assert len(server.requests) == 1 and not got.cached
    assert got.alternatives is not None and got.alternatives[0][0] == 0
    hit = cache.get(key)
    assert hit is not None and hit.alternatives is not None
    assert hit.alternatives.startswith('{"format":2')
    again = run(chat_once(LLMClient(settings(server.url), cache=cache), "is it?",
                          **asking()))
    assert again.cached and again.alternatives == got.alternatives
    assert len(server.requests) == 1
