"""The accounting of a pipeline's embedding endpoints (for the run's ``llm`` block) and
the dry-run estimate of what they would be asked."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from ragmark.embeddings.api import APIEmbedder
from ragmark.embeddings.cache import CachedEmbedder
from ragmark.llm.accounting import sum_accounting

_SUMMED = ("calls", "cache_hits", "retries", "failures", "prompt_tokens",
           "completion_tokens", "texts_embedded", "token_vectors_pooled")


def api_embedders(*components: Any) -> Iterator[tuple[APIEmbedder, CachedEmbedder | None]]:
    """Every embedding endpoint of the components (a semantic chunker, a dense retriever,
    the dense retrievers of a hybrid), each with the cache around it when there is one."""
    seen: set[int] = set()
    todo = list(components)
    while todo:
        comp = todo.pop(0)
        if comp is None:
            continue
        todo += list(getattr(comp, "retrievers", ()))
        emb = getattr(comp, "embedder", None)
        cached = emb if isinstance(emb, CachedEmbedder) else None
        inner = cached.embedder if cached is not None else emb
        if isinstance(inner, APIEmbedder) and id(inner) not in seen:
            seen.add(id(inner))
            yield inner, cached


def _merge(blocks: Sequence[dict[str, Any]]) -> dict[str, Any]:
    if len(blocks) == 1:
        return blocks[0]

    out = sum_accounting(blocks, _SUMMED)
    out["endpoint"] = ", ".join(dict.fromkeys(b["endpoint"] for b in blocks))
    out["model"] = ", ".join(dict.fromkeys(b["model"] for b in blocks))
    return out


def embedding_usage(*components: Any) -> dict[str, Any]:
    """The ``embeddings`` block of a run: requests, texts served from the embedding cache
    (``cache_hits``) and sent (``texts_embedded``), tokens, estimated cost; ``{}`` when
    no component asks an embedding API."""
    blocks = []
    for api, cached in api_embedders(*components):
        block = api.summary()
        block["cache_hits"] = cached.stats["hits"] if cached is not None else 0
        block["texts_embedded"] = cached.stats["encoded"] if cached is not None else 0
        blocks.append(block)
    return _merge(blocks) if blocks else {}


def embedding_notes(block: dict[str, Any]) -> list[str]:
    """What the run's notes say about its embedding endpoints."""
    pooled = int(block.get("token_vectors_pooled", 0))
    if not pooled:
        return []
    return [f"embedding endpoint {block['model']}: {pooled} texts came back as one vector "
            "per token and were mean-pooled by ragmark (start the server with a pooling "
            "setting for the model's own sentence vectors)"]


def embedding_estimate(api: APIEmbedder, cached: CachedEmbedder | None,
                       texts: Sequence[str]) -> dict[str, Any]:
    """A dry run of embedding ``texts``: what is not in the cache yet (``cached`` counts
    the distinct texts that are)."""
    distinct = list(dict.fromkeys(texts))
    todo = cached.missing(distinct) if cached is not None else distinct
    return {**api.estimate(todo), "cached": len(distinct) - len(todo)}


def sentence_texts(chunker: Any, documents: Sequence[Any]) -> list[str]:
    """The sentences a semantic chunker embeds for ``documents`` (none for others)."""
    groups = getattr(chunker, "sentence_groups", None)
    return [t for g in groups(documents) for t in g] if groups is not None else []


def dry_estimate(components: Sequence[Any], texts: Sequence[str]) -> dict[str, Any]:
    """The dry-run block of the embedding endpoints of ``components`` for ``texts``:
    ``{}`` without an endpoint; ``calls`` 0 when every text is cached."""
    blocks = [embedding_estimate(api, cached, texts)
              for api, cached in api_embedders(*components)]
    if not blocks:
        return {}
    out = _merge(blocks) if len(blocks) > 1 else blocks[0]
    if len(blocks) > 1:
        for k in ("texts", "estimated_prompt_tokens", "cached"):
            out[k] = sum(int(b[k]) for b in blocks)
    return out
