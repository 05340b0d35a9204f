"""An HTTP endpoint as the pipeline, against a real local server (tests/support)."""

from __future__ import annotations

import socket
from collections import Counter

import pytest
from support.fake_llm_server import Reply

from ragmark.config import load_configs
from ragmark.errors import ConfigError
from ragmark.pipelines.config import HttpPipelineConfig
from ragmark.running.source import ask_all


def service(body):
    """A RAG service: the answer is the question reversed, one source per word."""
    q = body["question"]
    words = q.split()
    return Reply(body={"data": {"answer": q[::-1],
                                "sources": [{"text": w, "id": str(i)}
                                            for i, w in enumerate(words)]}})


def cfg(server, **kw):
    values = {"kind": "http", "url": server.url + "/ask", "answer_path": "data.answer",
              "contexts_path": "data.sources[*].text", "backoff": 0.0, **kw}
    return HttpPipelineConfig.model_validate(values)


def asked(server, question):
    return sum(1 for r in server.requests if r.body["question"] == question)


def test_answers_and_contexts_come_from_the_configured_paths(server):
    server.rule = service
    outs, retries = ask_all(cfg(server, body={"top_k": 3}), ["alpha beta", "gamma"])
    assert [(o.answer, [c.text for c in o.contexts]) for o in outs] == [
        ("ateb ahpla", ["alpha", "beta"]), ("ammag", ["gamma"])]
    assert retries == 0
    assert server.requests[0].path == "/v1/ask"
    assert {r.body["top_k"] for r in server.requests} == {3}
    assert outs[0].latency_s > 0


def test_contexts_path_to_objects_keeps_their_ids(server):
    server.rule = service
    outs, _ = ask_all(cfg(server, contexts_path="data.sources"), ["alpha beta"])
    assert [(c.text, c.id) for c in outs[0].contexts] == [("alpha", "0"), ("beta", "1")]


def test_5xx_and_429_are_retried_a_bounded_number_of_times(server):
    seen: Counter[str] = Counter()

    def rule(body):
        q = body["question"]
        seen[q] += 1
        if q == "flaky" and seen[q] == 1:
            return Reply(status=500, body={"error": "boom"})
        if q == "busy" and seen[q] == 1:
            return Reply(status=429, body={"error": "slow down"}, headers={"Retry-After": "0"})
        if q == "broken":
            return Reply(status=503, body={"error": "down"})
        if q == "missing":
            return Reply(status=404, body={"error": "no route"})
        return service(body)

    server.rule = rule
    outs, retries = ask_all(cfg(server, retries=2), ["flaky", "busy", "broken", "missing"])
    flaky, busy, broken, missing = outs
    assert flaky.answer == "ykalf" and busy.answer == "ysub"
    assert broken.error == f"HTTP 503 from {server.url}/ask (gave up after 3 attempts)"
    assert broken.details == {"response": '{"error": "down"}'}
    assert missing.error == f"HTTP 404 from {server.url}/ask"  # not retried
    assert (asked(server, "flaky"), asked(server, "busy"), asked(server, "broken"),
            asked(server, "missing")) == (2, 2, 3, 1)
    assert retries == 1 + 1 + 2


def test_connection_errors_are_retried_then_recorded():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    c = HttpPipelineConfig(kind="http", url=f"http://127.0.0.1:{port}/ask", retries=1,
                           backoff=0.0)
    outs, retries = ask_all(c, ["q1", "q2"])
    assert [o.error for o in outs] == [
        f"connection error to http://127.0.0.1:{port}/ask: ConnectError (gave up after 2 "
        "attempts)"] * 2
    assert retries == 2


def test_a_timeout_is_recorded_and_not_retried(server):
    server.rule = lambda body: Reply(delay=1.0) if body["question"] == "slow" else service(body)
    outs, retries = ask_all(cfg(server, timeout=0.3, retries=3), ["slow", "fast one"])
    assert outs[0].error == f"timed out: no answer from {server.url}/ask within 0.3 s"
    assert outs[1].answer == "eno tsaf"
    assert asked(server, "slow") == 1 and retries == 0


