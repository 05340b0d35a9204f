"""The wire formats: request bodies and response parsing for OpenAI-compatible servers
and Ollama's native ``/api/chat``. Pure: no I/O."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ragmark.llm.results import Usage

Message = Mapping[str, Any]

# OpenAI parameter name -> Ollama option name
_OLLAMA_OPTIONS = {"max_tokens": "num_predict", "stop": "stop", "top_p": "top_p", "seed": "seed"}


class ResponseError(ValueError):
    """A 200 response whose body is not the expected shape."""


def chat_path(provider: str) -> str:
    return "/api/chat" if provider == "ollama" else "/chat/completions"


def models_path(provider: str) -> str:
    return "/api/tags" if provider == "ollama" else "/models"


def request_body(
    provider: str, model: str, messages: Sequence[Message], params: Mapping[str, Any]
) -> dict[str, Any]:
    """The JSON body of a chat request; ``params`` use OpenAI names (``temperature``,
    ``max_tokens``, ``seed``, ``response_format``, ...), mapped for Ollama."""
    msgs = [dict(m) for m in messages]
    if provider != "ollama":
        body: dict[str, Any] = {"model": model, "messages": msgs}
        body.update({k: v for k, v in params.items() if v is not None})
        return body
    options: dict[str, Any] = {}
    body = {"model": model, "messages": msgs, "stream": False}
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
            options[_OLLAMA_OPTIONS.get(k, k)] = v
    if options:
        body["options"] = options
    return body


def parse_response(provider: str, data: Any) -> tuple[str, Usage]:
    """(text, usage) of a chat response; ResponseError when the shape is wrong."""
    try:
        if provider == "ollama":
            text = data["message"]["content"]
            usage = Usage(int(data.get("prompt_eval_count") or 0), int(data.get("eval_count") or 0))
        else:
            text = data["choices"][0]["message"]["content"]
            u = data.get("usage") or {}
            usage = Usage(int(u.get("prompt_tokens") or 0), int(u.get("completion_tokens") or 0))
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as e:
        raise ResponseError(f"unexpected response shape ({type(e).__name__}: {e})") from None
    if text is None:
        text = ""
    if not isinstance(text, str):
        raise ResponseError(f"message content is {type(text).__name__}, not text")
    return text, usage


def estimate_tokens(messages: Sequence[Message]) -> int:
    """Rough prompt tokens: characters / 4 of every message's content, plus 4 per message
    for the role and framing. An estimate, not a tokenizer."""
    chars = 0
    for m in messages:
        content = m.get("content", "")
        chars += len(content) if isinstance(content, str) else len(str(content))
    return -(-chars // 4) + 4 * len(messages)
