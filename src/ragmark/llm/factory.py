"""The one place an LLM client is put together: the HTTP client, its call cache, and,
for judges with ``settings.batch``, the provider batch jobs that send the calls not in
the cache (:mod:`ragmark.llm.batch`)."""

from __future__ import annotations

from ragmark.llm.batch import Batcher
from ragmark.llm.cache import LLMCache
from ragmark.llm.client import LLMClient
from ragmark.llm.config import LLMSettings


def open_client(settings: LLMSettings, cache: LLMCache | None = None, *,
                use_cache: bool = True) -> LLMClient:
    """A client of ``settings``' endpoint (see :class:`LLMClient`); with ``settings.batch``
    and a cache, the calls not in the cache go out as provider batch jobs."""
    client = LLMClient(settings, cache, use_cache=use_cache)
    if settings.batch and client.cache is not None:
        client.batcher = Batcher(client)
    return client
