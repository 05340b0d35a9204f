"""Issue 25 item 8: judge calls fit the model's context window. A 2,048-token model
refused most judge calls (prompt + a 1,024-token answer) with HTTP 400 and left judges
without a value; now the window is learnt (settings, the server's metadata, or the
refusal itself), the answer's cap is fitted and the judged texts are cut to fit, with a
counted note."""

from __future__ import annotations

import asyncio
import json

import pytest
from support.cli import run_cli
from support.fake_llm_server import chat_reply

from ragmark.judges.fit import CUT_MARK, fit
from ragmark.judges.prompt import JSON_MAX_TOKENS
from ragmark.llm import LLMClient, LLMSettings
from ragmark.llm.providers.openai import OVERSIZED
from ragmark.llm.window import known_window, prompt_tokens, window_in_refusal

LONG = ("Metformin lowers glucose production in the liver and improves insulin "
        "sensitivity in muscle. ") * 40  # ~3,700 characters


def _log(path, n=3):
    path.write_text("".join(json.dumps({
        "id": f"q{i}", "question": f"What does metformin do ({i})?",
        "answer": "It lowers glucose production in the liver.",
        "contexts": [f"({i}) {LONG}", LONG[::-1], LONG.upper()]}) + "\n"
        for i in range(n)))
    return path


def _rule(body):
    system = body["messages"][0]["content"]
    if system.startswith("Break the answer into its factual claims"):
        return chat_reply('{"claims": ["It lowers glucose production."]}', 30, 8)
    if system.startswith("Check each numbered claim"):
        return chat_reply('{"verdicts": [{"claim": 1, "supported": true}]}', 40, 12)
    if "one passage retrieved for it" in system:  # context relevance, a call a passage
        first = '<data name="passage">\n(' in body["messages"][-1]["content"]
        return chat_reply("YES" if first else "NO", 40, 1)
    return chat_reply('{"rating": 4, "reason": "ok"}', 20, 4)


class _One:
    def __init__(self, request):
        self.requests = [request]


def _fits(server, window):
    for r in server.requests:
        if r.path.endswith("/chat/completions") and r.body:
            chars = sum(len(str(m["content"])) for m in r.body["messages"])
            yield chars // 4 + int(r.body["max_tokens"]) <= window


@pytest.mark.parametrize("how", ["models", "refusal", "flag"])
def test_judges_fit_a_small_window(tmp_path, capsys, server, how):
    server.rule = _rule
    server.n_ctx = 2048
    args = ["run", "--outputs", str(_log(tmp_path / "log.jsonl")), "--judge-metrics",
            "faithfulness", "--llm-base-url", server.url, "--llm-model", "test-model",
            "--output", str(tmp_path / "r.json"), "--quiet"]
    if how == "models":  # vLLM's /v1/models says it
        server.model_meta = {"max_model_len": 2048}
    if how == "flag":
        args += ["--llm-context-window", "2048"]
    code, stdout, err = run_cli(args, capsys)
    assert code == 0, err
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["counts"]["faithfulness"] == {"n": 3, "missing": 0}
    assert data["metrics"]["faithfulness"] == 1.0
    # the refusal names the window: learnt there, the refused call is made again, fitted
    assert (server.refused > 0) == (how == "refusal")
    ok = list(_fits(server, 2048))
    assert ok.count(False) == server.refused  # every call that was not refused fits
    checks = [r for r in server.requests
              if r.body["messages"][0]["content"].startswith("Check each")
              and all(_fits(_One(r), 2048))]
    assert len(checks) == 3  # one per question, each with its three contexts cut
    assert all(r.body["messages"][-1]["content"].count(CUT_MARK) == 3 for r in checks)
    assert all(r.body["max_tokens"] < JSON_MAX_TOKENS for r in checks)
    assert data["llm"]["judge_cut_to_fit"] == 3 and data["llm"]["context_window"] == 2048
    assert any(n.startswith("3 of 6 judge calls did not fit the model's context window of "
                            "2,048 tokens with their whole texts") for n in data["notes"])


def test_the_answer_cap_and_the_dry_run(tmp_path, capsys, server):
    server.rule = _rule
    log = _log(tmp_path / "log.jsonl", 2)
    args = ["run", "--outputs", str(log), "--judge-metrics", "faithfulness,context_relevance",
            "--llm-base-url", server.url, "--llm-model", "test-model", "--output",
            str(tmp_path / "r.json"), "--quiet", "--llm-max-tokens", "300"]
    code, stdout, err = run_cli([*args, "--llm-context-window", "2048", "--dry-run"], capsys)
    assert code == 0, err
    assert server.requests == []
    # the claims calls (question and answer) fit; context relevance asks one call a
    # ~1,200-token passage, each fits: three calls a question, nothing cut; + the checks
    # of the claims: 2 + 2 + 2 x 3
    assert "dry run: 10 judge calls" in stdout
    assert "do not fit the model's context window" not in stdout
    code, _, err = run_cli(args, capsys)  # no window: nothing cut, every answer capped
    assert code == 0, err
    # JSON answers capped at the flag's 300; yes/no answers keep their own 16
    assert {r.body["max_tokens"] for r in server.requests} == {300, 16}
    assert all(r.body["max_tokens"] == 16 for r in server.requests
               if "one passage retrieved" in r.body["messages"][0]["content"])
    assert not any(CUT_MARK in json.dumps(r.body) for r in server.requests)
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["metrics"]["context_relevance"] == pytest.approx(1 / 3)


