"""The layers one chat call goes through below the structured-output negotiation, each
one small, composed by :func:`chat_layers` (the factory, :mod:`ragmark.llm.factory`,
picks the transport):

- :class:`Cached`: an answer from the call cache, else the layer below's, stored;
- :class:`Deduplicated`: the same call already on its way shares its answer;
- a transport: :class:`HttpChat` (one request to the endpoint, with the client's
  concurrency limit, retries, backoff and accounting) or :class:`BatchJobs` (into the
  provider's next batch job, :mod:`ragmark.llm.batch`).

Over them all, :class:`Hesitant`: a call that asks for log-probabilities is asked again
without them when the endpoint refuses them.

Each layer is a :data:`Send`: ``await layer(key, messages, params)`` -> LLMResult, where
``key`` is the call's cache key and ``params`` its request parameters, merged."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from ragmark.llm.cache import cache_key
from ragmark.llm.logprobs import decode, encode, requested, stale, without
from ragmark.llm.protocol import (
    Message,
    alternatives_of,
    chat_path,
    parse_response,
    request_body,
)
from ragmark.llm.results import LLMCallFailed, LLMResult, Stats, Usage
from ragmark.llm.transport import Posted, Request

if TYPE_CHECKING:
    from ragmark.llm.cache import LLMCache
    from ragmark.llm.config import LLMSettings

Send = Callable[[str, Sequence[Message], dict[str, Any]], Awaitable[LLMResult]]
"""One chat call by its cache key, messages and merged request parameters."""


class Client(Protocol):
    """What the layers use of the client (:class:`~ragmark.llm.client.LLMClient`): its
    settings, counts and cache, and its HTTP transport."""

    settings: LLMSettings
    stats: Stats
    cache: LLMCache | None

    async def request(self, req: Request, parse: Callable[[Any], tuple[Any, Usage]], *,
                      count: bool = True) -> Posted[Any]: ...


class HttpChat:
    """The endpoint itself: one chat request per call, through ``client``'s HTTP
    transport (concurrency limit, retries with backoff, token accounting)."""

    def __init__(self, client: Client) -> None:
        self.client = client

    async def __call__(self, key: str, messages: Sequence[Message], params: dict[str, Any]
                       ) -> LLMResult:
        s = self.client.settings
        got = await self.client.request(
            Request("POST", chat_path(s.provider), request_body(s.provider, s.model, messages,
                                                                params)),
            lambda data: _answer(s.provider, data))
        text, alternatives = got.value
        return LLMResult(text, got.usage, cached=False, attempts=got.attempts,
                         seconds=got.seconds, alternatives=alternatives)


def _answer(provider: str, data: Any) -> tuple[tuple[str, Any], Usage]:
    """(text, where the model hesitated) and usage of a chat response."""
    text, usage = parse_response(provider, data)
    return (text, alternatives_of(provider, data)), usage


class BatchJobs:
    """Calls collected into the provider's batch jobs; each answered when its job ends
    (the batcher stores every answer in the cache as the job gives it)."""

    def __init__(self, batcher: Any, settings: LLMSettings) -> None:
        self.batcher = batcher
        self.settings = settings

    async def __call__(self, key: str, messages: Sequence[Message], params: dict[str, Any]
                       ) -> LLMResult:
        s = self.settings
        result: LLMResult = await self.batcher.submit(
            key, request_body(s.provider, s.model, messages, params))
        return result


class Deduplicated:
    """A call made while the same one (same key) is on its way waits for that one and
    shares its answer, counted as a cache hit."""

    def __init__(self, inner: Send, stats: Stats) -> None:
        self.inner = inner
        self.stats = stats
        self._inflight: dict[str, asyncio.Future[LLMResult]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None

    async def __call__(self, key: str, messages: Sequence[Message], params: dict[str, Any]
                       ) -> LLMResult:
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # a new event loop: nothing of the old one is pending
            self._inflight, self._loop = {}, loop
        pending = self._inflight.get(key)
        if pending is not None:
            result = await asyncio.shield(pending)
            self.stats.cache_hits += 1
            return LLMResult(result.text, result.usage, cached=True, attempts=0,
                             alternatives=result.alternatives)
        fut: asyncio.Future[LLMResult] = loop.create_future()
        self._inflight[key] = fut
        try:
            result = await self.inner(key, messages, params)
        except BaseException as e:
            fut.set_exception(e if isinstance(e, Exception) else LLMCallFailed("cancelled"))
            fut.exception()  # mark retrieved: nobody else may be waiting
            raise
        finally:
            self._inflight.pop(key, None)
        fut.set_result(result)
        return result


class Cached:
    """An answer from the call cache when it has one (a cache hit); else the layer
    below's, stored under its key (``store=False``: the layer below stores its own)."""

    def __init__(self, inner: Send, cache: LLMCache, stats: Stats, settings: LLMSettings,
                 *, store: bool = True) -> None:
        self.inner = inner
        self.cache = cache
        self.stats = stats
        self.settings = settings
        self.store = store

    async def __call__(self, key: str, messages: Sequence[Message], params: dict[str, Any]
                       ) -> LLMResult:
        hit = self.cache.get(key)
        if hit is not None and stale(hit.alternatives):
            hit = None  # log-probabilities stored before their offsets were aligned
        if hit is not None:
            self.stats.cache_hits += 1
            return LLMResult(hit.text, Usage(hit.prompt_tokens, hit.completion_tokens),
                             cached=True, attempts=0, alternatives=decode(hit.alternatives))
        result = await self.inner(key, messages, params)
        if self.store and not result.cached:
            self.cache.put(key, provider=self.settings.provider, model=self.settings.model,
                           text=result.text, prompt_tokens=result.usage.prompt_tokens,
                           completion_tokens=result.usage.completion_tokens,
                           seconds=result.seconds, alternatives=encode(result.alternatives))
        return result


class Hesitant:
    """A call that asks for log-probabilities (``logprobs``): an endpoint that refuses
    them is asked again without, and not asked for them again; an answer without them
    is counted (``stats.hard``: its verdicts are hard)."""

    def __init__(self, inner: Send, client: Client) -> None:
        self.inner = inner
        self.client = client
        self.refused: str | None = None

    async def __call__(self, key: str, messages: Sequence[Message], params: dict[str, Any]
                       ) -> LLMResult:
        if not requested(params):
            return await self.inner(key, messages, params)
        result = None
        if self.refused is None:
            try:
                result = await self.inner(key, messages, params)
            except LLMCallFailed as e:
                if e.retryable or "logprob" not in e.reason.lower():
                    raise
                self.refused = e.reason
        if result is None:
            plain, s = without(params), self.client.settings
            result = await self.inner(cache_key(s.provider, s.base_url, s.model, messages,
                                                plain), messages, plain)
        if result.alternatives is None:
            self.client.stats.hard += 1
        return result


def chat_layers(client: Client, batcher: Any = None) -> Send:
    """The layers of ``client``'s chat calls: its cache (when it has one) over in-flight
    deduplication over the endpoint (HTTP, or ``batcher``'s provider batch jobs)."""
    transport: Send = (HttpChat(client) if batcher is None
                       else BatchJobs(batcher, client.settings))
    layers: Send = Deduplicated(transport, client.stats)
    if client.cache is not None:
        layers = Cached(layers, client.cache, client.stats, client.settings,
                        store=batcher is None)
    return Hesitant(layers, client)
