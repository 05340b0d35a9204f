"""The one place that calls an LLM: an async client for OpenAI-compatible servers and
Ollama, with an on-disk cache, a concurrency limit, and retries with backoff."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import httpx

from ragmark.aio import run_sync
from ragmark.llm.cache import LLMCache, cache_key
from ragmark.llm.config import LLMSettings, v1_hint
from ragmark.llm.fields import timed_out
from ragmark.llm.layers import Send, chat_layers
from ragmark.llm.logprobs import without
from ragmark.llm.protocol import Message, ResponseError, gives_logprobs, models_path
from ragmark.llm.providers import provider
from ragmark.llm.reach import DOWN_AFTER, Unreached, on_loopback, one_line
from ragmark.llm.results import LLMCallFailed, LLMResult, Stats, Usage
from ragmark.llm.structured import Forms, rejected, wire
from ragmark.llm.tokens import ServerTokens
from ragmark.llm.transport import Posted, Request
from ragmark.llm.window import from_probe
from ragmark.progress import Advance
from ragmark.retry import GaveUp, Retry, RetryPolicy, parse_retry_after, with_retries

"""Called with the number of calls just finished (drives a progress bar)."""

_BODY_SNIPPET = 200
T = TypeVar("T")

class LLMClient:
    """Chat calls to one endpoint. ``cache`` defaults to an :class:`LLMCache` under
    ``RAGMARK_HOME``; ``use_cache=False`` calls every time. Made by
    :mod:`ragmark.llm.factory`; use ``async with`` or call :meth:`aclose` at the end
    (``stats`` counts everything)."""

    def __init__(
        self,
        settings: LLMSettings,
        cache: LLMCache | None = None,
        *,
        use_cache: bool = True,
    ) -> None:
        self.settings = settings
        self.cache = (cache if cache is not None else LLMCache()) if use_cache else None
        self.stats = Stats(model=settings.model, prices=settings.prices,
                           batch_discount=settings.batch_discount)
        self._http: httpx.AsyncClient | None = None
        self._sem: asyncio.Semaphore | None = None
        self._form_lock: asyncio.Lock | None = None
        self._fitting: asyncio.Semaphore | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.window: int | None = None  # the context window, once known (llm/window.py)
        self.slots: int | None = None  # the server's parallel slots, where it says
        self.tokenize: tuple[str, str] | None = None  # where the server counts tokens
        self.tokens: ServerTokens | None = None  # counting with it (llm/tokens.py)
        self.probed = False
        self.down: str | None = None
        """Why the endpoint is taken as gone (:data:`DOWN_AFTER` calls in a row failed
        to reach it): every later call fails at once with it, unasked."""
        self._unreached = 0  # calls in a row that could not reach the endpoint
        self.batcher: Any = None
        """With ``settings.batch``: a :class:`~ragmark.llm.batch.Batcher` that sends the
        calls not in the cache as provider batch jobs (:func:`ragmark.llm.open_client`
        attaches it)."""
        self.forms = Forms()
        """The structured-output form each endpoint takes, learnt and remembered."""
        self.send: Send = chat_layers(self)
        """The layers a chat call goes through once its structured-output form is chosen
        (:mod:`ragmark.llm.layers`: cache, in-flight deduplication, the endpoint)."""

    async def __aenter__(self) -> LLMClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the HTTP connections (the cache stays usable)."""
        if self._http is not None:
            await self._http.aclose()
            self._http = None
        if self.tokens is not None:
            await self.tokens.aclose()

    def _client(self) -> tuple[httpx.AsyncClient, asyncio.Semaphore]:
        loop = asyncio.get_running_loop()
        if self._http is None or self._sem is None or self._loop is not loop:
            # a new event loop (e.g. a second asyncio.run) needs its own pool
            self._http = httpx.AsyncClient(
                limits=httpx.Limits(max_connections=self.concurrency)
            )
            self._sem = asyncio.Semaphore(self.concurrency)
            self._fitting = asyncio.Semaphore(self.concurrency)
            self._form_lock = asyncio.Lock()
            self._loop = loop
        return self._http, self._sem

    def fitting_slots(self) -> asyncio.Semaphore | None:
        """The places of the judge calls being fitted and sent, as many as are sent at
        once (:func:`ragmark.llm.window.fitting_slot`); None with a batch job, which
        takes every call before it sends any."""
        if self.batcher is not None:
            return None
        self._client()
        return self._fitting

    @property
    def concurrency(self) -> int:
        """Calls in flight at once: the server's parallel slots when it says how many
        (llama.cpp), unless the concurrency was set (flag, table, variable); else the
        setting's."""
        if self.slots and "concurrency" not in self.settings.model_fields_set:
            return int(self.slots)
        return int(self.settings.concurrency)

    def _headers(self) -> dict[str, str]:
        key = self.settings.api_key()
        return {"Authorization": f"Bearer {key}"} if key else {}

    def _params(self, params: Mapping[str, Any]) -> dict[str, Any]:
        merged: dict[str, Any] = {"temperature": self.settings.temperature}
        if self.settings.seed is not None:
            merged["seed"] = self.settings.seed
        merged.update(params)
        if not gives_logprobs(self.settings.provider):  # not asked where never given
            merged = without(merged)
        return {k: v for k, v in merged.items() if v is not None}

    def _with_schema(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """``params`` with a ``schema`` (name, JSON schema) turned into the request
        parameters of the form this endpoint takes now."""
        out = dict(params)
        schema = out.pop("schema", None)
        if schema is not None:
            out.update(wire(self.forms.current(self.settings), *schema))
        return out

    def key_of(self, messages: Sequence[Message], **params: Any) -> str:
        """The cache key of a call."""
        s = self.settings
        return cache_key(s.provider, s.base_url, s.model, messages,
                         self._params(self._with_schema(params)))

    async def chat(self, messages: Sequence[Message], **params: Any) -> LLMResult:
        """One chat call, from the cache when possible; raises LLMCallFailed when the
        endpoint gives no answer after ``max_retries`` retries (or a non-retryable 4xx).

        ``params`` use OpenAI names (``max_tokens``, ``response_format``, ...) and
        override the settings' ``temperature`` and ``seed``; all are part of the cache key.
        ``schema=(name, json_schema)`` asks for structured output: sent in the form the
        endpoint takes; when it rejects that form the call is made again with the next
        one, down to none, and the endpoint's form is remembered.
        """
        try:
            if ("schema" not in params or self.forms.known(self.settings)
                    or self.batcher is not None):  # a batch job cannot wait for one call
                return await self._structured(messages, params)
            # the endpoint's form is not known yet: the first call finds it, the rest wait
            self._client()
            assert self._form_lock is not None
            async with self._form_lock:
                if not self.forms.known(self.settings):
                    return await self._structured(messages, params)
            return await self._structured(messages, params)
        except LLMCallFailed:
            self.stats.failures += 1
            raise

    async def _structured(self, messages: Sequence[Message], params: Mapping[str, Any]
                          ) -> LLMResult:
        while True:
            form = self.forms.current(self.settings)
            try:
                result = await self._chat(messages, self._with_schema(params))
            except LLMCallFailed as e:
                if ("schema" not in params or form == "off" or e.retryable
                        or not rejected(e.reason)):
                    raise
                self.forms.reject(self.settings, form)
                self.stats.format_refusals += 1
                continue
            if "schema" in params:
                self.forms.confirm(self.settings, form)
            return result

    async def _chat(self, messages: Sequence[Message], params: Mapping[str, Any]) -> LLMResult:
        s = self.settings
        merged = self._params(params)
        return await self.send(cache_key(s.provider, s.base_url, s.model, messages, merged),
                               messages, merged)

    async def post(self, path: str, body: dict[str, Any],
                   parse: Callable[[Any], tuple[T, Usage]]) -> Posted[T]:
        """One POST of ``body`` to ``base_url + path`` under the same concurrency limit,
        retries, backoff and accounting as a chat call (``calls``, ``retries`` and the
        tokens ``parse`` reports); ``parse`` turns the 200 response's JSON into (value,
        usage) and raises ValueError when it is unusable (retried like a bad answer).
        Not cached here: the caller keys its own cache entries. Raises LLMCallFailed."""
        return await self.request(Request("POST", path, body), parse)

    async def request(self, req: Request, parse: Callable[[Any], tuple[T, Usage]], *,
                      count: bool = True) -> Posted[T]:
        """:meth:`post` for any :class:`Request` (a GET, a file upload, a text answer);
        ``count=False`` leaves it out of ``calls`` (a batch job's bookkeeping)."""
        http, sem = self._client()
        self._headers()  # a missing key variable is a ConfigError, not a failed call
        return await self._send(http, sem, req, parse, count=count)

    async def _send(self, http: httpx.AsyncClient, sem: asyncio.Semaphore, req: Request,
                    parse: Callable[[Any], tuple[T, Usage]], *, count: bool = True
                    ) -> Posted[T]:
        headers = self._headers()
        started = [time.monotonic()]

        async def attempt(n: int) -> tuple[T, Usage]:
            try:
                async with sem:
                    if self.down is not None:  # taken as gone while this one waited
                        raise LLMCallFailed(("not asked: " if n == 1 else "given up: ")
                                            + self.down, retryable=False)
                    if count and n == 1:
                        self.stats.calls += 1
                    started[0] = time.monotonic()
                    return await self._attempt(http, req, headers, parse)
            except LLMCallFailed as e:
                gone = self.down is not None and e.reason.endswith(self.down)
                e.attempts = n - 1 if gone else n
                raise

        def retried() -> None:
            self.stats.retries += 1

        try:
            (value, usage), n = await with_retries(attempt, self.policy, retried)
        except GaveUp as e:
            self._unreachable(e.last)
            raise LLMCallFailed(f"{e.last.reason} (gave up after {e.attempts} attempts)",
                                attempts=e.attempts) from None
        self._unreached = 0
        self.stats.prompt_tokens += usage.prompt_tokens
        self.stats.completion_tokens += usage.completion_tokens
        return Posted(value, usage, n, time.monotonic() - started[0])

    def _unreachable(self, last: Retry) -> None:
        """Count a call that gave up without reaching the endpoint; at
        :data:`DOWN_AFTER` in a row the endpoint is taken as gone (:attr:`down`)."""
        if not isinstance(last, Unreached):
            self._unreached = 0
            return
        self._unreached += 1
        if self._unreached >= DOWN_AFTER and self.down is None:
            self.down = (f"the endpoint {self.settings.display_url} stopped answering "
                         f"({self._unreached} calls in a row failed: {last.reason})")

    @property
    def policy(self) -> RetryPolicy:
        """The endpoint's retries (:mod:`ragmark.retry`)."""
        s = self.settings
        return RetryPolicy(s.max_retries, s.backoff_base, s.backoff_max, s.retry_after_max)

    async def _attempt(
        self, http: httpx.AsyncClient, req: Request, headers: dict[str, str],
        parse: Callable[[Any], tuple[T, Usage]],
    ) -> tuple[T, Usage]:
        s = self.settings
        path = req.path
        try:
            async with asyncio.timeout(s.timeout):
                resp = await http.request(req.method, s.base_url + path, json=req.json,
                                          files=req.files, data=req.data, headers=headers,
                                          timeout=s.timeout)
        except (TimeoutError, httpx.TimeoutException):
            # a local server goes on computing the call it timed out on: asking again
            # pays for it twice and ends the same, so a loopback timeout is not retried
            raise Unreached(timed_out(s), final=on_loopback(s.base_url)) from None
        except httpx.TransportError as e:
            raise Unreached(f"connection error to {s.display_url}: "
                            f"{one_line(self._redact(str(e)) or type(e).__name__)}") from None
        status = resp.status_code
        if status == 200:
            try:
                return parse(resp.text if req.text else resp.json())
            except ValueError as e:  # includes ResponseError and bad JSON
                reason = str(e) if isinstance(e, ResponseError) else "response is not JSON"
                raise Retry(f"unreadable answer: {reason}: {self._snippet(resp)}") from None
        reason = (f"HTTP {status} from {s.display_url}{path}: {self._snippet(resp)}"
                  + v1_hint(self.settings, status))
        if isinstance(req.json, dict) and "response_format" in req.json and rejected(reason):
            raise LLMCallFailed(reason, retryable=False)  # refused, even as a 500: no retry
        if status == 429 or status >= 500:
            raise Retry(reason, parse_retry_after(resp.headers.get("retry-after")))
        raise LLMCallFailed(reason, retryable=False)

    def _redact(self, text: str) -> str:
        try:
            key = self.settings.api_key()
        except Exception:
            key = None
        return text.replace(key, "[redacted]") if key else text

    def _snippet(self, resp: httpx.Response) -> str:
        return one_line(self._redact(resp.text[:20_000])) or "(empty body)"

    async def run_many(
        self,
        message_lists: Sequence[Sequence[Message]],
        progress: Advance | None = None,
        **params: Any,
    ) -> list[LLMResult | LLMCallFailed]:
        """Every call concurrently (up to ``concurrency``), in input order; a failed item
        is its LLMCallFailed, never dropped. ``progress(1)`` after each item."""
        self._headers()  # a missing key variable is a ConfigError for the run, not per item

        async def one(messages: Sequence[Message]) -> LLMResult | LLMCallFailed:
            try:
                return await self.chat(messages, **params)
            except LLMCallFailed as e:
                return e
            except Exception as e:  # never lose an item
                self.stats.failures += 1
                return LLMCallFailed(
                    f"unexpected error: {type(e).__name__}: {self._redact(str(e))}"
                )
            finally:
                if progress is not None:
                    progress(1)

        return list(await asyncio.gather(*(one(m) for m in message_lists)))

    def run_many_sync(
        self,
        message_lists: Sequence[Sequence[Message]],
        progress: Advance | None = None,
        **params: Any,
    ) -> list[LLMResult | LLMCallFailed]:
        """:meth:`run_many` from synchronous code (runs its own event loop)."""

        async def main() -> list[LLMResult | LLMCallFailed]:
            try:
                return await self.run_many(message_lists, progress, **params)
            finally:
                await self.aclose()

        return run_sync(main())

    async def probe(self, timeout: float = 5.0) -> tuple[bool, str]:
        """Whether the endpoint answers ``GET /models`` (OpenAI) or ``/api/tags``
        (Ollama): ``(ok, reason)``; never raises for network trouble. A server that takes
        the connection but does not answer within ``timeout`` is busy, not gone: alive."""
        s = self.settings
        url = s.base_url + models_path(s.provider)
        shown = s.display_url + models_path(s.provider)
        try:
            headers = self._headers()
        except Exception as e:
            return False, str(e)
        try:
            async with httpx.AsyncClient(timeout=timeout) as http:
                resp = await http.get(url, headers=headers)
        except httpx.ReadTimeout:
            # it took the connection and answers nothing yet: busy, not gone
            # (llama-cpp-python answers nothing while it generates for another client)
            return True, f"{shown} took the connection but is busy (no answer in {timeout:g} s)"
        except httpx.TimeoutException:
            return False, f"timeout: {shown} did not answer within {timeout:g} s"
        except httpx.HTTPError as e:
            return False, f"cannot reach {shown}: {type(e).__name__}: {self._redact(str(e))}"
        if resp.status_code != 200:
            return False, (f"HTTP {resp.status_code} from {shown}: {self._snippet(resp)}"
                           + v1_hint(self.settings, resp.status_code))
        try:
            data = resp.json()
        except ValueError:
            data = None
        names = self._model_names(data)
        await from_probe(self, data)  # the context window, where the server says it
        if self.tokenize is not None and self.tokens is None:
            self.tokens = ServerTokens(*self.tokenize, s.model, headers)
        if names is None:
            return True, f"{shown} answered"
        if s.model in names:
            return True, f"{shown} answered; model {s.model!r} is listed"
        return True, f"{shown} answered, but model {s.model!r} is not among {len(names)} listed"

    def _model_names(self, data: Any) -> set[str] | None:
        try:
            return provider(self.settings.provider).model_names(data)
        except (KeyError, TypeError, AttributeError):
            return None
