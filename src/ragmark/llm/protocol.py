"""The wire formats: request bodies and response parsing for OpenAI-compatible servers
and Ollama's native ``/api/chat``. Pure: no I/O."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ragmark.llm.logprobs import Alternatives
from ragmark.llm.providers import provider
from ragmark.llm.providers.base import Message, ResponseError
from ragmark.llm.results import Usage

__all__ = ["Message", "ResponseError", "alternatives_of", "chat_path", "embed_body",
           "embed_path", "estimate_tokens", "gives_logprobs", "models_path",
           "parse_embeddings", "parse_rerank", "parse_response", "request_body",
           "rerank_body"]


def chat_path(name: str) -> str:
    return provider(name).chat_path


def models_path(name: str) -> str:
    return provider(name).models_path


def request_body(
    name: str, model: str, messages: Sequence[Message], params: Mapping[str, Any]
) -> dict[str, Any]:
    """The JSON body of a chat request to provider ``name``; ``params`` use OpenAI names
    (``temperature``, ``max_tokens``, ``seed``, ``response_format``, ...), which the
    provider maps to its own."""
    return provider(name).request_body(model, messages, params)


def parse_response(name: str, data: Any) -> tuple[str, Usage]:
    """(text, usage) of a chat response; ResponseError when the shape is wrong."""
    try:
        text, usage = provider(name).parse_chat(data)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as e:
        raise ResponseError(f"unexpected response shape ({type(e).__name__}: {e})") from None
    if text is None:
        text = ""
    if not isinstance(text, str):
        raise ResponseError(f"message content is {type(text).__name__}, not text")
    return text, usage


def alternatives_of(name: str, data: Any) -> Alternatives | None:
    """Where the model hesitated in a chat response, when provider ``name`` gives
    log-probabilities and the response holds them (None otherwise; a malformed list is
    none)."""
    read = provider(name).alternatives
    try:
        return None if read is None else read(data)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError):
        return None


def gives_logprobs(name: str) -> bool:
    """True when provider ``name`` gives log-probabilities when asked."""
    return provider(name).alternatives is not None


def estimate_tokens(messages: Sequence[Message], chars_per_token: int = 4) -> int:
    """Rough prompt tokens: characters / 4 (``chars_per_token``) of every message's
    content, plus 4 per message for the role and framing. An estimate, not a
    tokenizer."""
    chars = 0
    for m in messages:
        content = m.get("content", "")
        chars += len(content) if isinstance(content, str) else len(str(content))
    return -(-chars // chars_per_token) + 4 * len(messages)


def embed_path(name: str) -> str:
    return provider(name).embed_path


def embed_body(name: str, model: str, texts: Sequence[str],
               dimensions: int | None) -> dict[str, Any]:
    """The JSON body of an embedding request for a batch of texts."""
    return provider(name).embed_body(model, texts, dimensions)


def parse_embeddings(name: str, data: Any, n: int
                     ) -> tuple[tuple[list[list[float]], int], Usage]:
    """The ``n`` vectors of an embedding response, in input order, how many of them were
    mean-pooled from one vector per token (llama.cpp's server without pooling answers
    so), and the prompt tokens; ResponseError when the shape is wrong or a vector is
    missing."""
    try:
        raw, usage = provider(name).embeddings_of(data)
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
