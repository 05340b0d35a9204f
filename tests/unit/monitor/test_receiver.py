"""The OTLP/HTTP receiver (issue 22): an application instrumented with the real
OpenTelemetry SDK exports through the real OTLP/HTTP exporter, pointed at the receiver by
``OTEL_EXPORTER_OTLP_ENDPOINT`` alone; ``ragmark monitor`` evaluates the spool, which
loads as the same spans written as an OTLP JSON file do. Hostile input gets a 4xx or a
counted warning, never a stuck receiver; a killed receiver loses no acknowledged span."""

from __future__ import annotations

import gzip
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import zlib

import httpx
import pytest
from openinference.semconv.trace import (
    DocumentAttributes,
    OpenInferenceSpanKindValues,
    SpanAttributes,
)
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceResponse,
)
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from support.cli import run_cli
from support.otlp import otlp_json

from ragmark.data.traces import load_traces
from ragmark.monitor.receiver import make_server

KIND = SpanAttributes.OPENINFERENCE_SPAN_KIND
P1 = "BM25 ranks documents by term frequency and inverse document frequency."
P2 = "A reranker reorders the candidate passages with a stronger model."


@pytest.fixture
def receiver(tmp_path):
    spool = tmp_path / "spool"
    server, sp = make_server("127.0.0.1:0", spool, max_body=1024 * 1024)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02},
                              daemon=True)
    thread.start()
    port = server.server_address[1]
    yield f"http://127.0.0.1:{port}", spool
    server.shutdown()
    server.server_close()
    sp.close()


def _app(tracer, n: int) -> None:
    """A RAG application: n questions, each a chain with a retriever and an LLM span."""
    for i in range(n):
        with tracer.start_as_current_span("rag") as root:
            root.set_attribute(KIND, OpenInferenceSpanKindValues.CHAIN.value)
            root.set_attribute(SpanAttributes.INPUT_VALUE, f"What does BM25 rank? ({i})")
            root.set_attribute("feedback", i % 2 == 0)
            with tracer.start_as_current_span("retrieve") as r:
                r.set_attribute(KIND, OpenInferenceSpanKindValues.RETRIEVER.value)
                for j, (doc, text) in enumerate([("d1", P1), ("d2", P2)]):
                    p = f"{SpanAttributes.RETRIEVAL_DOCUMENTS}.{j}."
                    r.set_attribute(p + DocumentAttributes.DOCUMENT_ID, doc)
                    r.set_attribute(p + DocumentAttributes.DOCUMENT_CONTENT, text)
            with tracer.start_as_current_span("llm") as llm:
                llm.set_attribute(KIND, OpenInferenceSpanKindValues.LLM.value)
                llm.set_attribute(SpanAttributes.LLM_TOKEN_COUNT_TOTAL, 40 + i)
            root.set_attribute(SpanAttributes.OUTPUT_VALUE, "BM25 ranks documents")


def test_the_sdk_exports_to_the_receiver_and_monitor_evaluates_the_spool(
        receiver, tmp_path, monkeypatch, capsys):
    url, spool = receiver
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", url)  # the application's one change
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
    kept = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(kept))
    _app(provider.get_tracer("rag-app"), 4)
    provider.shutdown()
    lines = [json.loads(x) for f in spool.glob("*.jsonl") for x in f.read_text().splitlines()]
    assert len(lines) == 12  # one export request a span (SimpleSpanProcessor)
    # the spool loads as the same spans written as one OTLP JSON file
    file = tmp_path / "same.json"
    file.write_text(json.dumps(otlp_json(kept.get_finished_spans())), encoding="utf-8")
    a, b = load_traces(spool), load_traces(file)
    assert [s.question for s in a.dataset.samples] == [s.question for s in b.dataset.samples]
    assert a.outputs == b.outputs
    assert [o.facts["tokens"] for o in a.outputs.values()] == [40.0, 41.0, 42.0, 43.0]
    out_json = tmp_path / "w.json"
    code, out, err = run_cli(["monitor", str(spool), "--output", str(out_json)], capsys)
    assert code == 0, err
    w = json.loads(out_json.read_text())
    assert w["records"] == 4
    assert w["metrics"]["feedback"] == 0.5 and w["metrics"]["tokens"] == 41.5
    assert w["metrics"]["empty_retrieval"] == 0.0
    code, out, _ = run_cli(["monitor", str(spool)], capsys)
    assert code == 0 and "no new record" in out


