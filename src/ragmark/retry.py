"""The one retry policy of every HTTP call ragmark makes (an LLM endpoint, an embedding
or rerank API, a pipeline served over HTTP): an attempt that fails in a way a retry may
fix raises :class:`Retry`; :func:`with_retries` tries again up to ``retries`` times
after an exponential backoff with full jitter (``backoff_base * 2**(n-1)``, at most
``backoff_max`` seconds), waiting at least a ``Retry-After`` the server sent (up to
``retry_after_max``), and raises :class:`GaveUp` with the last failure. Whether a
timeout is worth a retry is the attempt's to say (an LLM call: yes; a question to a
pipeline: no, it is recorded as timed out)."""

from __future__ import annotations

import asyncio
import email.utils
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")


class Retry(Exception):
    """One attempt failed in a way a retry may fix: why, the server's ``Retry-After``
    (seconds), and what to keep of it (``details``: the response's start ...)."""

    def __init__(self, reason: str, retry_after: float | None = None, *,
                 final: bool = False, **details: Any) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after
        self.final = final
        """Give up now: a retry would cost what this attempt cost and end the same."""
        self.details = details


class GaveUp(Exception):
    """Every attempt failed: the ``last`` failure and how many ``attempts`` were made."""

    def __init__(self, last: Retry, attempts: int) -> None:
        super().__init__(last.reason)
        self.last = last
        self.attempts = attempts


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to wait: ``retries`` after the first attempt."""

    retries: int
    backoff_base: float = 1.0
    backoff_max: float = 30.0
    retry_after_max: float = 60.0

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait after failed attempt ``attempt`` (1, 2, ...)."""
        delay = random.uniform(0.0, min(self.backoff_max,
                                        self.backoff_base * 2 ** (attempt - 1)))
        if retry_after is not None:
            delay = max(delay, min(retry_after, self.retry_after_max))
        return delay


async def with_retries(attempt: Callable[[int], Awaitable[T]], policy: RetryPolicy,
                       on_retry: Callable[[], None] = lambda: None) -> tuple[T, int]:
    """``attempt(n)`` for n = 1, 2, ... until it returns (its value and n) or the
    retries are spent (:class:`GaveUp`); ``on_retry`` is called before each retry."""
    n = 0
    while True:
        n += 1
        try:
            return await attempt(n), n
        except Retry as r:
            if n > policy.retries or r.final:
                raise GaveUp(r, n) from None
            on_retry()
            await asyncio.sleep(policy.delay(n, r.retry_after))


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())
