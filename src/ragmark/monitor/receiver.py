"""An OTLP/HTTP receiver: an instrumented application exports its traces here
(``OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318``) and ``ragmark monitor`` evaluates
the spool it writes.

``POST /v1/traces`` takes an ``ExportTraceServiceRequest`` as protobuf
(``application/x-protobuf``, parsed with the official ``opentelemetry-proto`` classes) or
as OTLP JSON (``application/json``), gzip-compressed or not. Each request with spans is
appended to the spool as one line of OTLP JSON and flushed to disk (``fsync``) before it
is acknowledged, so a killed receiver loses no acknowledged span. A span without its
trace or span id is rejected and the rest kept: the answer then reports a partial
success (``rejectedSpans``), as the OTLP specification says. A body that is not a trace
export (JSON without a ``resourceSpans`` list, protobuf that does not parse) gets 400
and is never spooled; another Content-Type than those two, or a Content-Encoding other
than gzip, 415; a body over the size cap (compressed or not) 413, at once when its
Content-Length says so; a body not sent whole within its deadline 408; a request
without the ``--token`` 401, or without a token, one whose ``Host`` is not a loopback
name 403; another method than POST 405. It is served by the local web server
(:mod:`ragmark.web.server`: Starlette on uvicorn, which reads exactly the announced
body: a client gone mid-body spools nothing), bound to loopback unless a token is given.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ragmark.errors import ConfigError
from ragmark.monitor.requests import (  # noqa: F401  (protobuf_ready, from_*: the receiver's API)
    Rejected,
    from_json,
    from_protobuf,
    inflate,
    protobuf_ready,
)
from ragmark.web.server import (
    BODY_TIMEOUT,
    HEADERS_TIMEOUT,
    BodyTimeout,
    Server,
    authorised,
    loopback_only,
    missing_packages,
    read_body,
)
from ragmark.web.server import parse_listen as checked

PATH = "/v1/traces"
ROLL = 64 * 1024 * 1024
"""A spool file is closed and a new one started past this size."""
DRAIN = 4
"""A body over the cap is read and dropped up to this many times the cap before the 413
(so the client reads the answer); past that the connection is closed."""
DRAIN_WAIT = 2.0
"""Seconds the rest of a body over the cap is read and dropped for, at most, before the
413 is sent: a client that stops sending gets its answer at once."""


class Spool:
    """The folder the requests are appended to, one line of OTLP JSON each, durably."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.lock = threading.Lock()
        self._open()

    def _open(self) -> None:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f")
        self.path = self.folder / f"traces-{stamp}-{os.getpid()}.jsonl"
        self.file = self.path.open("ab")

    def append(self, request: dict[str, Any]) -> None:
        line = json.dumps(request, separators=(",", ":")).encode() + b"\n"
        with self.lock:
            if self.file.tell() + len(line) > ROLL and self.file.tell():
                self.file.close()
                self._open()
            self.file.write(line)
            self.file.flush()
            os.fsync(self.file.fileno())

    def close(self) -> None:
        with self.lock:
            self.file.close()


ENCODINGS = ("gzip", "identity")
"""The Content-Encodings a request may have (as OpenTelemetry's exporters send)."""
TYPES = ("application/x-protobuf", "application/json")
"""The Content-Types of an OTLP/HTTP export (the specification's two encodings)."""


class Refusals:
    """How many requests were refused, by status: each refusal told with its reason."""

    def __init__(self, say: Callable[[str], None]) -> None:
        self.say = say
        self.counts: dict[int, int] = {}
        self.lock = threading.Lock()

    def told(self, status: int, reason: str, client: str) -> None:
        with self.lock:
            self.counts[status] = self.counts.get(status, 0) + 1
            n = sum(self.counts.values())
        self.say(f"refused ({status}) from {client}: {reason} [{n} refused so far]")


def _status_body(status: int, message: str, proto: bool) -> tuple[bytes, str]:
    if proto and protobuf_ready() is None:
        from google.rpc.status_pb2 import Status

        return (Status(code=3, message=message).SerializeToString(),
                "application/x-protobuf")
    return json.dumps({"code": 3, "message": message}).encode(), "application/json"