def test_json_gzip_partial_success_and_hostile_bodies(receiver, tmp_path, capsys):
    url, spool = receiver
    spans = [{"traceId": "ab" * 16, "spanId": "cd" * 8, "name": "rag",
              "startTimeUnixNano": "1", "endTimeUnixNano": "2",
              "attributes": [{"key": "input.value", "value": {"stringValue": "q?"}}]},
             {"name": "no ids"}]
    body = {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}
    with httpx.Client(base_url=url, timeout=10) as c:
        r = c.post("/v1/traces", content=gzip.compress(json.dumps(body).encode()),
                   headers={"Content-Type": "application/json", "Content-Encoding": "gzip"})
        assert r.status_code == 200
        assert r.json()["partialSuccess"]["rejectedSpans"] == 1
        # protobuf that is not protobuf; JSON of the wrong shape; not JSON
        r = c.post("/v1/traces", content=b"\xff\x00garbage",
                   headers={"Content-Type": "application/x-protobuf"})
        assert r.status_code == 400
        r = c.post("/v1/traces", json={"resourceSpans": "many"})
        assert r.status_code == 400 and "resourceSpans" in r.json()["message"]
        r = c.post("/v1/traces", json={"resourceSpans": [{"scopeSpans": [{"spans": 3}]}]})
        assert r.status_code == 400
        r = c.post("/v1/traces", content=b"{not json",
                   headers={"Content-Type": "application/json"})
        assert r.status_code == 400
        # over the cap (1 MiB here), as announced and once inflated; the announced one is
        # answered before the body is sent (a client that pushes all of it anyway may
        # see the connection reset after the 413 instead: seen once in CI)
        port = int(url.rpartition(":")[2])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
            raw.sendall(f"POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                        "Content-Type: application/json\r\nContent-Length: "
                        f"{2 * 1024 * 1024}\r\n\r\n".encode() + b"x" * 1000)
            assert raw.recv(64).startswith(b"HTTP/1.1 413")
        bomb = gzip.compress(b" " * (8 * 1024 * 1024))
        r = c.post("/v1/traces", content=bomb, headers={
            "Content-Type": "application/json", "Content-Encoding": "gzip"})
        assert r.status_code == 413
        r = c.post("/v1/metrics", json={})
        assert r.status_code == 404
        # a refused request closes its connection and says so, so the client
        # does not send the next request down a socket the server is closing
        assert r.headers.get("connection") == "close"
        # not stuck: a good request still goes through, as protobuf too
        r = c.post("/v1/traces", json=body)
        assert r.status_code == 200
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    kept = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(kept))
    _app(provider.get_tracer("x"), 1)
    with httpx.Client(base_url=url, timeout=10) as c:
        r = c.post("/v1/traces", content=encode_spans(kept.get_finished_spans())
                   .SerializeToString(), headers={"Content-Type": "application/x-protobuf"})
    assert r.status_code == 200
    assert not ExportTraceServiceResponse.FromString(r.content).HasField("partial_success")
    oset = load_traces(spool)
    assert len(oset.dataset.samples) == 2  # the JSON trace (twice the same id) and the app's


def test_a_huge_attribute_is_received_and_monitored(tmp_path, capsys):
    spool = tmp_path / "spool"
    server, sp = make_server("127.0.0.1:0", spool)  # the default cap, 16 MiB
    threading.Thread(target=server.serve_forever, daemon=True).start()
    big = "word " * (2 * 1024 * 1024)  # 10 MiB
    body = {"resourceSpans": [{"scopeSpans": [{"spans": [{
        "traceId": "01" * 16, "spanId": "02" * 8, "name": "rag", "startTimeUnixNano": "1",
        "endTimeUnixNano": "2", "attributes": [
            {"key": "input.value", "value": {"stringValue": "q?"}},
            {"key": "output.value", "value": {"stringValue": big}}]}]}]}]}
    try:
        r = httpx.post(f"http://127.0.0.1:{server.server_address[1]}/v1/traces", json=body,
                       timeout=30)
        assert r.status_code == 200
    finally:
        server.shutdown()
        server.server_close()
        sp.close()
    code, out, err = run_cli(["monitor", str(spool), "--metrics", "refusal,empty_retrieval"],
                             capsys)
    assert code == 0, err
    assert "window 1" in out


