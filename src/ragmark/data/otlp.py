"""OTLP JSON, read: the spans of an ``ExportTraceServiceRequest`` as OpenTelemetry's
exporters and the Collector's file exporter write it (one request a document or a line;
ids in hex, 64-bit integers as strings), with their attributes decoded.

With ``msgspec`` installed (``ragmark-eval[otel]``) a request is decoded straight into typed
structs, which is several times faster than building dicts (see
``benchmarks/trace_ingest.py``); a request of an odd shape (a field of the wrong type)
then goes the lenient way: ``json.loads`` (or orjson) and a walk over the dicts that
counts what it leaves out. Either way the spans are the same.
"""

from __future__ import annotations

import gc
import gzip
import json
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragmark.data.leniency import Leniency
from ragmark.errors import DataError

KIND = "openinference.span.kind"
GENAI_KINDS = {"retrieval": "RETRIEVER", "chat": "LLM", "text_completion": "LLM",
               "generate_content": "LLM", "invoke_agent": "AGENT", "invoke_workflow": "CHAIN",
               "execute_tool": "TOOL", "embeddings": "EMBEDDING"}
"""A GenAI ``gen_ai.operation.name`` as the OpenInference span kind it amounts to."""


@dataclass(slots=True)
class Span:
    """One span as the file gives it: ids, name, times (ns) and decoded attributes."""

    trace_id: str
    span_id: str
    parent_id: str
    name: str
    start: int
    end: int
    attributes: dict[str, Any] = field(default_factory=dict)
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    flags: int = 0
    """OTLP span flags: bit 0x100 says whether the parent is known to be remote, 0x200
    that it is (a service's entry span whose caller's span lives elsewhere)."""
    error: str | None = None
    """Why the span failed, when its status says it did (its status message, else the
    message of an exception it recorded, else "error"); None when it did not."""
    kind: str = field(init=False, default="")
    """The OpenInference span kind (RETRIEVER, LLM, ...; a GenAI operation as the kind it
    amounts to; "" for none), read once from the attributes."""

    def __post_init__(self) -> None:
        kind = self.attributes.get(KIND)
        self.kind = (str(kind).upper() if kind is not None else
                     GENAI_KINDS.get(str(self.attributes.get("gen_ai.operation.name", "")), ""))

    @property
    def remote_parent(self) -> bool:
        """The span's parent is in another process (its flags say so): the span is this
        process's root, and the parent will never be in its traces."""
        return bool(self.parent_id) and self.flags & REMOTE == REMOTE


REMOTE = 0x300
"""SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK | SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK."""


def warn(lenient: Leniency, kind: str, place: str, reason: str) -> None:
    """Count one odd thing of ``kind`` at ``place`` (an error with ``--strict``)."""
    lenient.warn(kind, place, DataError(reason, file=place))


def value_of(v: Any) -> Any:
    """An OTLP JSON ``AnyValue`` as a Python value (int64 come as strings in JSON)."""
    if not isinstance(v, Mapping):
        return None
    if "stringValue" in v:
        return v["stringValue"]
    if "intValue" in v:
        try:
            return int(v["intValue"])
        except (TypeError, ValueError):
            return None
    if "doubleValue" in v:
        x = v["doubleValue"]
        return float(x) if isinstance(x, int | float | str) else None
    if "boolValue" in v:
        return bool(v["boolValue"])
    if "arrayValue" in v:
        return [value_of(x) for x in (v["arrayValue"] or {}).get("values", [])]
    if "kvlistValue" in v:
        return {kv.get("key"): value_of(kv.get("value"))
                for kv in (v["kvlistValue"] or {}).get("values", []) if isinstance(kv, dict)}
    return None


def attributes_of(kvs: Any) -> dict[str, Any]:
    if not isinstance(kvs, list):
        return {}
    return {a["key"]: value_of(a.get("value")) for a in kvs
            if isinstance(a, dict) and isinstance(a.get("key"), str)}


ERROR_CODES = (2, "2", "STATUS_CODE_ERROR")
"""An OTLP status code that says the span failed (as a number, and as protobuf's JSON
mapping names it)."""


def error_of(code: Any, message: Any, events: list[tuple[str, dict[str, Any]]]) -> str | None:
    """A span's failure from its status and its events (see :attr:`Span.error`)."""
    if code not in ERROR_CODES:
        return None
    if isinstance(message, str) and message.strip():
        return message
    raised = [e.get("exception.message") for name, e in events if name == "exception"]
    return next((str(m) for m in raised if m), "error")


