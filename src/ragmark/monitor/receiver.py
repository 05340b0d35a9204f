"""An OTLP/HTTP receiver: an instrumented application exports its traces here
(``OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318``) and ``ragmark monitor`` evaluates
the spool it writes.

``POST /v1/traces`` takes an ``ExportTraceServiceRequest`` as protobuf
(``application/x-protobuf``, parsed with the official ``opentelemetry-proto`` classes) or
as OTLP JSON (``application/json``), gzip-compressed or not. Each request is appended to
the spool as one line of OTLP JSON and flushed to disk (``fsync``) before it is
acknowledged, so a killed receiver loses no acknowledged span. A span without its trace
or span id is rejected and the rest kept: the answer then reports a partial success
(``rejectedSpans``), as the OTLP specification says. A body that is not a trace export
gets 400, one over the size cap (compressed or not) 413, a request without the
``--token`` 401, a Content-Encoding other than gzip 415, another method than POST 405.
It is served by the local web server (:mod:`ragmark.web.server`: Starlette on uvicorn,
which reads exactly the announced body: a client gone mid-body spools nothing), bound
to loopback unless a token is given.
"""

from __future__ import annotations

import base64
import json
import os
import threading
import zlib
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ragmark.errors import ConfigError

PATH = "/v1/traces"
ROLL = 64 * 1024 * 1024
"""A spool file is closed and a new one started past this size."""
DRAIN = 4
"""A body over the cap is read and dropped up to this many times the cap before the 413
(so the client reads the answer); past that the connection is closed."""


class Rejected(ValueError):
    """A request that is not an OTLP trace export (status, message)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _any(v: Any) -> dict[str, Any]:
    k = v.WhichOneof("value")
    if k == "string_value":
        return {"stringValue": v.string_value}
    if k == "int_value":
        return {"intValue": str(v.int_value)}
    if k == "double_value":
        return {"doubleValue": v.double_value}
    if k == "bool_value":
        return {"boolValue": v.bool_value}
    if k == "array_value":
        return {"arrayValue": {"values": [_any(x) for x in v.array_value.values]}}
    if k == "kvlist_value":
        return {"kvlistValue": {"values": [_kv(x) for x in v.kvlist_value.values]}}
    if k == "bytes_value":
        return {"bytesValue": base64.b64encode(v.bytes_value).decode()}
    return {}


def _kv(kv: Any) -> dict[str, Any]:
    return {"key": kv.key, "value": _any(kv.value)}


def _span(s: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "traceId": s.trace_id.hex(), "spanId": s.span_id.hex(), "name": s.name,
        "kind": s.kind, "startTimeUnixNano": str(s.start_time_unix_nano),
        "endTimeUnixNano": str(s.end_time_unix_nano),
        "attributes": [_kv(a) for a in s.attributes],
    }
    if s.parent_span_id:
        out["parentSpanId"] = s.parent_span_id.hex()
    if s.flags:  # whether the parent is remote: that span is its process's root
        out["flags"] = s.flags
    if s.events:
        out["events"] = [{"name": e.name, "timeUnixNano": str(e.time_unix_nano),
                          "attributes": [_kv(a) for a in e.attributes]} for e in s.events]
    if s.status.code or s.status.message:
        out["status"] = {"code": s.status.code, "message": s.status.message}
    return out


def protobuf_ready() -> str | None:
    """None when protobuf exports can be read; else what to install (the Python SDK's
    default exporter sends protobuf, so a receiver without it drops every export)."""
    try:
        from google.protobuf.message import DecodeError  # noqa: F401
        from google.rpc.status_pb2 import Status  # noqa: F401
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2  # noqa: F401
    except ImportError as e:
        return (f"the receiver reads protobuf exports (OpenTelemetry's default) with "
                f"opentelemetry-proto, which is not installed ({e.name}): "
                "pip install 'ragmark-eval[otel]'")
    return None


def from_protobuf(body: bytes) -> tuple[dict[str, Any], int]:
    """A protobuf export request as OTLP JSON, and the spans rejected (ids of the wrong
    length)."""
    from google.protobuf.message import DecodeError
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    try:
        req = ExportTraceServiceRequest.FromString(body)
    except (DecodeError, ValueError, RuntimeError) as e:
        raise Rejected(400, f"not an OTLP protobuf trace export: {e}") from None
    rejected = 0
    resource_spans = []
    for rs in req.resource_spans:
        scopes = []
        for ss in rs.scope_spans:
            spans = []
            for s in ss.spans:
                if len(s.trace_id) != 16 or len(s.span_id) != 8:
                    rejected += 1
                    continue
                spans.append(_span(s))
            scopes.append({"scope": {"name": ss.scope.name, "version": ss.scope.version},
                           "spans": spans})
        resource_spans.append({"resource": {"attributes": [
            _kv(a) for a in rs.resource.attributes]}, "scopeSpans": scopes})
    return {"resourceSpans": resource_spans}, rejected


def from_json(body: bytes) -> tuple[dict[str, Any], int]:
    """An OTLP JSON export request checked: the spans without a string traceId and
    spanId rejected, the rest kept as sent."""
    try:
        req = json.loads(body)
    except (ValueError, UnicodeDecodeError) as e:
        raise Rejected(400, f"not JSON: {e}") from None
    except RecursionError:
        raise Rejected(400, "not an OTLP trace export: JSON nested too deeply") from None
    if not isinstance(req, dict) or not isinstance(req.get("resourceSpans", []), list):
        raise Rejected(400, "not an OTLP trace export: expected an object with a "
                            "'resourceSpans' list")
    rejected = 0
    for rs in req.get("resourceSpans", []):
        if not isinstance(rs, dict) or not isinstance(rs.get("scopeSpans", []), list):
            raise Rejected(400, "each resourceSpans item must be an object with a "
                                "'scopeSpans' list")
        for ss in rs.get("scopeSpans", []):
            spans = ss.get("spans", []) if isinstance(ss, dict) else None
            if not isinstance(spans, list):
                raise Rejected(400, "each scopeSpans item must be an object with a "
                                    "'spans' list")
            kept = [s for s in spans if isinstance(s, dict) and isinstance(
                s.get("traceId"), str) and s["traceId"] and isinstance(
                s.get("spanId"), str) and s["spanId"]]
            rejected += len(spans) - len(kept)
            ss["spans"] = kept
    return req, rejected


def _inflate(body: bytes, cap: int) -> bytes:
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = d.decompress(body, cap + 1)
    except zlib.error as e:
        raise Rejected(400, f"not gzip: {e}") from None
    if len(out) > cap:
        raise Rejected(413, f"the body inflates beyond the cap of {cap} bytes")
    return out


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
    the token, the encoding, a protobuf body without the classes to read it."""
    from ragmark.web.server import authorised

    if not authorised(headers, token):
        return 401, "missing or wrong bearer token"
    if encoding not in ENCODINGS:
        return 415, (f"Content-Encoding {encoding!r} is not read; send one of: "
                     f"{', '.join(ENCODINGS)}")
    if proto and (missing := protobuf_ready()) is not None:
        return 415, f"cannot read protobuf here: {missing}; or send OTLP JSON (application/json)"
    return None


