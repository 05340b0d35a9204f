"""Structured judge output against the scripted server: the schema goes out in OpenAI's
form first; an endpoint that refuses it (like llama.cpp's Python server) gets the next
form, down to none; the form found is remembered per endpoint (a new client sends it at
once and finds its calls in the cache); Ollama gets `format`; `structured = "off"` and
`--llm-structured off` send none; an unrelated 400 is not taken for a refusal."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from support.cli import run_cli
from support.fake_llm_server import Reply, chat_reply

from ragmark.judges.relevance import GradeOutput, relevance_grade
from ragmark.llm import LLMClient, LLMSettings
from ragmark.llm.structured import rejected, strict_schema

SCHEMA = strict_schema(GradeOutput.model_json_schema())


def grade(client: LLMClient, passage: str = "apples are red"):
    async def go():
        async with client:
            return await relevance_grade(client, "are apples red?", passage)
    return asyncio.run(go())


def client(url: str, **kw) -> LLMClient:
    return LLMClient(LLMSettings(base_url=url, model="test-model", **{"max_retries": 0, **kw}))


def refuse(*forms: str):
    """A rule: HTTP 422 for the response_format types in ``forms`` (llama.cpp's Python
    server answers json_schema so), else a grade."""
    def rule(body):
        fmt = (body.get("response_format") or {}).get("type")
        if fmt in forms:
            return Reply(status=422, body={"detail": [{"loc": ["body", "response_format"],
                                                       "msg": "Input should be 'text' or "
                                                       "'json_object'"}]})
        return chat_reply('{"grade": 2}')
    return rule


def test_the_schema_goes_out_in_openai_form(server):
    server.rule = refuse()
    assert grade(client(server.url)).value == 2.0
    (req,) = server.requests
    fmt = req.body["response_format"]
    assert fmt == {"type": "json_schema", "json_schema": {
        "name": "GradeOutput", "schema": SCHEMA, "strict": True}}
    assert SCHEMA["required"] == list(SCHEMA["properties"])
    assert SCHEMA["additionalProperties"] is False


def test_a_refused_form_falls_back_and_is_remembered(server):
    server.rule = refuse("json_schema")
    c = client(server.url)
    assert grade(c).value == 2.0
    assert [r.body["response_format"]["type"] for r in server.requests] == [
        "json_schema", "json_object"]
    assert server.requests[1].body["response_format"]["schema"] == SCHEMA
    assert c.stats.calls == 2 and c.stats.failures == 0 and c.stats.format_refusals == 1
    remembered = json.loads(c.forms.path.read_text())
    assert remembered == {f"openai {server.url} test-model": "json_object"}
    # a new client sends the remembered form at once, and finds the answer cached
    again = client(server.url)
    assert grade(again).value == 2.0
    assert len(server.requests) == 2 and again.stats.cache_hits == 1
    assert grade(again, "pears are green").value == 2.0
    assert server.requests[-1].body["response_format"]["type"] == "json_object"
    assert len(server.requests) == 3


def test_an_endpoint_that_refuses_every_form_gets_none(server):
    server.rule = refuse("json_schema", "json_object")
    c = client(server.url)
    assert grade(c).value == 2.0
    assert len(server.requests) == 3 and "response_format" not in server.requests[2].body
    assert c.forms.current(c.settings) == "off"


def test_an_unrelated_400_is_not_a_refusal(server):
    server.queue.append(Reply(status=400, body={"error": "context length exceeded"}))
    c = client(server.url)
    got = grade(c)
    assert not got.ok and "HTTP 400" in got.reason
    assert len(server.requests) == 1 and c.forms.current(c.settings) == "json_schema"
    assert not rejected("HTTP 500 from x: internal error in the format of the output")
    assert not rejected("HTTP 503 from x: response_format")
    assert rejected("HTTP 422 from http://h/v1/chat/completions: {\"detail\": "
                    "\"response_format ...\"}")


def test_a_500_naming_the_response_format_is_a_refusal_without_retries(server):
    """llama.cpp's Python server answers OpenAI's json_schema form with a 500 that names
    response_format: one request, then the next form (no retries of the 500)."""
    def rule(body):
        if (body.get("response_format") or {}).get("type") == "json_schema":
            return Reply(status=500, body={"error": {"message": "1 validation error: "
                                                     "('body', 'response_format', 'type')"}})
        return chat_reply('{"grade": 3}')

    server.rule = rule
    c = client(server.url, max_retries=3)
    assert grade(c).value == 3.0
    assert [r.body["response_format"]["type"] for r in server.requests] == [
        "json_schema", "json_object"]
    assert c.stats.retries == 0


def test_ollama_gets_the_schema_as_format(ollama_server):
    ollama_server.rule = lambda body: Reply(body={
        "model": "m", "message": {"role": "assistant", "content": '{"grade": 1}'},
        "done": True})
    assert grade(client(ollama_server.url, provider="ollama")).value == 1.0
    assert ollama_server.requests[0].body["format"] == SCHEMA


def test_off_sends_no_schema(server):
    server.rule = refuse()
    assert grade(client(server.url, structured="off")).value == 2.0
    assert "response_format" not in server.requests[0].body


def test_the_flag_turns_it_off_and_dry_runs_key_the_same_form(server, tmp_path, capsys):
    server.rule = lambda body: chat_reply('{"rating": 4, "reason": "ok"}')
    demo = Path(__file__).resolve().parents[3] / "src" / "ragmark" / "demo"
    args = ["run", "--dataset", str(demo / "questions.json"), "--corpus",
            str(demo / "corpus"), "--max-queries", "2",
            "--judge-metrics", "answer_relevance", "--llm-base-url", server.url,
            "--llm-model", "test-model", "--output", str(tmp_path / "r.json"), "--quiet"]
    code, _, err = run_cli([*args, "--llm-structured", "off"], capsys)
    assert code in (0, 1), err
    assert server.requests and all("response_format" not in r.body for r in server.requests)
    n = len(server.requests)
    code, out, _ = run_cli([*args, "--llm-structured", "off", "--dry-run"], capsys)
    assert code == 0 and "dry run: 0 judge calls" in out and len(server.requests) == n
    # with schemas, the calls are new ones (the schema is part of the key)
    code, out, _ = run_cli([*args, "--dry-run"], capsys)
    assert code == 0 and "dry run: 0 judge calls" not in out
    with pytest.raises(SystemExit):
        from ragmark.cli import main
        main([*args, "--llm-structured", "sometimes"])


def test_concurrent_calls_wait_for_the_first_to_find_the_form(server):
    server.rule = refuse("json_schema")
    c = client(server.url, concurrency=4)

    async def go():
        async with c:
            return await asyncio.gather(*(relevance_grade(c, "q?", f"passage {i}")
                                          for i in range(6)))

    got = asyncio.run(go())
    assert all(g.value == 2.0 for g in got)
    kinds = [r.body["response_format"]["type"] for r in server.requests]
    assert kinds == ["json_schema"] + ["json_object"] * 6  # one refusal, not one per call
