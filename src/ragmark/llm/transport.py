"""The HTTP pieces of the client: a request, what it returned, a retryable failure, and
``Retry-After``. Pure: no I/O."""

from __future__ import annotations

import email.utils
import time
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ragmark.llm.results import Usage

T = TypeVar("T")


@dataclass(frozen=True)
class Request:
    """One HTTP request to the endpoint: ``json`` body, or ``files`` and ``data`` (a
    multipart upload); ``text=True`` hands the answer's text, not its JSON, to the
    parser."""

    method: str
    path: str
    json: Any = None
    files: Any = None
    data: Any = None
    text: bool = False


@dataclass(frozen=True)
class Posted(Generic[T]):
    """What :meth:`LLMClient.post` got: the parsed value, the tokens, the HTTP requests it
    took, and the seconds of the last one."""

    value: T
    usage: Usage
    attempts: int
    seconds: float


class Retry(Exception):
    """One attempt failed in a way a retry may fix."""

    def __init__(self, reason: str, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after


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