def nanos(v: Any) -> int:
    try:
        return int(v)
    except (TypeError, ValueError):
        return 0


def spans_of(request: Any, lenient: Leniency, where: str) -> Iterator[Span]:
    """The spans of one ``ExportTraceServiceRequest`` in OTLP JSON; a span without its
    trace or span id is left out, counted."""
    if not isinstance(request, dict) or not isinstance(request.get("resourceSpans"), list):
        warn(lenient, "documents that are not OTLP trace exports (no 'resourceSpans' "
              "list): left out", where, "not an OTLP trace export (no 'resourceSpans' list)")
        return
    for rs in request["resourceSpans"]:
        for ss in (rs or {}).get("scopeSpans") or []:
            for s in (ss or {}).get("spans") or []:
                if not isinstance(s, dict) or not s.get("traceId") or not s.get("spanId"):
                    warn(lenient, NO_IDS, where, "a span without its traceId or spanId")
                    continue
                events = [(str(e.get("name", "")), attributes_of(e.get("attributes")))
                          for e in s.get("events") or [] if isinstance(e, dict)]
                status = s["status"] if isinstance(s.get("status"), dict) else {}
                yield Span(str(s["traceId"]), str(s["spanId"]), str(s.get("parentSpanId") or ""),
                           str(s.get("name", "")), nanos(s.get("startTimeUnixNano")),
                           nanos(s.get("endTimeUnixNano")), attributes_of(s.get("attributes")),
                           events, nanos(s.get("flags")),
                           error_of(status.get("code"), status.get("message"), events))


NO_IDS = "spans without a traceId or spanId: left out"


def _loads() -> Callable[[str | bytes], Any]:
    try:
        import orjson
    except ImportError:  # the otel extra is not installed: the standard library's
        return json.loads
    return orjson.loads


loads = _loads()
"""JSON text -> value: orjson when installed (``ragmark-eval[otel]``), else ``json.loads``;
both raise a ValueError on text that is not JSON."""


try:
    import msgspec
except ImportError:  # the otel extra is not installed: the lenient walk only
    msgspec = None  # type: ignore[assignment]

if msgspec is not None:
    # the OTLP JSON names, as the structs' fields (the decoder reads them by name)
    class AnyValue(msgspec.Struct, frozen=True, gc=False):
        stringValue: str | None = None  # noqa: N815
        intValue: int | str | None = None  # noqa: N815
        doubleValue: float | str | None = None  # noqa: N815
        boolValue: bool | None = None  # noqa: N815
        arrayValue: Any = None  # noqa: N815
        kvlistValue: Any = None  # noqa: N815

    class KeyValue(msgspec.Struct, gc=False):
        key: str
        value: AnyValue = AnyValue()

    class Event(msgspec.Struct, gc=False):
        name: str = ""
        attributes: list[KeyValue] = []

    class Status(msgspec.Struct, frozen=True, gc=False):
        code: int | str = 0
        message: str = ""

    class OtlpSpan(msgspec.Struct, gc=False):
        traceId: str = ""  # noqa: N815
        spanId: str = ""  # noqa: N815
        parentSpanId: str = ""  # noqa: N815
        name: str = ""
        startTimeUnixNano: int | str = 0  # noqa: N815
        endTimeUnixNano: int | str = 0  # noqa: N815
        attributes: list[KeyValue] = []
        events: list[Event] = []
        flags: int | str = 0
        status: Status = Status()

    class ScopeSpans(msgspec.Struct, gc=False):
        spans: list[OtlpSpan] = []

    class ResourceSpans(msgspec.Struct, gc=False):
        scopeSpans: list[ScopeSpans] = []  # noqa: N815

    class Request(msgspec.Struct, gc=False):
        resourceSpans: list[ResourceSpans]  # noqa: N815

    _DECODER = msgspec.json.Decoder(Request)


def _value(v: Any) -> Any:
    """A decoded ``AnyValue`` struct as a Python value."""
    if v.stringValue is not None:
        return v.stringValue
    if v.intValue is not None:
        return number_or_none(v.intValue, int)
    if v.doubleValue is not None:
        return number_or_none(v.doubleValue, float)
    if v.boolValue is not None:
        return v.boolValue
    if v.arrayValue is not None:
        return value_of({"arrayValue": v.arrayValue})
    if v.kvlistValue is not None:
        return value_of({"kvlistValue": v.kvlistValue})
    return None


