"""Exact fitting and parallel slots (issue 37 item 2): a judge call is fitted with the
server's own token count where the server offers one (llama.cpp's /tokenize, vLLM's
/tokenize, llama-cpp-python's /extras/tokenize/count), so no call is refused for its
length; and the judges send as many calls at once as the server has slots (llama.cpp's
/props total_slots) unless the concurrency was set."""

from __future__ import annotations

import asyncio
import json

from judges_support import numbered_precision
from support.fake_llm_server import FakeLLMServer, Reply, chat_reply

from ragmark.judges.prompt import JudgeCounts
from ragmark.llm import LLMClient, LLMSettings
from ragmark.llm.providers.base import Served
from ragmark.llm.providers.openai import window as served_by
from ragmark.llm.tokens import TEMPLATE_TOKENS

CONTEXTS = ["Metformin lowers glucose production in the liver (1.5 x 10(12)/l)." * 2,
            "Insulin sensitivity improves in muscle; p < 0.001." * 2]
VERDICTS = chat_reply(json.dumps({"verdicts": [{"passage": 1, "useful": True},
                                               {"passage": 2, "useful": False}]}))


def _llama_cpp(server: FakeLLMServer, window: int = 1200, slots: int = 2) -> None:
    """The scripted server as llama.cpp's: two tokens for every four characters (denser
    than the estimate's one for three), its window and slots in /props."""
    server.model_meta = {"owned_by": "llamacpp"}
    server.props = {"default_generation_settings": {"n_ctx": window}, "total_slots": slots}
    server.token_rate = 0.5
    server.n_ctx = window


async def _judged(server: FakeLLMServer, exact: bool, **settings):
    async with LLMClient(LLMSettings(base_url=server.url, model="test-model", timeout=5.0,
                                     max_retries=0, **settings), use_cache=False) as c:
        assert (await c.probe())[0]
        if not exact:
            c.tokens = None  # as a server without a tokenizer
        counts = JudgeCounts()
        score = await numbered_precision(c, "What does metformin do?", "It lowers glucose.",
                                        CONTEXTS, counts=counts)
        return score, counts, c


def test_counted_by_the_servers_tokenizer_no_call_is_refused(server: FakeLLMServer) -> None:
    _llama_cpp(server)
    server.rule = lambda body: VERDICTS
    score, _, client = asyncio.run(_judged(server, exact=True))
    assert score.value == 1.0 and server.refused == 0
    (call,) = [r.body for r in server.requests]
    texts = [m["content"] for m in call["messages"]]
    prompt = sum(server.tokens_of(t) for t in texts) + TEMPLATE_TOKENS * (len(texts) + 1)
    assert call["max_tokens"] == 1200 - prompt  # what the window leaves, counted exactly
    assert sorted(server.tokenized) == sorted(set(texts))  # one request per distinct text
    assert client.concurrency == 2  # the server's slots


def test_counted_by_the_estimate_the_same_call_is_refused(server: FakeLLMServer) -> None:
    """What happened before: characters / 3 undercounts this text, the answer's cap
    overruns the window, the server refuses and the item has no value."""
    _llama_cpp(server)
    server.rule = lambda body: VERDICTS
    score, counts, _ = asyncio.run(_judged(server, exact=False))
    assert server.refused == 1 and score.value is None
    assert "judge call failed" in score.reason and counts.failed == 1


def test_a_text_is_counted_once_across_calls(server: FakeLLMServer) -> None:
    _llama_cpp(server)
    server.rule = lambda body: VERDICTS

    async def twice():
        async with LLMClient(LLMSettings(base_url=server.url, model="test-model"),
                             use_cache=False) as c:
            await c.probe()
            for i in range(2):
                await numbered_precision(c, f"q{i}?", "It lowers glucose.", CONTEXTS)
            return c.tokens

    # the system message once, each question's own message once: 3 texts for 2 calls
    tokens = asyncio.run(twice())
    assert tokens.requests == len(server.tokenized) == 3
    assert len(server.requests) == 2 and server.refused == 0
    # on the connections of one pool: the first call's two texts on two, the second's
    # text on one of them again (a client a text opened three); closed with the client
    assert len(server.tokenize_peers) == 2 and tokens._http is None


