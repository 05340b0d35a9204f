"""The OTLP/HTTP receiver under load (issue 33: the receiver moved onto Starlette and
uvicorn must still take the trace benchmark's load).

100,000 spans (the trace_ingest benchmark's count: traces of 4 spans with OpenInference
attributes, a retriever of 5 documents with 40 words each) are exported as protobuf
requests of 500 spans by 4 concurrent clients (httpx, keep-alive), to the receiver as it
is now (``ragmark.monitor.receiver``: Starlette on uvicorn) and, in the same run, to the
anchor: the receiver as it was before the move (the standard library's threading HTTP
server, its handler read from git at commit ANCHOR), both spooling to disk with an fsync
a request, as they do in production. Reported: spans acknowledged a second, requests a
second, and that every span is in the spool once.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from _env import (
    PROJECT_ROOT,
    RESULTS,
    header_lines,
    machine_info,
    md_table,
    text_table,
    write_results,
)

ANCHOR = "26ea133"
"""The last commit whose receiver ran on the standard library's http.server."""
DISTS = ("ragmark", "starlette", "uvicorn", "httpx", "protobuf", "opentelemetry-proto")


def _requests(spans: int, per_request: int) -> list[bytes]:
    """Protobuf export requests of ``per_request`` spans from the real SDK's encoder."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("load")
    words = "bm25 ranks documents by term frequency and inverse document frequency " * 4
    for t in range(spans // 4):
        with tracer.start_as_current_span("rag") as root:
            root.set_attribute("openinference.span.kind", "CHAIN")
            root.set_attribute("input.value", f"question {t}?")
            root.set_attribute("output.value", "an answer")
            with tracer.start_as_current_span("retrieve") as r:
                r.set_attribute("openinference.span.kind", "RETRIEVER")
                for j in range(5):
                    p = f"retrieval.documents.{j}.document."
                    r.set_attribute(p + "id", f"d{(t + j) % 5000}")
                    r.set_attribute(p + "content", words)
            with tracer.start_as_current_span("rerank") as r:
                r.set_attribute("openinference.span.kind", "RERANKER")
            with tracer.start_as_current_span("llm") as llm:
                llm.set_attribute("openinference.span.kind", "LLM")
                llm.set_attribute("llm.token_count.total", 40)
    done = exporter.get_finished_spans()
    return [encode_spans(done[a : a + per_request]).SerializeToString()
            for a in range(0, len(done), per_request)]


def _anchor_module(folder: Path) -> object:
    """The receiver module as it was at ANCHOR (the standard library's server)."""
    text = subprocess.run(["git", "show", f"{ANCHOR}:src/ragmark/monitor/receiver.py"],
                          cwd=PROJECT_ROOT, capture_output=True, text=True, check=True).stdout
    path = folder / "receiver_stdlib.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location("receiver_stdlib", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _load(module: object, bodies: list[bytes], spool: Path, clients: int) -> tuple[float, int]:
    """Seconds to post every body (``clients`` at a time) and the spans spooled."""
    import httpx

    server, sp = module.make_server("127.0.0.1:0", spool)  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1/traces"
    time.sleep(0.5)
    headers = {"Content-Type": "application/x-protobuf"}

    def post(part: list[bytes]) -> None:
        with httpx.Client(timeout=60) as c:
            for body in part:
                r = c.post(url, content=body, headers=headers)
                r.raise_for_status()

    parts = [bodies[i::clients] for i in range(clients)]
    t0 = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(post, parts))
    took = time.perf_counter() - t0
    server.shutdown()
    server.server_close()
    sp.close()
    from ragmark.data.leniency import Leniency
    from ragmark.data.traces import read_traces

    spooled = sum(len(t.spans) for t in read_traces(spool, Leniency()))
    return took, spooled


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--spans", type=int, default=100_000)
    ap.add_argument("--per-request", type=int, default=500)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--output", default=str(RESULTS / "receiver_load.md"))
    args = ap.parse_args()
    info = machine_info(DISTS)
    print(f"encoding {args.spans:,} spans ...", file=sys.stderr, flush=True)
    bodies = _requests(args.spans, args.per_request)
    mib = sum(map(len, bodies)) / 2**20
    from ragmark.monitor import receiver

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        results = {}
        for name, module in (("ragmark (Starlette + uvicorn)", receiver),
                             (f"anchor: http.server receiver ({ANCHOR})",
                              _anchor_module(folder))):
            print(f"posting to {name} ...", file=sys.stderr, flush=True)
            took, spooled = _load(module, bodies, folder / name.split()[0], args.clients)
            results[name] = took
            rows.append([name, f"{args.spans / took:,.0f}", f"{len(bodies) / took:,.1f}",
                         f"{took:.2f} s", f"{spooled:,} of {args.spans:,}"])
    ours, theirs = results.values()
    head = ["receiver", "spans acknowledged / s", "requests / s", "time", "spans spooled"]
    print(text_table(head, rows))
    print(f"ratio (ragmark / anchor, spans/s): {theirs / ours:.2f}x")
    lines = header_lines("OTLP/HTTP receiver under load", info,
                         "python benchmarks/receiver_load.py " + " ".join(sys.argv[1:]))
    lines += ["", f"{args.spans:,} spans in {len(bodies)} protobuf export requests of "
              f"{args.per_request} ({mib:.0f} MiB), {args.clients} concurrent keep-alive "
              "clients; each request spooled as a line of OTLP JSON with an fsync before it "
              "is acknowledged.", ""]
    lines += md_table(head, rows)
    lines += ["", f"Ratio, ragmark / anchor (spans a second): {theirs / ours:.2f}x.", ""]
    write_results(Path(args.output), lines)


if __name__ == "__main__":
    main()