def _success_body(rejected: int, proto: bool) -> tuple[bytes, str]:
    message = (f"{rejected} span{'s' if rejected != 1 else ''} without a valid traceId or "
               "spanId rejected") if rejected else ""
    if proto:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTracePartialSuccess,
            ExportTraceServiceResponse,
        )

        resp = ExportTraceServiceResponse()
        if rejected:
            resp.partial_success.CopyFrom(ExportTracePartialSuccess(
                rejected_spans=rejected, error_message=message))
        return resp.SerializeToString(), "application/x-protobuf"
    body = {"partialSuccess": {"rejectedSpans": rejected, "errorMessage": message}
            } if rejected else {}
    return json.dumps(body).encode(), "application/json"


def _refused(headers: Any, token: str | None, encoding: str, proto: bool
             ) -> tuple[int, str] | None:
    """What is wrong with a request before its body is read (status, why), if anything:
    the token, the content type, the encoding, a protobuf body without the classes to
    read it."""
    if not authorised(headers, token):
        return 401, "missing or wrong bearer token"
    kind = str(headers.get("content-type") or "").partition(";")[0].strip().lower()
    if kind not in TYPES:
        return 415, (f"Content-Type {kind or 'missing'!s}: an OTLP trace export is sent as "
                     f"{' or '.join(TYPES)}")
    if encoding not in ENCODINGS:
        return 415, (f"Content-Encoding {encoding!r} is not read; send one of: "
                     f"{', '.join(ENCODINGS)}")
    if proto and (missing := protobuf_ready()) is not None:
        return 415, f"cannot read protobuf here: {missing}; or send OTLP JSON (application/json)"
    return None


async def _drain(request: Any, read: int, limit: int) -> None:
    """Read and drop the rest of a body refused as too large, up to ``limit`` bytes in
    all and for :data:`DRAIN_WAIT` seconds at most: a server that closes with a body
    unread resets the connection, and the client sees the reset instead of the 413."""
    from starlette.requests import ClientDisconnect


    try:
        async for chunk in read_body(request, DRAIN_WAIT):
            read += len(chunk)
            if read > limit:
                return
    except (ClientDisconnect, BodyTimeout):
        return


async def _body(request: Any, cap: int, deadline: float) -> bytes | tuple[int, str]:
    """A request's whole body (exactly the announced one), or why it is refused: over
    the cap (413: at once when the Content-Length says so, else after the rest is
    drained), the client gone mid-body (400), not whole within ``deadline`` seconds
    (408). Nothing of a refused body is spooled."""
    from starlette.requests import ClientDisconnect


    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > cap:
        # answered at once, without waiting for a body that will not be read
        return 413, f"the body is over the cap of {cap} bytes (Content-Length {length})"
    parts: list[bytes] = []
    size = 0
    try:
        async for chunk in read_body(request, deadline):
            size += len(chunk)
            if size > cap:
                await _drain(request, size, DRAIN * cap)
                return 413, f"the body is over the cap of {cap} bytes"
            parts.append(chunk)
    except ClientDisconnect:
        return 400, f"the client left after {size} bytes of the body"
    except BodyTimeout as e:  # half a body, or a trickle
        return 408, str(e)
    return b"".join(parts)


