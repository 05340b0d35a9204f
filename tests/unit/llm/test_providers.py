"""LLM providers are one file each (issue 21): a module in ragmark/llm/providers with a
PROVIDER is found by name, accepted by the settings and the CLI, and its wire format is
the one the client speaks."""

from __future__ import annotations

import asyncio

import pytest
from support.doors import isolated

from ragmark.errors import ConfigError
from ragmark.llm import LLMClient, LLMSettings
from ragmark.llm import providers as registry
from ragmark.llm.protocol import parse_response, request_body

OLLAMA_LIKE = '''
"""A provider for a server that speaks Ollama's chat API (a worked example)."""
from ragmark.llm.providers import ollama
from ragmark.llm.providers.base import Provider

PROVIDER = Provider(
    name="ollama_like", chat_path="/api/chat", models_path="/api/tags",
    embed_path="/api/embed", forms=("format", "off"), request_body=ollama.request_body,
    parse_chat=ollama.parse_chat, embed_body=ollama.embed_body,
    embeddings_of=ollama.embeddings_of, model_names=ollama.model_names)
'''


def test_the_built_in_providers():
    assert registry.names() == ["openai", "ollama"]
    assert registry.provider("ollama").chat_path == "/api/chat"
    body = request_body("ollama", "m", [{"role": "user", "content": "hi"}],
                        {"max_tokens": 7, "temperature": 0})
    assert body["options"] == {"num_predict": 7, "temperature": 0} and not body.get("format")
    assert parse_response("openai", {"choices": [{"message": {"content": "ok"}}]})[0] == "ok"
    with pytest.raises(ConfigError, match="unknown LLM provider 'cohere'; known: openai, "
                                          "ollama"):
        registry.provider("cohere")
    with pytest.raises(ValueError, match="provider must be one of openai, ollama"):
        LLMSettings(base_url="http://x", model="m", provider="cohere")


def test_a_new_provider_is_one_file(tmp_path, monkeypatch, ollama_server):
    (tmp_path / "ollama_like.py").write_text(OLLAMA_LIKE)
    isolated(monkeypatch, registry.PROVIDERS, reload=True)
    monkeypatch.setattr(registry, "__path__", [*registry.__path__, str(tmp_path)])
    monkeypatch.syspath_prepend(str(tmp_path))
    assert "ollama_like" in registry.names()
    settings = LLMSettings(base_url=ollama_server.url, model="test-model",
                           provider="ollama_like")

    async def go():
        async with LLMClient(settings, use_cache=False) as c:
            ok, _ = await c.probe()
            return ok, await c.chat([{"role": "user", "content": "hello"}], max_tokens=5)

    ok, got = asyncio.run(go())
    assert ok and got.text == "echo: hello"
    assert [r.path for r in ollama_server.requests] == ["/api/chat"]
    assert ollama_server.requests[0].body["options"]["num_predict"] == 5
