"""OTLP JSON as OpenTelemetry writes it, from spans of the real SDK (the official
encoder; trace and span ids in hex, as the OTLP JSON encoding says)."""

from __future__ import annotations

import base64
from typing import Any

from google.protobuf import json_format
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


def otlp_json(spans: Any) -> dict[str, Any]:
    """An export request as OTLP JSON, as the Collector's file exporter writes it (the
    official encoder, ids in hex as the OTLP JSON encoding says)."""
    data = json_format.MessageToDict(encode_spans(spans))
    for rs in data["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for s in ss["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in s:
                        s[key] = base64.b64decode(s[key]).hex()
    return data


def recorder() -> tuple[Any, InMemorySpanExporter]:
    """A tracer of the real SDK whose finished spans the returned exporter keeps."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider.get_tracer("rag-app"), exporter