def test_binding_beyond_loopback_needs_a_token(tmp_path, capsys):
    code, _, err = run_cli(["monitor", "--listen", "0.0.0.0:0", "--spool",
                            str(tmp_path / "s")], capsys)
    assert code == 2 and "--token" in err
    for blank in ("", "  "):  # no token at all (issue 33, item 4), on any bind
        for host in ("0.0.0.0", "127.0.0.1"):
            code, _, err = run_cli(["monitor", "--listen", f"{host}:0", "--token", blank,
                                    "--spool", str(tmp_path / "s")], capsys)
            assert code == 2 and "--token is empty or blank" in err
    spool = tmp_path / "spool"
    server, sp = make_server("127.0.0.1:0", spool, token="s3cret")
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1/traces"
        assert httpx.post(url, json={"resourceSpans": []}).status_code == 401
        assert httpx.post(url, json={"resourceSpans": []},
                          headers={"Authorization": "Bearer s3cret"}).status_code == 200
    finally:
        server.shutdown()
        server.server_close()
        sp.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_killed_receiver_loses_no_acknowledged_span(tmp_path):
    spool = tmp_path / "spool"
    port = _free_port()
    p = subprocess.Popen([sys.executable, "-m", "ragmark", "monitor", "--listen",
                          f"127.0.0.1:{port}", "--spool", str(spool)], env={**os.environ},
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}/v1/traces"
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            httpx.post(url, json={"resourceSpans": []}, timeout=1)
            break
        except httpx.TransportError:
            time.sleep(0.1)
    acked = 0
    with httpx.Client(timeout=10) as c:
        for i in range(50):
            span = {"traceId": f"{i:032x}", "spanId": f"{i + 1:016x}", "name": "rag",
                    "startTimeUnixNano": "1", "endTimeUnixNano": "2", "attributes": [
                        {"key": "input.value", "value": {"stringValue": f"q{i}?"}}]}
            r = c.post(url, json={"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]})
            acked += r.status_code == 200
    p.send_signal(signal.SIGKILL)
    p.communicate(timeout=30)
    assert acked == 50
    oset = load_traces(spool)
    assert len(oset.dataset.samples) == 50  # every acknowledged span is on disk


def test_a_trace_waits_for_its_root_span(tmp_path, capsys):
    """Children arrive first (the SDK exports spans as they end): the trace is evaluated
    in the window after its root arrives, once."""
    spool = tmp_path / "spool"
    spool.mkdir()
    tid = "0a" * 16
    t0 = time.time_ns()  # spans that ended just now: within --root-wait
    child = {"traceId": tid, "spanId": "01" * 8, "parentSpanId": "02" * 8, "name": "ret",
             "startTimeUnixNano": str(t0 + 1), "endTimeUnixNano": str(t0 + 2), "attributes": [
                 {"key": KIND, "value": {"stringValue": "RETRIEVER"}},
                 {"key": "retrieval.documents.0.document.content",
                  "value": {"stringValue": P1}}]}
    root = {"traceId": tid, "spanId": "02" * 8, "name": "rag", "startTimeUnixNano": str(t0),
            "endTimeUnixNano": str(t0 + 3), "attributes": [
                {"key": "input.value", "value": {"stringValue": "q?"}},
                {"key": "output.value", "value": {"stringValue": "BM25 ranks documents"}}]}
    f = spool / "a.jsonl"

    def add(span: dict) -> None:
        with f.open("a") as fh:
            fh.write(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]})
                     + "\n")

    add(child)
    code, out, _ = run_cli(["monitor", str(spool)], capsys)
    assert code == 0 and "1 trace waits for its root span" in out and "no new record" in out
    add(root)
    code, out, _ = run_cli(["monitor", str(spool), "--output", str(tmp_path / "w.json")],
                           capsys)
    assert code == 0
    w = json.loads((tmp_path / "w.json").read_text())
    assert w["records"] == 1 and w["metrics"]["empty_retrieval"] == 0.0
    code, out, _ = run_cli(["monitor", str(spool)], capsys)
    assert "no new record" in out and "wait for their root" not in out