def test_concurrency_is_bounded(server):
    server.rule = lambda body: Reply(body=service(body).body, delay=0.15)
    outs, _ = ask_all(cfg(server, concurrency=3), [f"q{i}" for i in range(9)])
    assert all(o.error is None for o in outs)
    assert server.max_active == 3
    assert min(o.latency_s for o in outs) >= 0.15


def test_a_path_that_does_not_resolve_names_the_path_and_keeps_the_response(server):
    server.rule = lambda body: (Reply(body={"error": "no results"}) if body["question"] == "odd"
                                else service(body))
    outs, _ = ask_all(cfg(server), ["odd", "fine"])
    assert outs[0].error == ("answer_path 'data.answer': did not resolve: no key 'data' at "
                             "the top level (keys there: 'error')")
    assert outs[0].shape_error
    assert outs[0].details == {"response": '{"error": "no results"}'}
    assert outs[1].error is None


def test_answer_and_contexts_of_the_wrong_type_are_named(server):
    server.rule = lambda body: Reply(body={"data": {"answer": ["a"], "sources": []}})
    outs, _ = ask_all(cfg(server), ["x"])
    assert outs[0].error == "answer_path 'data.answer': expected a string, got a list"
    server.rule = lambda body: Reply(body={"data": {"answer": "a", "sources": [{"text": 5}]}})
    outs, _ = ask_all(cfg(server), ["x"])
    assert outs[0].error == ("contexts_path 'data.sources[*].text'[0]: expected a non-empty "
                             "string or an object with a non-empty string 'text', got a number")
    server.rule = lambda body: Reply(body="<html>oops</html>")
    outs, _ = ask_all(cfg(server), ["x"])
    assert outs[0].error == f"the response of {server.url}/ask is not JSON"
    assert outs[0].details == {"response": "<html>oops</html>"}


def test_the_api_key_is_sent_from_the_named_variable(server, monkeypatch):
    server.rule = service
    monkeypatch.setenv("MY_SERVICE_KEY", "sk-test-123")
    ask_all(cfg(server, api_key_env="MY_SERVICE_KEY"), ["a"])
    assert server.requests[0].headers["Authorization"] == "Bearer sk-test-123"
    monkeypatch.delenv("MY_SERVICE_KEY")
    with pytest.raises(ConfigError, match="the variable MY_SERVICE_KEY is not set"):
        ask_all(cfg(server, api_key_env="MY_SERVICE_KEY"), ["a"])


def test_config_errors_name_the_file_and_key(tmp_path):
    p = tmp_path / "svc.toml"
    p.write_text('[pipeline]\nkind = "http"\nurl = "ftp://x"\nanswer_path = "data..answer"\n'
                 'contextz = "x"\n')
    with pytest.raises(ConfigError) as e:
        load_configs(p)
    lines = str(e.value).splitlines()
    assert lines[0] == f"{p}, key 'pipeline.url': expected an http:// or https:// URL"
    assert lines[1].startswith(f"{p}, key 'pipeline.answer_path': invalid path "
                               "'data..answer': a '.' at position 5 must follow")
    assert lines[2] == (f"{p}, key 'pipeline.contextz': unknown key; known keys of "
                        "[pipeline]: kind, url, "
                        "question_field, answer_path, contexts_path, hops_path, messages_field, "
                        "conversation_field, body, "
                        "timeout, concurrency, retries, backoff, api_key_env")
    p.write_text('[pipeline]\nkind = "grpc"\n')
    with pytest.raises(ConfigError) as e:
        load_configs(p)
    assert str(e.value) == (f"{p}, key 'pipeline.kind': expected 'python' or 'langchain' or "
                            "'llamaindex' or 'http'")
    p.write_text('[pipeline]\nkind = "http"\nurl = "http://x/ask"\n[retriever]\nname = "bm25"\n')
    with pytest.raises(ConfigError) as e:
        load_configs(p)
    assert str(e.value) == (f"{p}, key 'retriever': a config with a [pipeline] asks an external "
                            "system; it takes no chunker, retriever, reranker or generator")
