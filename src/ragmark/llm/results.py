"""What an LLM call returns, how it fails, and the running counts of a client."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from ragmark.errors import RagmarkError
from ragmark.llm.logprobs import Alternatives


@dataclass(frozen=True)
class Usage:
    """Tokens of one call, as the server reported them (0 when it did not)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass(frozen=True)
class LLMResult:
    """One answer. ``cached`` is True when it came from the cache (``attempts`` is then
    0); otherwise ``attempts`` counts the HTTP requests it took."""

    text: str
    usage: Usage
    cached: bool
    attempts: int
    seconds: float = field(default=0.0, compare=False)
    """The seconds of the last HTTP request it took (0: not from one); a timing, not
    part of what the answer is."""
    alternatives: Alternatives | None = field(default=None, compare=False)
    """Where the model hesitated, when the call asked for log-probabilities and the
    endpoint gave them (:mod:`ragmark.llm.logprobs`); None otherwise."""


class LLMCallFailed(RagmarkError):
    """A call that did not produce an answer; ``reason`` says why (record the item as
    missing with it). ``retryable`` is False for errors a retry cannot fix (4xx)."""

    def __init__(self, reason: str, *, attempts: int = 0, retryable: bool = True) -> None:
        super().__init__(reason)
        self.reason = reason
        self.attempts = attempts
        self.retryable = retryable

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LLMCallFailed) and (self.reason, self.attempts) == (
            other.reason,
            other.attempts,
        )

    def __hash__(self) -> int:
        return hash((self.reason, self.attempts))


@dataclass
class Stats:
    """Counts over a client's life: ``calls`` answered or failed over the network (not
    from the cache), ``cache_hits``, ``retries`` (extra attempts), ``failures`` (items
    that ended in LLMCallFailed), and tokens of the calls made (cache hits cost nothing).
    """

    model: str = ""
    prices: dict[str, tuple[float, float]] | None = None
    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    format_refusals: int = 0
    hard: int = 0
    """Of the answers that asked for log-probabilities (from the endpoint or the
    cache), those that came without them."""
    """Of the calls above, those the endpoint refused for their structured-output form
    (each was made again in the next form)."""
    batch_discount: float = 0.5
    batch_calls: int = 0
    batch_prompt_tokens: int = 0
    batch_completion_tokens: int = 0
    """Of the calls and tokens above, those of provider batch jobs (priced at ``1 -
    batch_discount`` of the interactive price)."""

    def estimated_cost(self) -> float | None:
        """Dollars spent on the calls made, from ``prices[model]``; None when unknown."""
        price = (self.prices or {}).get(self.model)
        if price is None:
            return None
        full = ((self.prompt_tokens - self.batch_prompt_tokens) * price[0]
                + (self.completion_tokens - self.batch_completion_tokens) * price[1])
        batch = (self.batch_prompt_tokens * price[0]
                 + self.batch_completion_tokens * price[1]) * (1 - self.batch_discount)
        return (full + batch) / 1e6


class Estimate(NamedTuple):
    """What a run would need: ``calls`` not yet in the cache, their estimated prompt
    tokens, and the cost of those prompt tokens (None without prices)."""

    calls: int
    prompt_tokens: int
    cost: float | None = None
    cached: int = 0