def make_app(spool: Spool, token: str | None, cap: int,
             say: Callable[[str], None], body_timeout: float | None = None) -> Any:
    """The receiver as a Starlette app: ``POST /v1/traces``, every refusal answered in
    the request's own encoding (a google.rpc.Status for protobuf) and told on the
    console with its reason and a running count; a body must arrive whole within
    ``body_timeout`` seconds (:data:`ragmark.web.server.BODY_TIMEOUT`)."""
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.exceptions import HTTPException
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route


    deadline = BODY_TIMEOUT if body_timeout is None else body_timeout
    refusals = Refusals(say)

    def refuse(request: Request, status: int, message: str,
               headers: dict[str, str] | None = None) -> Response:
        proto = "protobuf" in (request.headers.get("content-type") or "")
        client = request.client.host if request.client else "?"
        refusals.told(status, message, client)
        body, kind = _status_body(status, message, proto)
        # said, so a client does not send its next request down a socket being closed
        return Response(body, status, {**(headers or {}), "Connection": "close"},
                        media_type=kind)

    def accept(body: bytes, encoding: str, proto: bool) -> int:
        if encoding == "gzip":
            body = inflate(body, cap)
        request, rejected = from_protobuf(body) if proto else from_json(body)
        if any(ss.get("spans") for rs in request["resourceSpans"]
               for ss in rs.get("scopeSpans", [])):
            spool.append(request)  # flushed to disk before the answer
        return rejected

    async def traces(request: Request) -> Response:
        proto = "protobuf" in (request.headers.get("content-type") or "")
        encoding = (request.headers.get("content-encoding") or "identity").strip().lower()
        if (refused := _refused(request.headers, token, encoding, proto)) is not None:
            return refuse(request, *refused)
        got = await _body(request, cap, deadline)
        if isinstance(got, tuple):
            return refuse(request, *got)
        try:
            rejected = await run_in_threadpool(accept, got, encoding, proto)
        except Rejected as e:
            return refuse(request, e.status, str(e))
        if rejected:
            say(f"partial success: {rejected} span{'s' if rejected != 1 else ''} without a "
                "valid traceId or spanId rejected")
        body, kind = _success_body(rejected, proto)
        return Response(body, 200, media_type=kind)

    async def not_here(request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        if status == 405:
            return refuse(request, 405, f"{request.method} is not allowed: POST {PATH}",
                          {"Allow": "POST"})
        return refuse(request, status, (
            f"nothing at {request.method} {request.url.path}: traces are received at "
            f"POST {PATH}") if status == 404 else f"the request was refused ({status})")

    return loopback_only(Starlette(routes=[Route(PATH, traces, methods=["POST"])],
                                   exception_handlers={404: not_here, 405: not_here}),
                         token, refuse)


def parse_listen(listen: str, token: str | None) -> tuple[str, int]:
    """``HOST:PORT``, checked (:func:`ragmark.web.server.parse_listen`)."""
    return checked(listen, token)


def make_server(listen: str, spool_dir: Path, *, token: str | None = None,
                max_body: int = 16 * 1024 * 1024,
                say: Callable[[str], None] = lambda t: None,
                body_timeout: float | None = None,
                headers_timeout: float | None = None) -> tuple[Any, Spool]:
    """A receiver ready to ``serve_forever`` (and its spool); what it needs to read
    OpenTelemetry's default protobuf exports, and to serve, is checked first."""
    host, port = parse_listen(listen, token)
    missing = protobuf_ready()
    if missing is not None:
        raise ConfigError(f"--listen: {missing}")

    if missing_packages():
        raise ConfigError(f"--listen: the receiver's server ({', '.join(missing_packages())})"
                          " is not installed: pip install 'ragmark-eval[otel]'")
    spool = Spool(spool_dir)
    try:
        server = Server(make_app(spool, token, max_body, say, body_timeout), listen, host,
                        port, HEADERS_TIMEOUT if headers_timeout is None else headers_timeout)
    except ConfigError:
        spool.close()
        raise
    return server, spool


def banner(host: str, port: int, token: bool, spool: Path) -> str:
    """What the receiver says when it starts: where it receives, and what the
    application sets to send there (a wildcard bind is reached by this machine's name
    or address, not by 0.0.0.0; the token as a header)."""
    wildcard = host in ("0.0.0.0", "::")
    where = f"http://{'THIS-HOST' if wildcard else _url_host(host)}:{port}"
    said = (f"receiving OTLP/HTTP traces on {where}{PATH} into {spool}; point the "
            f"application's OTEL_EXPORTER_OTLP_ENDPOINT at {where}")
    if wildcard:
        said += " (THIS-HOST: this machine's name or address as the application reaches it)"
    if token:
        said += (" and set OTEL_EXPORTER_OTLP_HEADERS='Authorization=Bearer%20TOKEN' (the "
                 "token given to --token)")
    return said + "; Ctrl-C stops"


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def serve(listen: str, spool_dir: Path, *, token: str | None = None,
          max_body: int = 16 * 1024 * 1024, say: Callable[[str], None] = print) -> None:
    """Receive until interrupted (Ctrl-C or SIGTERM)."""
    import signal

    server, spool = make_server(listen, spool_dir, token=token, max_body=max_body, say=say)
    host, port = server.server_address
    say(banner(str(host), int(port), token is not None, spool.path))

    def stop(*_: Any) -> None:
        raise KeyboardInterrupt

    # uvicorn stops gracefully on Ctrl-C or SIGTERM, then passes the signal on
    signal.signal(signal.SIGTERM, stop)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        say("stopped")
    finally:
        server.server_close()
        spool.close()

