"""Traces in (issue 22, first step): OTLP JSON as OpenTelemetry writes it, from spans of
the real SDK named and attributed with the OpenInference conventions, scored by
``ragmark run --traces`` as logged outputs, one question a trace."""

from __future__ import annotations

import gzip
import json

import pytest
from openinference.semconv.trace import (
    DocumentAttributes,
    OpenInferenceSpanKindValues,
    SpanAttributes,
)
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from support.cli import run_cli
from support.otlp import otlp_json

from ragmark.data.leniency import Leniency
from ragmark.data.traces import NO_QUESTION, load_traces
from ragmark.errors import DataError

KIND = SpanAttributes.OPENINFERENCE_SPAN_KIND
DOCS = SpanAttributes.RETRIEVAL_DOCUMENTS
P1 = "BM25 ranks documents by term frequency and inverse document frequency."
P2 = "A reranker reorders the candidate passages with a stronger model."
P3 = "Dense retrievers embed queries and passages into vectors."


def _retrieve(tracer, docs):
    with tracer.start_as_current_span("retrieve") as s:
        s.set_attribute(KIND, OpenInferenceSpanKindValues.RETRIEVER.value)
        for i, (doc_id, text, score) in enumerate(docs):
            prefix = f"{DOCS}.{i}."
            s.set_attribute(prefix + DocumentAttributes.DOCUMENT_ID, doc_id)
            s.set_attribute(prefix + DocumentAttributes.DOCUMENT_CONTENT, text)
            s.set_attribute(prefix + DocumentAttributes.DOCUMENT_SCORE, score)


