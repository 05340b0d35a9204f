"""Ollama's native API: ``POST /api/chat`` (options by Ollama's names, the schema as
``format``), ``GET /api/tags``, ``POST /api/embed``, ``POST /api/show``."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import httpx

from ragmark.llm.providers.base import Message, Provider, positive
from ragmark.llm.results import Usage

OPTIONS = {"max_tokens": "num_predict", "stop": "stop", "top_p": "top_p", "seed": "seed"}
"""OpenAI parameter name -> Ollama option name."""


def request_body(model: str, messages: Sequence[Message], params: Mapping[str, Any]
                 ) -> dict[str, Any]:
    options: dict[str, Any] = {}
    body: dict[str, Any] = {"model": model, "messages": [dict(m) for m in messages],
                            "stream": False}
    for k, v in params.items():
        if v is None:
            continue
        if k == "response_format":
            fmt = v.get("type") if isinstance(v, Mapping) else v
            if fmt == "json_object":
                body["format"] = "json"
            elif fmt == "json_schema" and isinstance(v, Mapping):
                body["format"] = v.get("json_schema", {}).get("schema", "json")
        else:
            options[OPTIONS.get(k, k)] = v
    if options:
        body["options"] = options
    return body


def parse_chat(data: Any) -> tuple[Any, Usage]:
    return data["message"]["content"], Usage(int(data.get("prompt_eval_count") or 0),
                                             int(data.get("eval_count") or 0))


def embed_body(model: str, texts: Sequence[str], dimensions: int | None) -> dict[str, Any]:
    body: dict[str, Any] = {"model": model, "input": list(texts)}
    if dimensions is not None:
        body["dimensions"] = dimensions
    return body


def embeddings_of(data: Any) -> tuple[list[Any], Usage]:
    return list(data["embeddings"]), Usage(int(data.get("prompt_eval_count") or 0))


def model_names(data: Any) -> set[str]:
    return {str(m.get("name") or m.get("model") or m.get("id")) for m in data["models"]}


async def window(settings: Any, headers: Mapping[str, str], models: Any) -> int | None:
    """The model's ``num_ctx`` parameter (``/api/show``); unknown when the model does not
    set one (Ollama's own default applies, and it cuts longer prompts silently)."""
    async with httpx.AsyncClient(timeout=5.0, headers=dict(headers)) as http:
        resp = await http.post(settings.base_url + "/api/show", json={"model": settings.model})
    if resp.status_code != 200:
        return None
    data = resp.json()
    m = re.search(r"(?m)^\s*num_ctx\s+(\d+)", str(data.get("parameters") or "")
                  ) if isinstance(data, Mapping) else None
    return positive(m.group(1)) if m else None


PROVIDER = Provider(
    name="ollama", chat_path="/api/chat", models_path="/api/tags", embed_path="/api/embed",
    forms=("format", "off"), request_body=request_body, parse_chat=parse_chat,
    embed_body=embed_body, embeddings_of=embeddings_of, model_names=model_names,
    window=window)