def _typed(raw: bytes | str, lenient: Leniency, where: str) -> list[Span]:
    """The spans of a request decoded into the structs (msgspec's errors propagate)."""
    return _spans_of_struct(_DECODER.decode(raw), lenient, where)


def _spans_of_struct(req: Any, lenient: Leniency, where: str) -> list[Span]:
    """The spans of one decoded ``Request`` struct."""
    out = []
    for rs in req.resourceSpans:
        for ss in rs.scopeSpans:
            for s in ss.spans:
                if not s.traceId or not s.spanId:
                    warn(lenient, NO_IDS, where, "a span without its traceId or spanId")
                    continue
                # most values are strings: taken inline, the rest by _value
                attrs = {kv.key: (v if (v := kv.value.stringValue) is not None
                                  else _value(kv.value)) for kv in s.attributes}
                events = [(e.name, {kv.key: _value(kv.value) for kv in e.attributes})
                          for e in s.events] if s.events else []
                out.append(Span(s.traceId, s.spanId, s.parentSpanId, s.name,
                                nanos(s.startTimeUnixNano), nanos(s.endTimeUnixNano), attrs,
                                events, nanos(s.flags) if s.flags else 0,
                                error_of(s.status.code, s.status.message, events)
                                if s.status.code else None))
    return out


def _typed_lines(data: bytes, lenient: Leniency, where: str) -> list[list[Span]] | None:
    """Every line of a JSON Lines file decoded at once into the structs; None when one
    line is not a request of the usual shape, or a line is blank (the caller then reads
    line by line, and counts by line)."""
    if msgspec is None or b"\n\n" in data or b"\n\r\n" in data:
        return None
    try:
        requests = _DECODER.decode_lines(data)
    except (msgspec.ValidationError, msgspec.DecodeError):
        return None
    return [_spans_of_struct(r, lenient, f"{where}, line {n}")
            for n, r in enumerate(requests, start=1)]


def number_or_none(v: Any, kind: type) -> Any:
    try:
        return kind(v)
    except (TypeError, ValueError):
        return None


def decode(raw: bytes | str, lenient: Leniency, where: str) -> list[Span] | None:
    """The spans of one export request's JSON text; None when it is not JSON. A request
    of an odd shape is read leniently, its odd parts counted."""
    if msgspec is not None:
        try:
            return _typed(raw, lenient, where)
        except msgspec.ValidationError:
            pass  # JSON of an odd shape: the lenient walk says what it leaves out
        except msgspec.DecodeError:
            return None
    try:
        request = loads(raw)
    except ValueError:
        return None
    return list(spans_of(request, lenient, where))


_BLANK_TO_END = re.compile(rb"\s*\Z")

NOT_JSON = "lines that are not JSON (a truncated file?): left out"


@contextmanager
def no_gc() -> Iterator[None]:
    """The cyclic garbage collector paused while spans are read: they make millions of
    objects and no cycles, and its passes over them cost a fifth of the reading."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def file_requests(path: Path, lenient: Leniency) -> Iterator[tuple[list[Span], str]]:
    """The spans of each export request of a file (one document, or one a line; .gz
    too), with where it is; a line that is not JSON is left out, counted."""
    opener: Callable[..., Any] = gzip.open if path.name.endswith(".gz") else open
    try:
        with opener(path, "rb") as f:
            data = f.read()
    except (OSError, EOFError) as e:
        warn(lenient, "files that cannot be read: left out", str(path), f"unreadable: {e}")
        return
    first = data.find(b"\n")
    if first == -1 or _BLANK_TO_END.match(data, first):  # one document (no copy made)
        got = decode(data, lenient, str(path))
        if got is not None:
            yield got, str(path)
            return
    elif (every := _typed_lines(data, lenient, str(path))) is not None:
        for n, spans in enumerate(every, start=1):
            yield spans, f"{path}, line {n}"
        return
    for n, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}, line {n}"
        got = decode(line, lenient, where)
        if got is None:
            whole = decode(data, lenient, str(path)) if n == 1 else None
            if whole is not None:  # one document over several lines
                yield whole, str(path)
                return
            warn(lenient, NOT_JSON, where, "not JSON (a truncated file?)")
            continue
        yield got, where
