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


def embed_path(provider: str) -> str:
    return "/api/embed" if provider == "ollama" else "/embeddings"


def embed_body(provider: str, model: str, texts: Sequence[str],
               dimensions: int | None) -> dict[str, Any]:
    """The JSON body of an embedding request for a batch of texts."""
    body: dict[str, Any] = {"model": model, "input": list(texts)}
    if dimensions is not None:
        body["dimensions"] = dimensions
    if provider != "ollama":
        body["encoding_format"] = "float"
    return body


def parse_embeddings(provider: str, data: Any, n: int
                     ) -> tuple[tuple[list[list[float]], int], Usage]:
    """The ``n`` vectors of an embedding response, in input order (OpenAI's ``data`` is
    put in order by each item's ``index``), how many of them were mean-pooled from one
    vector per token (llama.cpp's server without pooling answers so), and the prompt
    tokens; ResponseError when the shape is wrong or a vector is missing."""
    try:
        if provider == "ollama":
            raw = list(data["embeddings"])
            usage = Usage(int(data.get("prompt_eval_count") or 0))
        else:
            items = data["data"]
            by_index = {int(it.get("index", i)): it["embedding"] for i, it in enumerate(items)}
            if sorted(by_index) != list(range(len(items))):
                raise ResponseError("the embeddings' indexes are not 0..n-1")
            raw = [by_index[i] for i in range(len(items))]
            u = data.get("usage") or {}
            usage = Usage(int(u.get("prompt_tokens") or u.get("total_tokens") or 0))
        vectors, pooled = [], 0
        for v in raw:
            if v and isinstance(v[0], list):  # one vector per token: their mean
                vectors.append([sum(col) / len(v) for col in zip(*v, strict=True)])
                pooled += 1
            else:
                vectors.append([float(x) for x in v])
    except ResponseError:
        raise
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as e:
        raise ResponseError(f"unexpected embedding response ({type(e).__name__}: {e})") from None
    if len(vectors) != n:
        raise ResponseError(f"{len(vectors)} vectors for {n} texts")
    dims = {len(v) for v in vectors}
    if len(dims) != 1 or 0 in dims:
        raise ResponseError(f"vectors of lengths {sorted(dims)} in one answer")
    return (vectors, pooled), usage


def rerank_body(model: str, query: str, documents: Sequence[str]) -> dict[str, Any]:
    """The JSON body of a Cohere/Jina-style rerank request that asks for every score."""
    return {"model": model, "query": query, "documents": list(documents),
            "top_n": len(documents), "return_documents": False}


def parse_rerank(data: Any, n: int) -> tuple[list[float], Usage]:
    """The score of each of the ``n`` documents, in input order, from ``results[].index``
    and ``relevance_score`` (``score`` is accepted too; a bare list of results is
    text-embeddings-inference's own shape); ResponseError when one is missing."""
    try:
        results = data if isinstance(data, list) else data["results"]
        scores: dict[int, float] = {}
        for r in results:
            value = r["relevance_score"] if "relevance_score" in r else r["score"]
            scores[int(r["index"])] = float(value)
        u = {} if isinstance(data, list) else (data.get("usage") or {})
        billed = {} if isinstance(data, list) else (
            (data.get("meta") or {}).get("billed_units") or {})
        tokens = int(u.get("total_tokens") or u.get("prompt_tokens")
                     or billed.get("input_tokens") or 0)
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise ResponseError(f"unexpected rerank response ({type(e).__name__}: {e})") from None
    missing = [i for i in range(n) if i not in scores]
    if missing:
        raise ResponseError(f"no score for {len(missing)} of {n} documents")
    if any(s != s for s in scores.values()):
        raise ResponseError("a score is NaN")
    return [scores[i] for i in range(n)], Usage(tokens)
