"""Trace ingest and ``ragmark monitor`` speed (issue 22).

1. OTLP JSON spans parsed per second: ragmark's reader (``ragmark.data.traces``:
   msgspec's typed structs, a JSON Lines file decoded in one pass) against the anchor, the official
   ``opentelemetry-proto`` classes (``google.protobuf.json_format.Parse`` into an
   ``ExportTraceServiceRequest``), on the same file, in the same run; the ratio printed.
   The file: export requests of 500 traces each, every trace a chain, a retriever with
   five documents, a reranker with three and an LLM span (4 spans), attributes as the
   OpenInference conventions write them. Goal: >= 50,000 spans/s.
2. ``ragmark monitor`` over 10,000 new records with the cheap metrics (goal < 10 s), and
   again with nothing new (goal < 2 s): a JSONL log of outputs, and the same records as
   a folder of traces.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from _env import RESULTS, header_lines, machine_info, md_table, text_table, write_results

DISTS = ("ragmark", "msgspec", "orjson", "protobuf", "opentelemetry-proto")
WORDS = ("bm25", "ranks", "documents", "by", "term", "frequency", "and", "inverse",
         "document", "a", "reranker", "reorders", "candidate", "passages", "with",
         "stronger", "model", "dense", "retrievers", "embed", "queries", "vectors")


def _text(i: int, n: int) -> str:
    return " ".join(WORDS[(i * 7 + k * 3) % len(WORDS)] for k in range(n))


def _attr(key: str, value: object) -> dict:
    if isinstance(value, str):
        return {"key": key, "value": {"stringValue": value}}
    if isinstance(value, float):
        return {"key": key, "value": {"doubleValue": value}}
    return {"key": key, "value": {"intValue": str(value)}}


def _span(t: int, s: int, parent: int | None, name: str, attrs: list[dict]) -> dict:
    out = {"traceId": f"{t:032x}", "spanId": f"{t * 8 + s + 1:016x}", "name": name,
           "kind": 1, "startTimeUnixNano": str(1_700_000_000_000_000_000 + t * 10_000 + s),
           "endTimeUnixNano": str(1_700_000_000_000_000_000 + t * 10_000 + 9_000 - s),
           "attributes": attrs, "status": {}}
    if parent is not None:
        out["parentSpanId"] = f"{t * 8 + parent + 1:016x}"
    return out


def _docs(prefix: str, t: int, n: int, words: int) -> list[dict]:
    out = []
    for j in range(n):
        p = f"{prefix}.{j}.document."
        out += [_attr(p + "id", f"d{(t + j) % 5000}"), _attr(p + "score", 1.0 / (j + 1))]
        if words:
            out.append(_attr(p + "content", _text(t + j, words)))
    return out


def trace(t: int, words: int = 40) -> list[dict]:
    """One question's four spans, as the OTLP JSON encoding writes them; each retrieved
    document with ``words`` words of content (0: ids and scores only)."""
    kind = "openinference.span.kind"
    return [
        _span(t, 0, None, "rag", [_attr(kind, "CHAIN"), _attr("input.value", _text(t, 9)),
                                  _attr("output.value", _text(t + 1, 25)),
                                  _attr("feedback", t % 2)]),
        _span(t, 1, 0, "retrieve", [_attr(kind, "RETRIEVER"),
                                    *_docs("retrieval.documents", t, 5, words)]),
        _span(t, 2, 0, "rerank", [_attr(kind, "RERANKER"),
                                  *_docs("reranker.output_documents", t, 3, words)]),
        _span(t, 3, 0, "llm", [_attr(kind, "LLM"), _attr("llm.token_count.prompt", 900),
                               _attr("llm.token_count.completion", 60),
                               _attr("llm.cost.total", 0.0011),
                               _attr("output.value", _text(t + 1, 25))]),
    ]


def write_traces(path: Path, n_traces: int, per_request: int = 500, words: int = 40) -> int:
    spans = 0
    with path.open("w", encoding="utf-8") as f:
        for a in range(0, n_traces, per_request):
            batch = [s for t in range(a, min(a + per_request, n_traces))
                     for s in trace(t, words)]
            spans += len(batch)
            f.write(json.dumps({"resourceSpans": [{"resource": {"attributes": []},
                                                   "scopeSpans": [{"scope": {"name": "app"},
                                                                   "spans": batch}]}]}) + "\n")
    return spans


def parse_rates(path: Path, spans: int) -> tuple[float, float]:
    """(ragmark spans/s, official json_format spans/s), best of three."""
    from google.protobuf import json_format
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    from ragmark.data.leniency import Leniency
    from ragmark.data.traces import read_traces

    ours, theirs = [], []
    lines = path.read_text(encoding="utf-8").splitlines()
    for _ in range(3):
        t = time.perf_counter()
        got = read_traces(path, Leniency())
        ours.append(time.perf_counter() - t)
        assert sum(len(tr.spans) for tr in got) == spans
        t = time.perf_counter()
        for line in lines:
            json_format.Parse(line, ExportTraceServiceRequest())
        theirs.append(time.perf_counter() - t)
    return spans / min(ours), spans / min(theirs)


def monitor_times(folder: Path, n: int) -> list[tuple[str, float, float]]:
    """(source, seconds with n new records, seconds with nothing new)."""
    from ragmark.data.traces import TraceKeys
    from ragmark.monitor.windows import Settings, monitor_once

    log = folder / "outputs.jsonl"
    with log.open("w", encoding="utf-8") as f:
        for i in range(n):
            f.write(json.dumps({"id": f"r{i}", "question": _text(i, 9),
                                "answer": _text(i + 1, 25),
                                "contexts": [_text(i + j, 40) for j in range(3)],
                                "latency_ms": 800 + i % 300, "tokens": 960,
                                "feedback": i % 2}) + "\n")
    traces = folder / "spool"
    traces.mkdir()
    write_traces(traces / "traces.jsonl", n)
    out = []
    for source in (log, traces):
        s = Settings(source=source, history=folder / f"h-{source.name}.sqlite",
                     keys=TraceKeys())
        t = time.perf_counter()
        w = monitor_once(s)
        first = time.perf_counter() - t
        assert w.report is not None and len(w.report.queries) == n, "not every record"
        t = time.perf_counter()
        w = monitor_once(s)
        again = time.perf_counter() - t
        assert w.report is None
        out.append(("JSONL log of outputs" if source == log else "traces folder (OTLP JSON)",
                    first, again))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--traces", type=int, default=25_000, help="traces in the parse test")
    ap.add_argument("--records", type=int, default=10_000, help="records a window")
    ap.add_argument("--output", default=str(RESULTS / "trace_ingest.md"))
    args = ap.parse_args()
    info = machine_info(DISTS)
    os.environ.setdefault("RAGMARK_HOME", tempfile.mkdtemp(prefix="ragmark-bench-"))
    rows = []
    sizes = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for words, what in ((40, "documents with 40 words of content"),
                            (0, "documents as ids and scores")):
            path = folder / f"parse{words}.jsonl"
            spans = write_traces(path, args.traces, words=words)
            mib = path.stat().st_size / 2**20
            sizes.append(f"{mib:.0f} MiB ({what})")
            print(f"parsing {spans:,} spans ({mib:.0f} MiB) ...", file=sys.stderr, flush=True)
            ours, theirs = parse_rates(path, spans)
            rows.append([f"OTLP JSON spans parsed / s, {what} ({mib * 2**20 / spans:,.0f} "
                         "bytes a span)", f"{ours:,.0f}", f"{theirs:,.0f}",
                         f"{ours / theirs:.1f}x", ">= 50,000 / s"])
        print(f"monitor over {args.records:,} records ...", file=sys.stderr, flush=True)
        timed = monitor_times(folder, args.records)
    head = ["measure", "ragmark", "official json_format (anchor)", "ratio", "goal"]
    for source, first, again in timed:
        rows.append([f"monitor, {args.records:,} new records: {source}", f"{first:.2f} s",
                     "-", "-", "< 10 s"])
        rows.append([f"monitor, nothing new: {source}", f"{again:.2f} s", "-", "-", "< 2 s"])
    print(text_table(head, rows))
    lines = header_lines("Trace ingest and monitor speed", info,
                         "python benchmarks/trace_ingest.py " + " ".join(sys.argv[1:]))
    lines += ["", f"Parse: {spans:,} spans in {spans // 2000:,} OTLP JSON export requests of "
              f"500 traces ({' and '.join(sizes)}), 4 spans a trace (a chain with the question "
              "and answer, a retriever of 5 documents, a reranker of 3, an LLM with tokens "
              "and cost) with OpenInference attributes; "
              "ragmark = `ragmark.data.traces.read_traces` (msgspec decoding a JSON Lines "
              "file in one pass into typed structs, then one Span with its attribute dict "
              "a span, grouped by trace), anchor = `json_format.Parse` into the official "
              "`ExportTraceServiceRequest` (no grouping); best of 3. Monitor: "
              "`ragmark.monitor.windows.monitor_once` with the default cheap metrics, "
              "recording the window and the cursor in a fresh history, then again with "
              "nothing new.", ""]
    lines += md_table(head, rows)
    rates = [float(r[1].replace(",", "")) for r in rows if r[0].startswith("OTLP JSON")]
    lines += ["", "Goals: parse >= 50,000 spans/s " + (
        "met" if min(rates) >= 50_000 else
        f"NOT met on this machine ({min(rates):,.0f} to {max(rates):,.0f} spans/s; the "
        "reader is {:.0f}x the official parser, and the time goes to building the Python "
        "objects of every attribute: msgspec decoding into structs, then one dict per "
        "span)".format(min(rates) / float(rows[0][2].replace(",", ""))))
              + "; monitor goals " + ("met." if all(
                  float(r[1].split()[0]) < (10 if "new records" in r[0] else 2)
                  for r in rows if r[0].startswith("monitor")) else "NOT met."), ""]
    write_results(Path(args.output), lines)


if __name__ == "__main__":
    main()