def _app_spans():
    """What an instrumented RAG application emits: a one-hop question answered on its
    root span, a two-hop question answered by its LLM span, and a trace without a
    question."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("rag-app")
    with tracer.start_as_current_span("rag") as root:
        root.set_attribute(KIND, OpenInferenceSpanKindValues.CHAIN.value)
        root.set_attribute(SpanAttributes.INPUT_VALUE, "What does BM25 rank?")
        _retrieve(tracer, [("d3", P3, 0.9), ("d1", P1, 0.7)])
        root.set_attribute(SpanAttributes.OUTPUT_VALUE, "Documents, by term frequency.")
    with tracer.start_as_current_span("rag") as root:
        root.set_attribute(KIND, OpenInferenceSpanKindValues.CHAIN.value)
        root.set_attribute(SpanAttributes.INPUT_VALUE, "What does a reranker do?")
        _retrieve(tracer, [("d3", P3, 0.5)])             # hop 1
        _retrieve(tracer, [("d2", P2, 0.8), ("d1", P1, 0.1)])  # hop 2
        with tracer.start_as_current_span("llm") as llm:
            llm.set_attribute(KIND, OpenInferenceSpanKindValues.LLM.value)
            llm.set_attribute(SpanAttributes.OUTPUT_VALUE, "It reorders candidate passages.")
    with tracer.start_as_current_span("health-check"):
        pass
    return exporter.get_finished_spans()


@pytest.fixture
def traces(tmp_path):
    path = tmp_path / "traces.jsonl"
    path.write_text(json.dumps(otlp_json(_app_spans())) + "\n", encoding="utf-8")
    return path


def test_a_trace_is_a_question_with_its_hops_in_span_order(traces, tmp_path):
    lenient = Leniency()
    oset = load_traces(traces, lenient)
    assert [s.question for s in oset.dataset.samples] == ["What does BM25 rank?",
                                                          "What does a reranker do?"]
    first, second = (oset.outputs[s.id] for s in oset.dataset.samples)
    assert first.answer == "Documents, by term frequency."
    assert [(c.id, c.score) for c in first.contexts] == [("d3", 0.9), ("d1", 0.7)]
    assert second.answer == "It reorders candidate passages."  # the LLM span's output
    assert [c.id for c in second.contexts] == ["d3", "d2", "d1"]  # hop 1, then hop 2
    assert first.latency_s is not None and first.latency_s > 0
    assert lenient.count(f"traces without a question ({NO_QUESTION}): left out") == 1
    # the same spans gzipped, in a folder, load alike
    folder = tmp_path / "spool"
    folder.mkdir()
    with gzip.open(folder / "a.json.gz", "wt", encoding="utf-8") as f:
        f.write(traces.read_text(encoding="utf-8"))
    again = load_traces(folder)
    assert [s.question for s in again.dataset.samples] == [
        s.question for s in oset.dataset.samples]


def test_run_scores_traces_against_a_dataset(traces, tmp_path, capsys):
    gt = tmp_path / "set.json"
    gt.write_text(json.dumps([
        {"question": "What does BM25 rank?", "ground_truth_contexts": [P1]},
        {"question": "What does a reranker do?", "ground_truth_contexts": [P2]},
    ]), encoding="utf-8")
    out = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--traces", str(traces), "--dataset", str(gt),
                            "--metrics", "recall@1,recall@2,mrr", "--output", str(out),
                            "--quiet", "--no-history"], capsys)
    assert code == 0, err
    data = json.loads(out.read_text())
    # q1: P1 at rank 2 of [P3, P1]; q2: P2 at rank 2 of [P3, P2, P1] (hops merged)
    assert data["per_query"] == {
        "q1": {"recall@1": 0.0, "recall@2": 1.0, "mrr": 0.5},
        "q2": {"recall@1": 0.0, "recall@2": 1.0, "mrr": 0.5}}
    assert "traces without a question" in err  # the counted warning, told on stderr


def test_odd_traces_are_counted_and_strict_refuses_them(traces, tmp_path, capsys):
    text = traces.read_text(encoding="utf-8")
    broken = tmp_path / "broken.jsonl"
    bad_span = {"resourceSpans": [{"scopeSpans": [{"spans": [{"name": "no ids"}]}]}]}
    broken.write_text(text + json.dumps(bad_span) + "\n" + text[: len(text) // 2] + "\n",
                      encoding="utf-8")
    lenient = Leniency()
    oset = load_traces(broken, lenient)
    assert len(oset.dataset.samples) == 2
    assert lenient.count("spans without a traceId or spanId: left out") == 1
    assert lenient.count("lines that are not JSON (a truncated file?): left out") == 1
    with pytest.raises(DataError, match="an error because of --strict"):
        load_traces(broken, Leniency(strict=True))
    code, _, err = run_cli(["run", "--traces", str(broken), "--strict", "--quiet",
                            "--no-history"], capsys)
    assert code == 2 and "an error because of --strict" in err and "Traceback" not in err
    empty = tmp_path / "none.json"
    empty.write_text(json.dumps({"resourceSpans": []}), encoding="utf-8")
    with pytest.raises(DataError, match="no trace with a question"):
        load_traces(empty)


def test_a_jsonl_file_read_at_once_gives_the_spans_and_lines_of_one_read_by_line(
        traces, tmp_path):
    """A file of well-formed requests is decoded in one pass; the spans, and the line a
    counted warning names, are those of reading it line by line (forced here by a blank
    line, which the one-pass decoder would not count)."""
    from ragmark.data.otlp import NO_IDS, _typed_lines, file_requests

    request = traces.read_text(encoding="utf-8").strip()
    bad_span = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [{"name": "x"}]}]}]})
    at_once, by_line = tmp_path / "once.jsonl", tmp_path / "by_line.jsonl"
    at_once.write_text(f"{request}\n{bad_span}\n{request}\n", encoding="utf-8")
    by_line.write_text(f"{request}\n{bad_span}\n{request}\n\n", encoding="utf-8")
    got = {}
    for path in (at_once, by_line):
        lenient = Leniency()
        requests = list(file_requests(path, lenient))
        got[path.name] = ([(where.rsplit(", ", 1)[1], [(s.trace_id, s.name, s.kind,
                                                         s.attributes) for s in spans])
                           for spans, where in requests],
                          [m.replace(path.name, "F") for m in lenient.messages()])
    assert _typed_lines(at_once.read_bytes(), Leniency(), "F") is not None  # one pass
    assert _typed_lines(by_line.read_bytes(), Leniency(), "F") is None
    assert got["once.jsonl"] == got["by_line.jsonl"]
    places, messages = got["once.jsonl"]
    assert [p for p, _ in places] == ["line 1", "line 2", "line 3"]
    assert len(places[0][1]) == 7 and places[1][1] == []  # 2 + 4 + 1 spans
    assert messages == [f"{NO_IDS}: 1 ({at_once.parent}/F, line 2)"]
