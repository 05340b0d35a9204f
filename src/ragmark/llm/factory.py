"""The one place an LLM client is put together: :class:`~ragmark.llm.client.LLMClient`
(structured-output negotiation) over the layers of :mod:`ragmark.llm.layers` (the call
cache, in-flight deduplication, and a transport: HTTP with retries, or provider batch
jobs):

- :func:`open_client` for judges, labels and test sets: with ``settings.batch`` and a
  cache, the calls not in the cache go out as provider batch jobs
  (:mod:`ragmark.llm.batch`);
- :func:`direct_client` for a generator, a reranker or an embedding API, whose answers
  are needed at once: never batched;
- :func:`dry_client` for a dry run: answers only from the cache, counts every other call
  (:mod:`ragmark.llm.dry`).

:func:`check_endpoint` asks an endpoint whether it answers, before work that needs it."""

from __future__ import annotations

from ragmark.aio import run_sync
from ragmark.errors import ConfigError
from ragmark.llm.batch import Batcher
from ragmark.llm.cache import LLMCache
from ragmark.llm.client import LLMClient
from ragmark.llm.config import LLMSettings
from ragmark.llm.dry import DryClient
from ragmark.llm.layers import chat_layers


def open_client(settings: LLMSettings, cache: LLMCache | None = None, *,
                use_cache: bool = True) -> LLMClient:
    """A client of ``settings``' endpoint (see :class:`LLMClient`); with ``settings.batch``
    and a cache, the calls not in the cache go out as provider batch jobs."""
    client = LLMClient(settings, cache, use_cache=use_cache)
    if settings.batch and client.cache is not None:
        client.batcher = Batcher(client)
        client.send = chat_layers(client, client.batcher)
    return client


def direct_client(settings: LLMSettings, *, use_cache: bool = True) -> LLMClient:
    """A client whose every call is answered now (from the cache or the endpoint)."""
    return LLMClient(settings, use_cache=use_cache)


def dry_client(settings: LLMSettings) -> DryClient:
    """A client that never calls the endpoint: it answers from the cache and counts the
    calls a run would make."""
    return DryClient(LLMClient(settings))


def check_endpoint(settings: LLMSettings, what: str) -> None:
    """A ConfigError naming ``what`` (``the judge's endpoint``) and the endpoint's
    address when it does not answer: asked before the work that needs it, so a
    dead endpoint costs a second, not a retried call per question."""
    client = LLMClient(settings)

    async def main() -> tuple[bool, str]:
        try:
            return await client.probe()
        finally:
            await client.aclose()

    ok, why = run_sync(main())
    if not ok:
        raise ConfigError(f"{what} did not answer: {why}")
