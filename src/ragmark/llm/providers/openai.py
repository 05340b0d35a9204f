"""OpenAI-compatible servers (OpenAI, vLLM, llama.cpp, LM Studio, OpenRouter, ...):
``POST /chat/completions``, ``GET /models``, ``POST /embeddings``."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from ragmark.llm.logprobs import Alternatives, compact
from ragmark.llm.providers.base import Message, Provider, ResponseError, Served, positive
from ragmark.llm.results import Usage
from ragmark.llm.window import window_in_refusal

_MODEL_KEYS = ("max_model_len", "context_length", "context_window", "max_context_length")


def request_body(model: str, messages: Sequence[Message], params: Mapping[str, Any]
                 ) -> dict[str, Any]:
    body: dict[str, Any] = {"model": model, "messages": [dict(m) for m in messages]}
    body.update({k: v for k, v in params.items() if v is not None})
    return body


def parse_chat(data: Any) -> tuple[Any, Usage]:
    text = data["choices"][0]["message"]["content"]
    u = data.get("usage") or {}
    return text, Usage(int(u.get("prompt_tokens") or 0), int(u.get("completion_tokens") or 0))


def alternatives(data: Any) -> Alternatives | None:
    """Where the model hesitated, from ``choices[0].logprobs.content`` (None: absent)."""
    got = data["choices"][0].get("logprobs")
    text = data["choices"][0].get("message", {}).get("content")
    return (compact(got.get("content"), text if isinstance(text, str) else None)
            if isinstance(got, Mapping) else None)


def embed_body(model: str, texts: Sequence[str], dimensions: int | None) -> dict[str, Any]:
    body: dict[str, Any] = {"model": model, "input": list(texts)}
    if dimensions is not None:
        body["dimensions"] = dimensions
    body["encoding_format"] = "float"
    return body


def embeddings_of(data: Any) -> tuple[list[Any], Usage]:
    """The vectors in input order (``data`` put in order by each item's ``index``)."""
    items = data["data"]
    by_index = {int(it.get("index", i)): it["embedding"] for i, it in enumerate(items)}
    if sorted(by_index) != list(range(len(items))):
        raise ResponseError("the embeddings' indexes are not 0..n-1")
    u = data.get("usage") or {}
    return ([by_index[i] for i in range(len(items))],
            Usage(int(u.get("prompt_tokens") or u.get("total_tokens") or 0)))


def model_names(data: Any) -> set[str]:
    return {str(m.get("id") or m.get("name") or m.get("model")) for m in data["data"]}


def _root(url: str) -> str:
    """``url`` without a trailing API version path (``/v1``)."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, re.sub(r"/v\d+[a-z]*/?$", "", parts.path),
                       "", ""))


def _from_models(data: Any, model: str) -> int | None:
    items = data.get("data") if isinstance(data, Mapping) else None
    if not isinstance(items, list):
        return None
    entries = [m for m in items if isinstance(m, Mapping)]
    mine = [m for m in entries if m.get("id") == model] or (entries if len(entries) == 1
                                                              else [])
    for m in mine:
        for key in _MODEL_KEYS:
            got = positive(m.get(key))
            if got:
                return got
        meta = m.get("meta")
        if isinstance(meta, Mapping) and positive(meta.get("n_ctx")):
            return positive(meta.get("n_ctx"))
    return None


def _from_props(data: Any) -> int | None:
    if not isinstance(data, Mapping):
        return None
    settings = data.get("default_generation_settings")
    if isinstance(settings, Mapping) and positive(settings.get("n_ctx")):
        return positive(settings.get("n_ctx"))
    return positive(data.get("n_ctx"))


OVERSIZED = 1 << 19
"""Tokens of the probe that makes llama-cpp-python's server name its window: a prompt no
window of a local server holds, refused after its tokenization (half a second), before
any of it is evaluated."""


async def _refused_window(settings: Any, headers: Mapping[str, str]) -> int | None:
    """llama-cpp-python's server publishes its window nowhere, but refuses at once a
    prompt longer than it, naming it ("maximum context length is 2048 tokens"): the
    window from the refusal of an oversized prompt (None when it is not refused so)."""
    body = request_body(settings.model, [{"role": "user", "content": " a" * OVERSIZED}],
                        {"max_tokens": 1})
    try:
        async with httpx.AsyncClient(timeout=30.0, headers=dict(headers)) as http:
            resp = await http.post(settings.base_url + "/chat/completions", json=body)
    except httpx.HTTPError:
        return None
    return window_in_refusal(resp.text) if resp.status_code == 400 else None


async def window(settings: Any, headers: Mapping[str, str], models: Any) -> Served:
    """From the models list (vLLM's ``max_model_len``, ``context_length`` ...); llama.cpp's
    ``/props`` (its window and parallel slots) when the list is llama.cpp's, the refusal
    of an oversized prompt when it is llama-cpp-python's (:func:`_refused_window`); and the
    server's tokenizer endpoint where the list says which server it is (llama.cpp's
    ``/tokenize``, vLLM's ``/tokenize``, llama-cpp-python's ``/extras/tokenize/count``)."""
    got = _from_models(models, settings.model)
    items = models.get("data") if isinstance(models, Mapping) else None
    owners = {m.get("owned_by") for m in items if isinstance(m, Mapping)} if isinstance(
        items, list) else set()
    root = _root(settings.base_url)
    if "vllm" in owners:
        return Served(got, None, (root + "/tokenize", "prompt"))
    if "me" in owners:  # llama-cpp-python's server names itself so; it answers one call
        # at a time (the rest wait in its queue, their timeouts running)
        return Served(got or await _refused_window(settings, headers), 1,
                      (root + "/extras/tokenize/count", "input"),
                      form="json_object")  # it refuses json_schema's form
    if "llamacpp" not in owners:
        return Served(got)
    async with httpx.AsyncClient(timeout=5.0, headers=dict(headers)) as http:
        resp = await http.get(root + "/props")
    props = resp.json() if resp.status_code == 200 else None
    slots = positive(props.get("total_slots")) if isinstance(props, Mapping) else None
    # a slot's window (/props) is the one a call must fit, not the whole cache's (models)
    return Served(_from_props(props) or got, slots, (root + "/tokenize", "content"),
                  form="json_object")


PROVIDER = Provider(
    name="openai", chat_path="/chat/completions", models_path="/models",
    embed_path="/embeddings", forms=("json_schema", "json_object", "off"),
    request_body=request_body, parse_chat=parse_chat, embed_body=embed_body,
    embeddings_of=embeddings_of, model_names=model_names, versioned=True, window=window,
    alternatives=alternatives)
