"""A counting proxy for benchmarks: forwards every request to an OpenAI-compatible
server and records, per chat completion, the HTTP status, the server's own usage figures
(prompt and completion tokens; the prompt tokens it evaluated or took from its cache
where it says so) and the time the server took. Two tools pointed at one proxy are
counted by the same rules. Nothing happens at import."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx


@dataclass
class Call:
    phase: str
    path: str
    status: int
    seconds: float
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int | None = None
    """Prompt tokens the server reused from its cache, where it reports them (vLLM's
    usage.prompt_tokens_details.cached_tokens, llama.cpp's timings)."""
    finish_reason: str | None = None
    error: str | None = None
    """The start of a refusal's message."""
    start: float = 0.0
    """When the proxy received the request (time.perf_counter)."""
    body: bytes = b""
    """The request as sent, to replay it (:func:`server_rates`)."""
    timings: dict[str, float] = field(default_factory=dict)
    """llama.cpp's own timings of the call (prompt_n, prompt_ms, predicted_n,
    predicted_ms), where the server gives them."""


@dataclass
class Proxy:
    upstream: str
    """The server's base URL, with /v1."""
    calls: list[Call] = field(default_factory=list)
    phase: str = ""
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def of(self, phase: str) -> list[Call]:
        with self._lock:
            return [c for c in self.calls if c.phase == phase]

    def record(self, call: Call) -> None:
        with self._lock:
            self.calls.append(call)

    def __enter__(self) -> Proxy:
        proxy = self
        client = httpx.Client(timeout=None)
        base = self.upstream.rstrip("/").removesuffix("/v1")

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _forward(self, method: str) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                headers = {k: v for k, v in self.headers.items()
                           if k.lower() in ("content-type", "authorization")}
                t0 = time.perf_counter()
                try:
                    r = client.request(method, base + self.path, content=body, headers=headers)
                except httpx.HTTPError as e:  # the server went away: say so to the client
                    self.send_response(502)
                    payload = json.dumps({"error": str(e)}).encode()
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                seconds = time.perf_counter() - t0
                if self.path.endswith("/chat/completions"):
                    call = _call(proxy.phase, self.path, r, seconds)
                    call.start, call.body = t0, body
                    proxy.record(call)
                try:
                    self.send_response(r.status_code)
                    self.send_header("content-type",
                                     r.headers.get("content-type", "application/json"))
                    self.send_header("content-length", str(len(r.content)))
                    self.end_headers()
                    self.wfile.write(r.content)
                except OSError:  # the client gave up waiting: the call still counts
                    pass

            def do_POST(self) -> None:  # noqa: N802
                self._forward("POST")

            def do_GET(self) -> None:  # noqa: N802
                self._forward("GET")

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()


def _call(phase: str, path: str, r: httpx.Response, seconds: float) -> Call:
    call = Call(phase, path, r.status_code, seconds)
    try:
        data = r.json()
    except ValueError:
        return call
    if r.status_code >= 400:
        err = data.get("error") if isinstance(data, dict) else None
        call.error = str(err.get("message") if isinstance(err, dict) else err or data)[:120]
        return call
    usage = data.get("usage") or {}
    call.prompt_tokens = int(usage.get("prompt_tokens") or 0)
    call.completion_tokens = int(usage.get("completion_tokens") or 0)
    details = usage.get("prompt_tokens_details") or {}
    timings = data.get("timings") or {}
    if details.get("cached_tokens") is not None:
        call.cached_tokens = int(details["cached_tokens"])
    elif "prompt_n" in timings and call.prompt_tokens:
        call.cached_tokens = call.prompt_tokens - int(timings["prompt_n"])
    call.timings = {k: float(timings[k]) for k in TIMINGS if k in timings}
    choices = data.get("choices") or [{}]
    call.finish_reason = choices[0].get("finish_reason")
    return call


TIMINGS = ("prompt_n", "prompt_ms", "predicted_n", "predicted_ms")


def in_flight(calls: list[Call]) -> float:
    """Seconds during which at least one of ``calls`` was with the server (the union of
    their spans): the rest of a tool's wall time the server had nothing of it to do.

    >>> in_flight([Call("", "", 200, 2.0, start=0.0), Call("", "", 200, 2.0, start=1.0),
    ...            Call("", "", 200, 1.0, start=5.0)])
    4.0
    """
    total, end = 0.0, float("-inf")
    for a, b in sorted((c.start, c.start + c.seconds) for c in calls):
        if b > end:
            total += b - max(a, end)
            end = b
    return total


def totals(calls: list[Call]) -> dict[str, Any]:
    """Calls, refused calls (HTTP 4xx/5xx), tokens and server seconds of ``calls``; the
    time some call was with the server; the server's own timings summed, where it gives
    them."""
    cached = [c.cached_tokens for c in calls if c.cached_tokens is not None]
    timed = [c for c in calls if all(k in c.timings for k in TIMINGS)]
    return {
        "in_flight_s": in_flight(calls),
        "timings": ({k: sum(c.timings[k] for c in timed) for k in TIMINGS} | {
            "calls": len(timed)}) if timed else None,
        "calls": len(calls),
        "refused": sum(1 for c in calls if c.status >= 400),
        "prompt_tokens": sum(c.prompt_tokens for c in calls),
        "completion_tokens": sum(c.completion_tokens for c in calls),
        "cached_tokens": sum(cached) if cached else None,
        "cut_by_length": sum(1 for c in calls if c.finish_reason == "length"),
        "server_s": sum(c.seconds for c in calls),
        "refusals": sorted({c.error for c in calls if c.error}),
    }


def server_rates(upstream: str, calls: list[Call], n: int = 6) -> dict[str, Any] | None:
    """The server's own prefill and decode rates on the prompts of ``calls``: up to
    ``n`` of the answered calls (evenly spread) sent again directly, one at a time, with
    llama.cpp's prompt cache off (every prompt token evaluated), and the server's
    timings of them summed. None when the server gives no timings (llama-cpp-python's).
    The same prompts at temperature 0 decode the same answers."""
    answered = [c for c in calls if c.status < 400 and c.body]
    if not answered or not all(k in answered[0].timings for k in TIMINGS):
        return None
    step = max(1, len(answered) // n)
    sample = answered[::step][:n]
    base = upstream.rstrip("/").removesuffix("/v1")
    sums = dict.fromkeys(TIMINGS, 0.0)
    with httpx.Client(timeout=None) as client:
        for c in sample:
            body = json.loads(c.body) | {"cache_prompt": False}
            got = client.post(base + c.path, json=body).json().get("timings") or {}
            for k in TIMINGS:
                sums[k] += float(got.get(k, 0.0))
    if not sums["prompt_ms"] or not sums["predicted_ms"]:
        return None
    return {"calls": len(sample),
            "prefill_per_s": sums["prompt_n"] / sums["prompt_ms"] * 1000,
            "decode_per_s": sums["predicted_n"] / sums["predicted_ms"] * 1000, **sums}


def rate_limit(block: dict[str, Any], rates: dict[str, Any]) -> float:
    """The seconds the server needs for a block's tokens at its own rates: the prompt
    tokens it evaluated (not those from its cache) over the prefill rate, plus the
    completion tokens over the decode rate. A tool cannot judge faster than this on
    one server that evaluates one prompt at a time."""
    evaluated = block["prompt_tokens"] - (block.get("cached_tokens") or 0)
    return (evaluated / rates["prefill_per_s"]
            + block["completion_tokens"] / rates["decode_per_s"])