def test_the_judges_follow_the_servers_slots_unless_the_concurrency_is_set(
        server: FakeLLMServer) -> None:
    _llama_cpp(server, window=100_000, slots=3)
    server.rule = lambda body: Reply(body=VERDICTS.body, delay=0.15)

    async def many(**settings):
        async with LLMClient(LLMSettings(base_url=server.url, model="test-model",
                                         **settings), use_cache=False) as c:
            await c.probe()
            await asyncio.gather(*(numbered_precision(c, f"q{i}?", "e", CONTEXTS)
                                   for i in range(9)))
            return c.concurrency

    assert asyncio.run(many()) == 3 and server.max_active == 3  # default 8 -> the 3 slots
    server.max_active = 0
    assert asyncio.run(many(concurrency=2)) == 2 and server.max_active == 2  # set: it wins


def test_which_servers_count_tokens_and_where():
    class S:
        base_url, model = "http://h:1/v1", "m"

    def facts(models):
        return asyncio.run(served_by(S(), {}, models))

    assert facts({"data": [{"id": "m", "owned_by": "vllm", "max_model_len": 4096}]}) == Served(
        4096, None, ("http://h:1/tokenize", "prompt"))
    assert facts({"data": [{"id": "m", "owned_by": "me"}]}) == Served(  # llama-cpp-python:
        None, 1, ("http://h:1/extras/tokenize/count", "input"), form="json_object")  # serial
    assert facts({"data": [{"id": "m", "owned_by": "openai"}]}) == Served(None)


def test_llama_cpp_pythons_count_endpoint(server: FakeLLMServer) -> None:
    from ragmark.llm.tokens import ServerTokens

    server.token_rate = 0.5
    counter = ServerTokens(server.url.removesuffix("/v1") + "/extras/tokenize/count", "input",
                           "test-model", {})
    assert asyncio.run(counter.count("abcdefgh")) == 4 and server.tokenized == ["abcdefgh"]
    broken = ServerTokens(server.url.removesuffix("/v1") + "/nowhere", "input", "m", {})
    assert asyncio.run(broken.count("abc")) is None and broken.broken  # then the estimate


def test_a_busy_server_is_waited_for_not_given_up(server: FakeLLMServer) -> None:
    """llama-cpp-python answers nothing, not even its models list, while it generates
    for another client: the probe's 5 s ran out and every judge value was missing ("the
    LLM endpoint did not answer"); then waiting the calls' timeout made a judge-eval
    beside a probe exit 2 after 60-70 s (issue 61 item 23). A server that took the
    connection is alive: busy, not gone, said at once."""
    server.get_delay = 1.5  # margins wide enough for a loaded two-core machine

    async def probe():
        async with LLMClient(LLMSettings(base_url=server.url, model="test-model",
                                         timeout=60), use_cache=False) as c:
            return await c.probe(timeout=0.5)

    import time

    t0 = time.monotonic()
    ok, why = asyncio.run(probe())
    assert time.monotonic() - t0 < 1.4
    assert ok and why == f"{server.url}/models took the connection but is busy (no answer in 0.5 s)"


def test_llama_cpp_gets_the_form_that_pins_each_verdicts_number(server: FakeLLMServer,
                                                                 tmp_path) -> None:
    """On llama.cpp's server the json_schema form let SmolLM2 number five passages
    [1, 1, 2, 3, 3] (7 of 30 SciFact questions without context precision); its
    json_object form takes the schema with the i-th verdict numbered i."""
    from ragmark.llm.structured import Forms

    _llama_cpp(server, window=100_000)
    server.rule = lambda body: VERDICTS

    async def go():
        async with LLMClient(LLMSettings(base_url=server.url, model="test-model"),
                             use_cache=False) as c:
            c.forms = Forms(tmp_path / "structured.json")
            await c.probe()
            return await numbered_precision(c, "q?", "e", CONTEXTS)

    assert asyncio.run(go()).value == 1.0
    (call,) = [r.body for r in server.requests]
    sent = call["response_format"]
    assert sent["type"] == "json_object"
    pinned = sent["schema"]["properties"]["verdicts"]["prefixItems"]
    assert [e["properties"]["passage"]["enum"] for e in pinned] == [[1], [2]]
