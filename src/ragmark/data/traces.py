"""Traces in: OTLP JSON files (as OpenTelemetry's exporters and the Collector's file
exporter write them: one export request a line, or one document; ``.gz`` too; a file or a
folder of them) read as a system's logged outputs, one question a trace.

The spans are read with the OpenInference conventions: the root span's ``input.value`` is
the question and its ``output.value`` the answer (else the last LLM span's); each
RETRIEVER span's ``retrieval.documents.N.document.id|content|score`` (a RERANKER's
``reranker.output_documents.N...``) is a hop, and the hops in span order are the ranking;
the trace's latency is its root span's. Odd data loads with counted warnings (a line
that is not JSON, a span without ids, a trace without a root or without a question);
``--strict`` makes them errors.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragmark.data.leniency import Leniency
from ragmark.data.logged import Context, Output
from ragmark.data.outputs import OutputsSet, contexts_corpus
from ragmark.errors import DataError
from ragmark.types import Dataset, GroundTruth, Sample

KIND = "openinference.span.kind"
DOCUMENTS = {"RETRIEVER": "retrieval.documents", "RERANKER": "reranker.output_documents"}
_DOC = re.compile(r"^(retrieval\.documents|reranker\.output_documents)\.(\d+)\.document\."
                  r"(id|content|score)$")


@dataclass
class Span:
    """One span as the file gives it: ids, name, times (ns) and decoded attributes."""

    trace_id: str
    span_id: str
    parent_id: str
    name: str
    start: int
    end: int
    attributes: dict[str, Any] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        return str(self.attributes.get(KIND, "")).upper()


def _warn(lenient: Leniency, kind: str, place: str, reason: str) -> None:
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


def _nanos(v: Any) -> int:
    try:
        return int(v)
    except (TypeError, ValueError):
        return 0


def spans_of(request: Any, lenient: Leniency, where: str) -> Iterator[Span]:
    """The spans of one ``ExportTraceServiceRequest`` in OTLP JSON; a span without its
    trace or span id is left out, counted."""
    if not isinstance(request, dict) or not isinstance(request.get("resourceSpans"), list):
        _warn(lenient, "documents that are not OTLP trace exports (no 'resourceSpans' "
              "list): left out", where, "not an OTLP trace export (no 'resourceSpans' list)")
        return
    for rs in request["resourceSpans"]:
        for ss in (rs or {}).get("scopeSpans") or []:
            for s in (ss or {}).get("spans") or []:
                if not isinstance(s, dict) or not s.get("traceId") or not s.get("spanId"):
                    _warn(lenient, "spans without a traceId or spanId: left out", where,
                          "a span without its traceId or spanId")
                    continue
                attrs = {a["key"]: value_of(a.get("value")) for a in s.get("attributes") or []
                         if isinstance(a, dict) and isinstance(a.get("key"), str)}
                yield Span(str(s["traceId"]), str(s["spanId"]), str(s.get("parentSpanId") or ""),
                           str(s.get("name", "")), _nanos(s.get("startTimeUnixNano")),
                           _nanos(s.get("endTimeUnixNano")), attrs)


def _files(path: Path) -> list[Path]:
    if path.is_dir():
        found = sorted(p for p in path.rglob("*") if p.is_file() and (
            p.name.endswith((".json", ".jsonl", ".json.gz", ".jsonl.gz"))))
        if not found:
            raise DataError("no OTLP JSON file (.json, .jsonl, .gz) in the folder",
                            file=str(path))
        return found
    if not path.exists():
        raise DataError("no such file or folder", file=str(path))
    return [path]


def _requests(path: Path, lenient: Leniency) -> Iterator[tuple[Any, str]]:
    """Each export request of a file: one document, or one a line."""
    opener = gzip.open if path.name.endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8") as f:  # type: ignore[operator]
            text = f.read()
    except (OSError, EOFError, UnicodeDecodeError) as e:
        _warn(lenient, "files that cannot be read: left out", str(path), f"unreadable: {e}")
        return
    try:
        yield json.loads(text), str(path)
        return
    except json.JSONDecodeError:
        pass
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield json.loads(line), f"{path}, line {n}"
        except json.JSONDecodeError:
            _warn(lenient, "lines that are not JSON (a truncated file?): left out",
                  f"{path}, line {n}", "not JSON (a truncated file?)")


def _documents(span: Span) -> list[Context]:
    """A retriever's (or reranker's) documents in rank order."""
    prefix = DOCUMENTS.get(span.kind)
    docs: dict[int, dict[str, Any]] = {}
    for k, v in span.attributes.items():
        m = _DOC.match(k)
        if m and m.group(1) == prefix:
            docs.setdefault(int(m.group(2)), {})[m.group(3)] = v
    out = []
    for i in sorted(docs):
        d = docs[i]
        score = d.get("score")
        out.append(Context(str(d.get("content") or ""), None if d.get("id") is None
                           else str(d["id"]), None,
                           float(score) if isinstance(score, int | float) else None))
    return out


@dataclass
class Trace:
    """One trace's spans, its root, and what they say of the question."""

    trace_id: str
    spans: list[Span]

    def root(self) -> Span | None:
        ids = {s.span_id for s in self.spans}
        roots = [s for s in self.spans if not s.parent_id or s.parent_id not in ids]
        return min(roots, key=lambda s: s.start) if roots else None

    def hops(self) -> list[tuple[Span, list[Context]]]:
        """The retriever (or reranker) spans in start order, each with its documents."""
        return [(s, _documents(s)) for s in sorted(self.spans, key=lambda s: s.start)
                if s.kind in DOCUMENTS]