def _raw(url: str, head: str, body: bytes) -> bytes:
    """Send a request by hand (headers as given, then ``body``), close the sending side
    as a client that dies mid-body does, and return what the receiver answered."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.sendall(head.encode() + b"\r\n\r\n" + body)
        s.shutdown(socket.SHUT_WR)
        got = b""
        while chunk := s.recv(65536):
            got += chunk
    return got


def test_truncated_nested_misencoded_and_repeated_bodies(receiver, tmp_path, capsys):
    """Issue 33, items 1-3, 19: a body shorter than its Content-Length is never
    acknowledged and nothing of it spooled, though its prefix parses as protobuf; JSON
    nested 200,000 deep is a 400, not a RecursionError; deflate is a 415 naming what is
    read; GET is a 405 with Allow; a batch sent twice (an exporter's retry) is spooled
    twice and counted once."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    url, spool = receiver
    kept = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(kept))
    _app(provider.get_tracer("x"), 9)  # 27 spans
    # one request, a ResourceSpans a span (protobuf's repeated fields concatenate)
    full = b"".join(encode_spans([sp]).SerializeToString() for sp in kept.get_finished_spans())
    from google.protobuf.message import DecodeError
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    def parses(prefix: bytes) -> bool:
        try:
            return bool(ExportTraceServiceRequest.FromString(prefix).resource_spans)
        except DecodeError:
            return False

    # a prefix of about the share (14,763 of 31,821 bytes) that parses as a
    # valid, shorter export: only the Content-Length tells it is half a request
    half = next(full[:n] for n in range(len(full) * 14763 // 31821, 0, -1)
                if parses(full[:n]))
    # the client stops sending and closes: it is gone, so no 200 can reach it, and
    # nothing of its body is spooled (an answer, if any, is a refusal)
    answer = _raw(url, f"POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                       f"application/x-protobuf\r\nContent-Length: {len(full)}", half)
    assert answer == b"" or answer.startswith(b"HTTP/1.1 400")
    answer = _raw(url, "POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                       "application/json\r\nContent-Length: 1000", b'{"resourceSpans": []}')
    assert answer == b"" or answer.startswith(b"HTTP/1.1 400")
    assert not any(f.read_text() for f in spool.glob("*.jsonl"))  # nothing spooled
    with httpx.Client(base_url=url, timeout=30) as c:
        r = c.post("/v1/traces", content=b"[" * 200_000,
                   headers={"Content-Type": "application/json"})
        assert r.status_code == 400 and "nested" in r.json()["message"]
        r = c.post("/v1/traces", content=zlib.compress(b'{"resourceSpans": []}'),
                   headers={"Content-Type": "application/json", "Content-Encoding": "deflate"})
        assert r.status_code == 415 and "gzip" in r.json()["message"]
        r = c.get("/v1/traces")
        assert r.status_code == 405 and r.headers["allow"] == "POST"
        for _ in range(2):  # the retry of a batch whose acknowledgement was lost
            r = c.post("/v1/traces", content=full,
                       headers={"Content-Type": "application/x-protobuf"})
            assert r.status_code == 200
    assert sum(len(f.read_text().splitlines()) for f in spool.glob("*.jsonl")) == 2
    code, out, err = run_cli(["monitor", str(spool), "--output", str(tmp_path / "w.json")],
                             capsys)
    assert code == 0, err
    w = json.loads((tmp_path / "w.json").read_text())
    assert w["records"] == 9 and w["metrics"]["tokens"] == 44.0  # 40..48 once each


def test_without_the_protobuf_reader_the_receiver_does_not_start(tmp_path, capsys,
                                                                 monkeypatch):
    """Issue 33, item 13: the SDK's default exporter sends protobuf; a receiver that
    cannot read it refuses to start, naming the extra, instead of dropping every
    export with a traceback."""
    monkeypatch.setitem(sys.modules, "opentelemetry.proto.collector.trace.v1", None)
    code, _, err = run_cli(["monitor", "--listen", "127.0.0.1:0", "--spool",
                            str(tmp_path / "s")], capsys)
    assert code == 2 and "ragmark-eval[otel]" in err and "Traceback" not in err


def test_each_refusal_is_told_with_its_reason_and_a_count(tmp_path):
    """Issue 33, item 13: the receiver's console says why it refused a request."""
    told: list[str] = []
    server, sp = make_server("127.0.0.1:0", tmp_path / "spool", token="s3cret",
                             max_body=1024, say=told.append)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1/traces"
    try:
        with httpx.Client(timeout=10) as c:
            assert c.post(url, json={"resourceSpans": []}).status_code == 401
            auth = {"Authorization": "Bearer s3cret"}
            assert c.post(url, content=b"x" * 4096, headers={
                **auth, "Content-Type": "application/json"}).status_code == 413
            assert c.get(url, headers=auth).status_code == 405
            r = c.post(url, json={"resourceSpans": []}, headers=auth)
            assert r.status_code == 200
    finally:
        server.shutdown()
        server.server_close()
        sp.close()
    assert told == [
        "refused (401) from 127.0.0.1: missing or wrong bearer token [1 refused so far]",
        "refused (413) from 127.0.0.1: the body is over the cap of 1024 bytes "
        "(Content-Length 4096) [2 refused so far]",
        "refused (405) from 127.0.0.1: GET is not allowed: POST /v1/traces "
        "[3 refused so far]"]