def test_the_window_from_the_server(server, ollama_server):
    async def window(srv, **kw):
        async with LLMClient(LLMSettings(base_url=srv.url, model="test-model", **kw),
                             use_cache=False) as c:
            ok, _ = await c.probe()  # every judge probes the endpoint before its calls
            assert ok
            return known_window(c)

    assert asyncio.run(window(server)) is None  # it says nothing
    assert [g.path for g in server.gets] == ["/v1/models"]  # and nothing more is asked
    server.props = {"default_generation_settings": {"n_ctx": 4096}}  # llama.cpp's /props
    server.model_meta = {"owned_by": "llamacpp"}  # ... asked when the list is llama.cpp's
    assert asyncio.run(window(server)) == 4096
    server.model_meta = {"max_model_len": 8192}  # vLLM says it in /v1/models
    assert asyncio.run(window(server)) == 8192
    assert asyncio.run(window(server, context_window=1024)) == 1024  # the settings win
    assert asyncio.run(window(ollama_server, provider="ollama")) is None
    ollama_server.show = {"parameters": "stop \"<|im_end|>\"\nnum_ctx 3072"}
    assert asyncio.run(window(ollama_server, provider="ollama")) == 3072
    server.model_meta, server.n_ctx = {"owned_by": "me"}, 2048  # llama-cpp-python's says
    assert asyncio.run(window(server)) == 2048  # nothing, but names it when refusing
    (probe,) = [r for r in server.requests if r.path.endswith("/chat/completions")]
    assert len(probe.body["messages"][0]["content"]) == 2 * OVERSIZED
    assert probe.body["max_tokens"] == 1 and server.refused == 1
    assert window_in_refusal("Requested tokens (2500) exceed context window of 2048") == 2048
    assert window_in_refusal("the request exceeds the available context size (4096 tokens)"
                             ", try increasing it") == 4096
    assert window_in_refusal("HTTP 500: boom") is None


def test_fit_cuts_the_longest_texts_and_keeps_every_item():
    from judges_support import NUMBERED_PRECISION as CONTEXT_RELEVANCE_PROMPT
    from judges_support import Passages

    item = Passages(question="q?", expected_answer="e",
                    context=["short one", "x" * 6000, "y" * 3000])
    whole = prompt_tokens(CONTEXT_RELEVANCE_PROMPT.render(item))
    got = fit(CONTEXT_RELEVANCE_PROMPT, item, JSON_MAX_TOKENS, 1800)
    assert got.cut and got.problem is None and len(got.item.context) == 3
    assert got.item.context[0] == "short one"  # shorter than the level: whole
    assert got.item.context[1].endswith(CUT_MARK) and got.item.context[2].endswith(CUT_MARK)
    assert len(got.item.context[1]) == len(got.item.context[2])  # cut to one length
    used = prompt_tokens(got.messages)
    assert used + got.max_tokens <= 1800 and got.max_tokens >= 256 and used < whole
    roomy = fit(CONTEXT_RELEVANCE_PROMPT, item, JSON_MAX_TOKENS, 100_000)
    assert not roomy.cut and roomy.max_tokens == JSON_MAX_TOKENS
    tight = fit(CONTEXT_RELEVANCE_PROMPT, item, JSON_MAX_TOKENS, 300)
    assert tight.problem is not None and "does not fit the model's context window of 300" \
        in tight.problem


def test_calls_made_together_are_fitted_when_sent(tmp_path, capsys, server, monkeypatch):
    """Issue 51 item 4: twelve questions' faithfulness checks are made at once against a
    server that publishes no window (2,048 tokens; each check's three passages are
    ~2,800 tokens). With two calls sent at a time, the two sent first go unfitted and
    are refused; their refusal names the window, they are fitted and sent again, and the
    other ten are fitted to it when their turn comes: 2 refused calls, not 12, and every
    question valued."""
    monkeypatch.setenv("RAGMARK_LLM_CONCURRENCY", "2")
    server.rule = _rule
    server.n_ctx = 2048
    server.refusal_delay = 0.5  # both first calls are in flight before either is refused
    code, _, err = run_cli(["run", "--outputs", str(_log(tmp_path / "log.jsonl", 12)),
                            "--judge-metrics", "faithfulness", "--llm-base-url",
                            server.url, "--llm-model", "test-model", "--output",
                            str(tmp_path / "r.json"), "--quiet"], capsys)
    assert code == 0, err
    assert server.refused == 2
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["counts"]["faithfulness"] == {"n": 12, "missing": 0}
    assert data["llm"]["failures"] == 2 and data["llm"]["context_window"] == 2048
