"""An HTTP endpoint as the pipeline: POST the question as JSON, find the answer and the
contexts in the JSON response by path (:mod:`ragmark.pipelines.jsonpath`).

Connection errors, 429 and 5xx are retried (``retries`` times, exponential backoff with
full jitter, ``Retry-After`` honoured up to 30 s); a timeout is not retried (the
question is recorded as timed out); any other status, a response that is not JSON, or a
path that does not resolve fails that question with the reason, the response kept in
the details.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Sequence
from typing import Any

import httpx

from ragmark.errors import ConfigError
from ragmark.pipelines.base import (
    Output,
    ShapeError,
    Turn,
    as_messages,
    parse_answer,
    parse_contexts,
    parse_hops,
)
from ragmark.pipelines.config import HttpPipelineConfig
from ragmark.pipelines.jsonpath import JsonPath, PathError
from ragmark.retry import GaveUp, Retry, RetryPolicy, parse_retry_after, with_retries

SNIPPET = 300
RETRY_AFTER_MAX = 30.0
BACKOFF_MAX = 10.0


def snippet(text: str) -> str:
    """The start of a response body, for messages."""
    text = text.strip()
    return text if len(text) <= SNIPPET else text[:SNIPPET] + "..."


class HttpPipeline:
    """Asks an HTTP endpoint; use as ``async with``: it owns the connection pool.
    ``retries`` counts the retries made over all questions."""

    def __init__(self, cfg: HttpPipelineConfig) -> None:
        self.cfg = cfg
        self.name = cfg.display_url
        self.answer_path = JsonPath.parse(cfg.answer_path)
        self.contexts_path = JsonPath.parse(cfg.contexts_path)
        self.hops_path = None if cfg.hops_path is None else JsonPath.parse(cfg.hops_path)
        self.retries = 0
        self._headers = self._auth()
        self._http: httpx.AsyncClient | None = None

    def _auth(self) -> dict[str, str]:
        var = self.cfg.api_key_env
        if var is None:
            return {}
        key = os.environ.get(var, "").strip()
        if not key:
            raise ConfigError(f"[pipeline] api_key_env: the variable {var} is not set (or "
                              f"empty); export {var}=...")
        return {"Authorization": f"Bearer {key}"}

    async def __aenter__(self) -> HttpPipeline:
        self._http = httpx.AsyncClient(
            limits=httpx.Limits(max_connections=self.cfg.concurrency))
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    async def ask(self, question: str, history: Sequence[Turn] | None = None,
                  conversation: str | None = None) -> Output:
        """One question, retried as configured; a failure is an :class:`Output` with its
        error, never raised. A turn of a conversation (``history``: the earlier turns)
        also sends the conversation as chat messages in ``messages_field``, and its id
        in ``conversation_field`` when the config names one."""
        def retried() -> None:
            self.retries += 1

        policy = RetryPolicy(self.cfg.retries, self.cfg.backoff, BACKOFF_MAX, RETRY_AFTER_MAX)
        try:
            out, _ = await with_retries(
                lambda n: self._attempt(question, history, conversation), policy, retried)
        except GaveUp as e:
            tries = f" (gave up after {e.attempts} attempts)" if e.attempts > 1 else ""
            return Output.failed(e.last.reason + tries, **e.last.details)
        return out

    async def _attempt(self, question: str, history: Sequence[Turn] | None,
                       conversation: str | None = None) -> Output:
        cfg = self.cfg
        if self._http is None:
            raise RuntimeError("use HttpPipeline inside 'async with'")
        body = {**cfg.body, cfg.question_field: question}
        if history is not None:
            body[cfg.messages_field] = as_messages(history, question)
        if conversation is not None and cfg.conversation_field is not None:
            body[cfg.conversation_field] = conversation
        try:
            async with asyncio.timeout(cfg.timeout):
                resp = await self._http.post(cfg.url, json=body, headers=self._headers,
                                             timeout=cfg.timeout)
        except (TimeoutError, httpx.TimeoutException):
            return Output.failed(f"timed out: no answer from {self.name} within "
                                 f"{cfg.timeout:g} s")
        except httpx.TransportError as e:
            raise Retry(f"connection error to {self.name}: {type(e).__name__}",
                         message=str(e)[:SNIPPET]) from None
        status = resp.status_code
        if status == 429 or status >= 500:
            raise Retry(f"HTTP {status} from {self.name}",
                         parse_retry_after(resp.headers.get("retry-after")),
                         response=snippet(resp.text))
        if not 200 <= status < 300:
            return Output.failed(f"HTTP {status} from {self.name}", response=snippet(resp.text))
        try:
            data = resp.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            return Output.failed(f"the response of {self.name} is not JSON", shape=True,
                                 response=snippet(resp.text))
        try:
            answer = parse_answer(self._find(self.answer_path, "answer_path", data),
                                  f"answer_path {self.answer_path.text!r}")
            hops: tuple[tuple[str, int], ...] = ()
            if self.hops_path is not None:
                contexts, hops = parse_hops(self._find(self.hops_path, "hops_path", data),
                                            f"hops_path {self.hops_path.text!r}")
            else:
                contexts = parse_contexts(self._find(self.contexts_path, "contexts_path",
                                                     data),
                                          f"contexts_path {self.contexts_path.text!r}")
        except ShapeError as e:
            return Output.failed(str(e), shape=True, response=snippet(resp.text))
        return Output(answer, contexts, hops=hops)

    @staticmethod
    def _find(path: JsonPath, key: str, data: Any) -> Any:
        try:
            return path.resolve(data)
        except PathError as e:
            raise ShapeError(f"did not resolve: {e}", f"{key} {path.text!r}") from None
