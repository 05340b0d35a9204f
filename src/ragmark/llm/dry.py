"""Dry runs: the calls a run would make, found by running the real judge code against a
client that answers only from the cache.

:class:`DryClient` has the ``chat`` of :class:`~ragmark.llm.LLMClient`. A call whose answer
is in the cache gets it (so what follows from it, a faithfulness check of the cached
claims or a re-ask of a cached unusable answer, is followed exactly); a call made earlier
in the same dry run is served as the real run would serve it (counted as a cache hit);
any other call is counted as one the run will make, with its estimated prompt tokens, and
raises :class:`NotCached`: its answer, and so what follows it, is unknown. The caller
adds the calls that may follow an unknown answer through :meth:`DryClient.follow`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragmark.llm.client import LLMClient
from ragmark.llm.protocol import estimate_tokens
from ragmark.llm.results import Estimate, LLMResult, Usage


class NotCached(Exception):
    """The answer of a call is not in the cache; ``messages`` is the call."""

    def __init__(self, messages: Sequence[Mapping[str, Any]], shared: bool) -> None:
        super().__init__("not in the cache")
        self.messages = messages
        self.shared = shared
        """True when the same call was counted earlier in this dry run."""


@dataclass
class DryCounts:
    """What a dry run found: ``calls`` the run will make (first calls not in the cache,
    plus the follow-ups it will surely make), ``more`` it may make on top (re-asks after
    an unusable answer, follow-ups that depend on an unknown answer), ``cached`` calls it
    will serve from the cache (including repeats within the run), and prompt tokens."""

    calls: int = 0
    more: int = 0
    cached: int = 0
    tokens: int = 0
    more_tokens: int = 0
    cut: int = 0
    """Calls whose texts will be cut to fit the model's context window."""


class DryClient:
    """A stand-in for an :class:`LLMClient` that never calls the endpoint."""

    def __init__(self, client: LLMClient) -> None:
        self.client = client
        self.counts = DryCounts()
        self._seen: set[str] = set()

    @property
    def settings(self) -> Any:
        return self.client.settings

    @property
    def window(self) -> int | None:
        """The context window known without a call (``[llm] context_window``)."""
        return self.client.window

    def saw_cut(self) -> None:
        """A call whose texts the run will cut to fit the context window."""
        self.counts.cut += 1

    async def chat(self, messages: Sequence[Mapping[str, Any]], **params: Any) -> LLMResult:
        key = self.client.key_of(messages, **params)  # type: ignore[arg-type]
        cache = self.client.cache
        hit = cache.get(key) if cache is not None else None
        if hit is not None:
            self.counts.cached += 1
            return LLMResult(hit.text, Usage(hit.prompt_tokens, hit.completion_tokens),
                             cached=True, attempts=0)
        if key in self._seen:
            self.counts.cached += 1
            raise NotCached(messages, shared=True)
        self._seen.add(key)
        self.counts.calls += 1
        self.counts.tokens += estimate_tokens(messages)  # type: ignore[arg-type]
        raise NotCached(messages, shared=False)

    def follow(self, sure: int, may: int, tokens_each: int) -> None:
        """Count the calls that follow an unknown answer: ``sure`` ones the run will make
        and ``may`` ones it might, each of about ``tokens_each`` prompt tokens."""
        self.counts.calls += sure
        self.counts.tokens += sure * tokens_each
        self.counts.more += may
        self.counts.more_tokens += may * tokens_each

    def summary(self) -> dict[str, Any]:
        """The dry run's counts in the shape the reports print; cost from prompt tokens."""
        s = self.client.settings
        price = s.price()
        c = self.counts

        share = 1 - s.batch_discount if s.batch else 1.0  # a provider batch's price

        def cost(tokens: int) -> float | None:
            return None if price is None else tokens * price[0] / 1e6 * share

        return {"endpoint": s.display_url, "model": s.model, "calls": c.calls,
                "at_most": c.calls + c.more, "cached": c.cached,
                "estimated_prompt_tokens": c.tokens,
                "at_most_prompt_tokens": c.tokens + c.more_tokens,
                "estimated_cost": cost(c.tokens), "at_most_cost": cost(c.tokens + c.more_tokens),
                **({"cut_to_fit": c.cut, "context_window": s.context_window} if c.cut else {})}


def estimate_calls(client: LLMClient, message_lists: Sequence[Sequence[Mapping[str, Any]]],
                   **params: Any) -> Estimate:
    """A dry run: how many distinct calls are not in the client's cache yet (``cached``
    counts the others), and their prompt tokens estimated as characters / 4 (+4 a
    message), not a real tokenizer; the cost is that of the prompt tokens only (the
    completion length is unknown), None without prices."""
    calls = cached = tokens = 0
    seen: set[str] = set()
    for messages in message_lists:
        key = client.key_of(messages, **params)  # type: ignore[arg-type]
        if key in seen or (client.cache is not None and client.cache.get(key)):
            cached += 1
            continue
        seen.add(key)
        calls += 1
        tokens += estimate_tokens(messages)  # type: ignore[arg-type]
    price = client.settings.price()
    cost = None if price is None else tokens * price[0] / 1e6
    return Estimate(calls=calls, prompt_tokens=tokens, cost=cost, cached=cached)