async def _drain(request: Any, read: int, limit: int) -> None:
    """Read and drop the rest of a body refused as too large, up to ``limit`` bytes in
    all: a server that closes with a body unread resets the connection, and the client
    sees the reset instead of the 413."""
    from starlette.requests import ClientDisconnect

    try:
        async for chunk in request.stream():
            read += len(chunk)
            if read > limit:
                return
    except ClientDisconnect:
        return


def make_app(spool: Spool, token: str | None, cap: int,
             say: Callable[[str], None]) -> Any:
    """The receiver as a Starlette app: ``POST /v1/traces``, every refusal answered in
    the request's own encoding (a google.rpc.Status for protobuf) and told on the
    console with its reason and a running count."""
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.exceptions import HTTPException
    from starlette.requests import ClientDisconnect, Request
    from starlette.responses import Response
    from starlette.routing import Route

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
            body = _inflate(body, cap)
        request, rejected = from_protobuf(body) if proto else from_json(body)
        spool.append(request)  # flushed to disk before the answer
        return rejected

    async def too_large(request: Request, read: int) -> Response:
        await _drain(request, read, DRAIN * cap)
        return refuse(request, 413, f"the body is over the cap of {cap} bytes")

    async def traces(request: Request) -> Response:
        proto = "protobuf" in (request.headers.get("content-type") or "")
        encoding = (request.headers.get("content-encoding") or "identity").strip().lower()
        if (refused := _refused(request.headers, token, encoding, proto)) is not None:
            return refuse(request, *refused)
        length = request.headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > cap:
            return await too_large(request, 0)
        parts: list[bytes] = []
        size = 0
        try:
            async for chunk in request.stream():  # exactly the announced body
                size += len(chunk)
                if size > cap:
                    return await too_large(request, size)
                parts.append(chunk)
        except ClientDisconnect:  # a client gone mid-body: nothing of it is spooled
            return refuse(request, 400, f"the client left after {size} bytes of the body")
        try:
            rejected = await run_in_threadpool(accept, b"".join(parts), encoding, proto)
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
        return refuse(request, status, f"not found: POST {PATH}" if status == 404
                      else f"the request was refused ({status})")

    return Starlette(routes=[Route(PATH, traces, methods=["POST"])],
                     exception_handlers={404: not_here, 405: not_here})


def parse_listen(listen: str, token: str | None) -> tuple[str, int]:
    """``HOST:PORT``, checked (:func:`ragmark.web.server.parse_listen`)."""
    from ragmark.web.server import parse_listen as checked

    return checked(listen, token)


def make_server(listen: str, spool_dir: Path, *, token: str | None = None,
                max_body: int = 16 * 1024 * 1024,
                say: Callable[[str], None] = lambda t: None) -> tuple[Any, Spool]:
    """A receiver ready to ``serve_forever`` (and its spool); what it needs to read
    OpenTelemetry's default protobuf exports, and to serve, is checked first."""
    host, port = parse_listen(listen, token)
    missing = protobuf_ready()
    if missing is not None:
        raise ConfigError(f"--listen: {missing}")
    from ragmark.web.server import Server, missing_packages

    if missing_packages():
        raise ConfigError(f"--listen: the receiver's server ({', '.join(missing_packages())})"
                          " is not installed: pip install 'ragmark-eval[otel]'")
    spool = Spool(spool_dir)
    try:
        server = Server(make_app(spool, token, max_body, say), listen, host, port)
    except ConfigError:
        spool.close()
        raise
    return server, spool


def serve(listen: str, spool_dir: Path, *, token: str | None = None,
          max_body: int = 16 * 1024 * 1024, say: Callable[[str], None] = print) -> None:
    """Receive until interrupted (Ctrl-C or SIGTERM)."""
    import signal

    server, spool = make_server(listen, spool_dir, token=token, max_body=max_body, say=say)
    host, port = str(server.server_address[0]), int(server.server_address[1])
    say(f"receiving OTLP/HTTP traces on http://{host}:{port}{PATH} into {spool.path} "
        f"(point OTEL_EXPORTER_OTLP_ENDPOINT at http://{host}:{port}; Ctrl-C stops)")

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

