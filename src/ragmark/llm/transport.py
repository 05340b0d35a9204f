"""The HTTP pieces of the client: a request and what it returned; a retryable failure
and ``Retry-After`` are :mod:`ragmark.retry`'s (re-exported). Pure: no I/O."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ragmark.llm.results import Usage
from ragmark.retry import Retry, parse_retry_after

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


__all__ = ["Posted", "Request", "Retry", "parse_retry_after"]
