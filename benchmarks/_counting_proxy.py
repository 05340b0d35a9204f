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
                    proxy.record(_call(proxy.phase, self.path, r, seconds))
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
    choices = data.get("choices") or [{}]
    call.finish_reason = choices[0].get("finish_reason")
    return call


def totals(calls: list[Call]) -> dict[str, Any]:
    """Calls, refused calls (HTTP 4xx/5xx), tokens and server seconds of ``calls``."""
    cached = [c.cached_tokens for c in calls if c.cached_tokens is not None]
    return {
        "calls": len(calls),
        "refused": sum(1 for c in calls if c.status >= 400),
        "prompt_tokens": sum(c.prompt_tokens for c in calls),
        "completion_tokens": sum(c.completion_tokens for c in calls),
        "cached_tokens": sum(cached) if cached else None,
        "cut_by_length": sum(1 for c in calls if c.finish_reason == "length"),
        "server_s": sum(c.seconds for c in calls),
        "refusals": sorted({c.error for c in calls if c.error}),
    }
