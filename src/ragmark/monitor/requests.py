"""What the receiver reads: an OTLP trace export request, as protobuf (the official
``opentelemetry-proto`` classes) or OTLP JSON, gzip-compressed or not, turned into the
OTLP JSON it spools, with the spans rejected for want of valid ids counted. A body that
is not a trace export is :class:`Rejected` with its HTTP status."""

from __future__ import annotations

import base64
import json
import zlib
from typing import Any


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
    if not isinstance(req, dict) or not isinstance(req.get("resourceSpans"), list):
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


def inflate(body: bytes, cap: int) -> bytes:
    """A gzip body inflated, refused (413) past ``cap`` bytes."""
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = d.decompress(body, cap + 1)
    except zlib.error as e:
        raise Rejected(400, f"not gzip: {e}") from None
    if len(out) > cap:
        raise Rejected(413, f"the body inflates beyond the cap of {cap} bytes")
    return out