def read_traces(path: str | Path, lenient: Leniency) -> list[Trace]:
    """Every trace of the file or folder, in order of first appearance."""
    by_id: dict[str, list[Span]] = {}
    for f in _files(Path(path)):
        for request, where in _requests(f, lenient):
            for span in spans_of(request, lenient, where):
                by_id.setdefault(span.trace_id, []).append(span)
    return [Trace(t, spans) for t, spans in by_id.items()]


def _answer(trace: Trace, root: Span) -> str | None:
    out = root.attributes.get("output.value")
    if isinstance(out, str):
        return out
    llm = [s for s in sorted(trace.spans, key=lambda s: s.end) if s.kind == "LLM"
           and isinstance(s.attributes.get("output.value"), str)]
    return str(llm[-1].attributes["output.value"]) if llm else None


def load_traces(path: str | Path, lenient: Leniency | None = None) -> OutputsSet:
    """The traces of ``path`` as a system's logged outputs: one question a trace (its id
    the trace id), its answer, its contexts (every hop's documents in span order) and its
    latency. A trace without a root span or without a question is left out, counted."""
    lenient = lenient or Leniency()
    samples: list[Sample] = []
    outputs: dict[str, Output] = {}
    for trace in read_traces(path, lenient):
        root = trace.root()
        if root is not None and root.parent_id:  # its parent is not in the trace
            _warn(lenient, "traces whose root span is missing (orphan spans): the earliest "
                  "orphan taken as the root", f"trace {trace.trace_id}",
                  "the root span is missing")
        question = None if root is None else root.attributes.get("input.value")
        if root is None or not isinstance(question, str) or not question.strip():
            _warn(lenient, "traces without a question (no input.value on the root span): "
                  "left out", f"trace {trace.trace_id}", "no input.value on the root span")
            continue
        hops = trace.hops()
        if any(not docs for _, docs in hops):
            _warn(lenient, "retriever spans without documents", f"trace {trace.trace_id}",
                  "a retriever span without documents")
        contexts = tuple(c for _, docs in hops for c in docs)
        latency = (root.end - root.start) / 1e9 if root.end > root.start else None
        samples.append(Sample(trace.trace_id, question, GroundTruth()))
        outputs[trace.trace_id] = Output(_answer(trace, root), contexts, latency)
    if not samples:
        raise DataError("no trace with a question (a root span with input.value)",
                        file=str(path))
    corpus = contexts_corpus(outputs.values(), path)
    name = Path(path).name.split(".")[0] or "traces"
    dataset = Dataset(name, str(path), "traces", tuple(samples), corpus, "whole",
                      warnings=tuple(lenient.messages()))
    return OutputsSet(dataset, outputs)
