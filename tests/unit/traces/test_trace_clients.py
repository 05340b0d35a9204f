"""Traces from real clients (issue 33, items 1, 7-11, 15): a LangChain app instrumented
by ``openinference-instrumentation-langchain`` whose retriever calls two child
retrievers (the EnsembleRetriever pattern), a LlamaIndex query engine over files built
in the same process under ``openinference-instrumentation-llama-index``, spans received
twice, a root whose parent is remote, and a bare retriever call beside the app's trace.
Each test fails on the main of before the issue."""

from __future__ import annotations

import json
import shutil
import time

import pytest
from openinference.semconv.trace import OpenInferenceSpanKindValues, SpanAttributes
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags
from support.beir import tiny_beir
from support.cli import run_cli
from support.otlp import otlp_json, recorder

from ragmark.data.leniency import Leniency
from ragmark.data.traces import (
    DUPLICATE_SPANS,
    NOT_QUESTIONS,
    RETRIEVAL_ONLY,
    TraceKeys,
    load_traces,
)

KIND = SpanAttributes.OPENINFERENCE_SPAN_KIND
ORPHANS = "traces whose root span is missing (orphan spans): the earliest orphan taken as the root"


def _provider():
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


def _instrumented(module: str, name: str):
    """(exporter) with a real OpenInference instrumentor on, off after the test."""
    inst = getattr(pytest.importorskip(module), name)()
    provider, exporter = _provider()
    inst.instrument(tracer_provider=provider)
    yield exporter
    inst.uninstrument()


@pytest.fixture
def langchain_traces():
    pytest.importorskip("langchain_core")
    yield from _instrumented("openinference.instrumentation.langchain", "LangChainInstrumentor")


def _ensemble_app():
    """A chain whose retriever interleaves two child retrievers' documents, as
    LangChain's EnsembleRetriever does; documents named and scored in their metadata."""
    from langchain_core.documents import Document
    from langchain_core.language_models.fake import FakeListLLM
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import PromptTemplate
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.runnables import RunnablePassthrough

    class Child(BaseRetriever):
        docs: list

        def _get_relevant_documents(self, query, *, run_manager):
            return [Document(page_content=t, metadata={"id": i, "score": s})
                    for i, t, s in self.docs]

    class Ensemble(BaseRetriever):
        children: list

        def _get_relevant_documents(self, query, *, run_manager):
            got = [c.invoke(query, config={"callbacks": run_manager.get_child()})
                   for c in self.children]
            return [got[0][0], got[1][0], got[0][1]]  # interleaved, the top 3

    words = Child(docs=[("heapq", "heapq is a heap queue", 0.9),
                        ("bisect", "bisect keeps lists sorted", 0.8),
                        ("array", "array holds typed values", 0.1),
                        ("queue", "queue is for threads", 0.05)])
    vectors = Child(docs=[("sorted", "sorted returns a new list", 0.7),
                          ("heapq", "heapq is a heap queue", 0.6),
                          ("deque", "deque is a double-ended queue", 0.5),
                          ("list", "list is mutable", 0.4)])
    retriever = Ensemble(children=[words, vectors])
    llm = FakeListLLM(responses=["A heap queue."])
    chain = ({"context": retriever, "question": RunnablePassthrough()}
             | PromptTemplate.from_template("{context}\n{question}") | llm | StrOutputParser())
    return chain, retriever


def test_a_nested_langchain_retriever_is_one_hop_named_by_its_metadata(
        langchain_traces, tmp_path, capsys):
    chain, retriever = _ensemble_app()
    assert chain.invoke("What is heapq?") == "A heap queue."
    retriever.invoke("What is bisect?")  # a bare retriever call: no answer
    path = tmp_path / "lc.json"
    path.write_text(json.dumps(otlp_json(langchain_traces.get_finished_spans())))
    lenient = Leniency()
    oset = load_traces(path, lenient)
    by_q = {s.question: oset.outputs[s.id] for s in oset.dataset.samples}
    app = by_q["What is heapq?"]
    assert app.answer == "A heap queue."
    # the outer retriever's 3 documents, not 3 + 4 + 4 in three hops
    assert app.hops == (("Ensemble", 3),)
    assert [(c.id, c.score) for c in app.contexts] == [
        ("heapq", 0.9), ("sorted", 0.7), ("bisect", 0.8)]
    bare = by_q["What is bisect?"]
    assert bare.answer is None and bare.hops == (("Ensemble", 3),)  # its output is no answer
    assert lenient.messages() == []

    # scored by id against a BEIR set: heapq at rank 1, sorted at 2
    beir = tiny_beir(tmp_path / "beir", {"a": "What is heapq?", "b": "What is bisect?"},
                     {"a": {"heapq": 1, "sorted": 1}, "b": {"bisect": 1}},
                     docs={"heapq": "heapq is a heap queue", "sorted": "sorted returns",
                           "bisect": "bisect keeps lists sorted"})
    out = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--traces", str(path), "--dataset", str(beir),
                            "--metrics", "mrr,recall@2,refusal", "--output", str(out),
                            "--quiet", "--no-history"], capsys)
    assert code == 0, err
    data = json.loads(out.read_text())
    assert data["per_query"]["a"] == {"mrr": 1.0, "recall@2": 1.0, "refusal": 0.0}
    # the bare call: its retrieval scored, its answer metrics missing with the reason
    assert data["per_query"]["b"]["mrr"] == pytest.approx(1 / 3)
    assert data["per_query"]["b"]["refusal"] is None
    reasons = data["counts"]["refusal"]["reasons"]
    assert any("no answer recorded" in r for r in reasons)


def test_a_bare_retriever_call_beside_the_apps_trace_is_left_out(langchain_traces, tmp_path):
    chain, retriever = _ensemble_app()
    retriever.invoke("What is heapq?")  # first read, but only retrieval
    chain.invoke("What is heapq?")
    path = tmp_path / "lc.json"
    path.write_text(json.dumps(otlp_json(langchain_traces.get_finished_spans())))
    lenient = Leniency()
    oset = load_traces(path, lenient)
    [sample] = oset.dataset.samples
    assert oset.outputs[sample.id].answer == "A heap queue."
    assert lenient.count(RETRIEVAL_ONLY) == 1
    # or chosen by the root's name: only the chain's traces are questions
    only = load_traces(path, Leniency(), TraceKeys().rooted(["RunnableSequence"]))
    assert [only.outputs[s.id].answer for s in only.dataset.samples] == ["A heap queue."]


@pytest.fixture
def llamaindex_traces():
    pytest.importorskip("llama_index.core")
    yield from _instrumented("openinference.instrumentation.llama_index",
                             "LlamaIndexInstrumentor")


FILES = {"heapq.txt": "heapq implements a heap queue, also known as a priority queue.",
         "bisect.txt": "bisect keeps a list in sorted order without sorting it again.",
         "deque.txt": "deque is a double-ended queue with fast appends at both ends."}
ASKED = {"h": "What is a priority queue?", "b": "How to keep a list sorted?",
         "d": "What has fast appends at both ends?"}


def test_a_llamaindex_engine_over_files_is_judged_by_file(llamaindex_traces, tmp_path,
                                                          capsys):
    from llama_index.core import SimpleDirectoryReader, VectorStoreIndex
    from llama_index.core.embeddings import MockEmbedding
    from llama_index.core.llms import MockLLM

    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in FILES.items():
        (docs / name).write_text(text)
    # the index is built in the same process: its chunking and embedding traces too
    index = VectorStoreIndex.from_documents(SimpleDirectoryReader(str(docs)).load_data(),
                                            embed_model=MockEmbedding(embed_dim=8))
    engine = index.as_query_engine(similarity_top_k=2, llm=MockLLM(max_tokens=4))
    about = {"h": "heapq.txt", "b": "bisect.txt", "d": "deque.txt"}
    app_ranks = {}
    for qid, q in ASKED.items():
        files = [n.node.metadata["file_name"] for n in engine.query(q).source_nodes]
        app_ranks[qid] = files.index(about[qid]) + 1 if about[qid] in files else None
    path = tmp_path / "li.json"
    path.write_text(json.dumps(otlp_json(llamaindex_traces.get_finished_spans())))
    lenient = Leniency()
    oset = load_traces(path, lenient)
    assert sorted(s.question for s in oset.dataset.samples) == sorted(ASKED.values())
    assert lenient.count(NOT_QUESTIONS) >= 2  # the index build's traces, left out
    for s in oset.dataset.samples:
        out = oset.outputs[s.id]
        assert out.hops == (("VectorIndexRetriever.retrieve", 2),)  # no empty _retrieve hop
        assert all(c.doc_id in FILES and c.id not in FILES for c in out.contexts)
        assert all(c.score is not None for c in out.contexts)

    beir = tiny_beir(tmp_path / "beir", ASKED, {"h": {"heapq.txt": 1}, "b": {"bisect.txt": 1},
                                                "d": {"deque.txt": 1}}, docs=FILES)
    out = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--traces", str(path), "--dataset", str(beir),
                            "--metrics", "mrr", "--output", str(out), "--quiet",
                            "--no-history"], capsys)
    assert code == 0, err
    got = json.loads(out.read_text())["per_query"]
    # the app's own nodes: the reciprocal rank of the file each question is about
    assert {q: v["mrr"] for q, v in got.items()} == {
        q: (1 / r if r else 0.0) for q, r in app_ranks.items()}

    # the documents named by another key: no id is known, and the note says so
    code, _, err = run_cli(["run", "--traces", str(path), "--dataset", str(beir),
                            "--trace-attribute", "document_id=file_path", "--metrics", "mrr",
                            "--output", str(out), "--quiet", "--no-history",
                            "--include-details"], capsys)
    assert code == 0, err
    notes = json.loads(out.read_text())["notes"]
    assert any("is a corpus document or a ground-truth id" in n for n in notes)
    # and inspect --failures counts them as ids of another kind, not retrieval misses
    code, text, err = run_cli(["inspect", str(out), "--failures", "--json"], capsys)
    assert code == 0, err
    kinds = [f["kind"] for f in json.loads(text)["failures"]]
    assert kinds == ["unknown_ids"] * 3


def _app_trace(tracer, *, remote_parent=None, tokens=55, t0=None):
    """A root, a retriever of 3 documents, an LLM span recording 55 tokens with an inner
    LLM span recording the same call's 55 (LlamaIndex's predict around complete)."""
    ctx = (trace.set_span_in_context(NonRecordingSpan(remote_parent))
           if remote_parent is not None else None)
    t0 = t0 or time.time_ns()
    root = tracer.start_span("rag", context=ctx, start_time=t0)
    root.set_attribute(KIND, OpenInferenceSpanKindValues.CHAIN.value)
    root.set_attribute(SpanAttributes.INPUT_VALUE, "What is heapq?")
    root.set_attribute(SpanAttributes.OUTPUT_VALUE, "A heap queue.")
    inside = trace.set_span_in_context(root)
    ret = tracer.start_span("retrieve", context=inside, start_time=t0 + 1)
    ret.set_attribute(KIND, "RETRIEVER")
    ret.set_attribute(SpanAttributes.INPUT_VALUE, "What is heapq?")
    for i, d in enumerate(["heapq", "bisect", "sorted"]):
        ret.set_attribute(f"retrieval.documents.{i}.document.id", d)
        ret.set_attribute(f"retrieval.documents.{i}.document.content", f"{d} text")
    ret.end(end_time=t0 + 2)
    llm = tracer.start_span("predict", context=inside, start_time=t0 + 3)
    llm.set_attribute(KIND, "LLM")
    llm.set_attribute("llm.token_count.total", tokens)
    inner = tracer.start_span("complete", context=trace.set_span_in_context(llm),
                              start_time=t0 + 3)
    inner.set_attribute(KIND, "LLM")
    inner.set_attribute("llm.token_count.total", tokens)
    inner.end(end_time=t0 + 4)
    llm.end(end_time=t0 + 4)
    root.end(end_time=t0 + 5)


def test_spans_received_twice_are_counted_once(tmp_path, capsys):
    tracer, exporter = recorder()
    _app_trace(tracer)
    folder = tmp_path / "spool"
    folder.mkdir()
    line = json.dumps(otlp_json(exporter.get_finished_spans())) + "\n"
    (folder / "a.jsonl").write_text(line)
    shutil.copy(folder / "a.jsonl", folder / "b.jsonl")  # a spool file copied
    lenient = Leniency(strict=True)  # a retry is ordinary: never an error
    oset = load_traces(folder, lenient)
    [s] = oset.dataset.samples
    out = oset.outputs[s.id]
    assert out.facts["tokens"] == 55  # not 110, nor 220 with the inner LLM span
    assert len(out.contexts) == 3 and out.hops == (("retrieve", 3),)
    assert lenient.count(DUPLICATE_SPANS) == 4
    # the monitor: the same request posted twice is one request's spans
    (folder / "b.jsonl").unlink()
    (folder / "a.jsonl").write_text(line * 2)
    code, _, err = run_cli(["monitor", str(folder), "--history", str(tmp_path / "h.db"),
                            "--output", str(tmp_path / "w.json"), "-q"], capsys)
    assert code == 0, err
    window = json.loads((tmp_path / "w.json").read_text())
    assert window["records"] == 1 and window["metrics"]["tokens"] == 55


def test_a_root_whose_parent_is_remote_is_the_root(tmp_path, capsys):
    tracer, exporter = recorder()
    gateway = SpanContext(trace_id=0x0A * 16 ** 30, span_id=0x0B, is_remote=True,
                          trace_flags=TraceFlags(TraceFlags.SAMPLED))
    _app_trace(tracer, remote_parent=gateway)
    folder = tmp_path / "spool"
    folder.mkdir()
    (folder / "a.jsonl").write_text(json.dumps(otlp_json(exporter.get_finished_spans())) + "\n")
    lenient = Leniency(strict=True)  # no orphan warning: the root is the process's own
    [s] = load_traces(folder, lenient).dataset.samples
    assert s.question == "What is heapq?"
    # the monitor evaluates it at once, however long it would wait for a missing root
    code, out, err = run_cli(["monitor", str(folder), "--history", str(tmp_path / "h.db"),
                              "--root-wait", "86400", "--output", str(tmp_path / "w.json"),
                              "-q"], capsys)
    assert code == 0, err
    assert json.loads((tmp_path / "w.json").read_text())["records"] == 1
    assert "wait for their root" not in out


def test_an_orphan_root_is_taken_after_the_wait(tmp_path, capsys):
    tracer, exporter = recorder()
    _app_trace(tracer)
    spans = otlp_json(exporter.get_finished_spans())
    kept = [s for s in spans["resourceSpans"][0]["scopeSpans"][0]["spans"] if s["name"] != "rag"]
    spans["resourceSpans"][0]["scopeSpans"][0]["spans"] = kept  # the root never comes
    folder = tmp_path / "spool"
    folder.mkdir()
    (folder / "a.jsonl").write_text(json.dumps(spans) + "\n")
    history = str(tmp_path / "h.db")
    code, out, err = run_cli(["monitor", str(folder), "--history", history, "-q"], capsys)
    assert code == 0 and "1 trace waits for its root span" in out
    code, out, err = run_cli(["monitor", str(folder), "--history", history, "--root-wait", "0",
                              "-q"], capsys)
    assert code == 0, err
    assert "wait for their root" not in out and "no new record" not in out
    assert "orphan" in out + err, out  # the earliest orphan taken as the root, counted


def test_feedback_after_its_trace_was_evaluated_is_counted_once(tmp_path, capsys):
    """Issue 33, item 12: a thumbs-up span added 8 s after the answer, once monitor has
    evaluated the trace, is kept until the next window with records and counted in its
    feedback, once (a re-read or a later window does not count it again); run --traces
    on the same spool reads it with its trace."""
    tracer, exporter = recorder()
    t0 = time.time_ns()
    _app_trace(tracer, t0=t0)
    folder = tmp_path / "spool"
    folder.mkdir()
    spool = folder / "a.jsonl"
    spool.write_text(json.dumps(otlp_json(exporter.get_finished_spans())) + "\n")
    history = str(tmp_path / "h.db")

    def window(*extra):
        out = tmp_path / "w.json"
        out.unlink(missing_ok=True)
        code, text, err = run_cli(["monitor", str(folder), "--history", history, "-q",
                                   "--output", str(out), *extra], capsys)
        assert code == 0, err
        return text, (json.loads(out.read_text()) if out.exists() else None)

    _, w1 = window()
    assert w1["records"] == 1 and "feedback" not in w1["metrics"]
    root = next(s for s in exporter.get_finished_spans() if s.name == "rag")
    exporter.clear()
    thumb = tracer.start_span("user-feedback", context=trace.set_span_in_context(
        NonRecordingSpan(root.get_span_context())), start_time=t0 + 8 * 10**9)
    thumb.set_attribute("feedback", "thumbs_up")
    thumb.end(end_time=t0 + 8 * 10**9 + 1)
    with spool.open("a") as f:
        f.write(json.dumps(otlp_json(exporter.get_finished_spans())) + "\n")
    text, w2 = window()
    assert w2["window"] is None and "counted in the next window with records" in text
    exporter.clear()
    _app_trace(tracer, t0=t0 + 20 * 10**9)  # a new question, without feedback
    with spool.open("a") as f:
        f.write(json.dumps(otlp_json(exporter.get_finished_spans())) + "\n")
    text, w3 = window()
    assert w3["records"] == 1 and w3["metrics"]["feedback"] == 1.0
    assert w3["counts"]["feedback"]["n"] == 1 and "after its trace" in text
    shutil.copy(spool, folder / "b.jsonl")  # the same spans again: counted already
    text, w4 = window()
    assert w4["window"] is None and "after its trace" not in text
    oset = load_traces(spool, Leniency())
    assert [o.facts.get("feedback") for o in oset.outputs.values()] == [1.0, None]


def test_documents_without_an_id_are_said_once_with_a_count():
    """Issue 33, item 7: a retriever whose documents carry neither document.id nor an id
    in their metadata: named by rank, no score made up, and said once with a count."""
    from ragmark.data.traces import NO_DOC_ID, outputs_of, read_traces

    tracer, exporter = recorder()
    with tracer.start_as_current_span("rag") as root:
        root.set_attribute(KIND, "CHAIN")
        root.set_attribute(SpanAttributes.INPUT_VALUE, "What is heapq?")
        root.set_attribute(SpanAttributes.OUTPUT_VALUE, "A heap queue.")
        with tracer.start_as_current_span("retrieve") as r:
            r.set_attribute(KIND, "RETRIEVER")
            r.set_attribute("retrieval.documents.0.document.content", "heapq is a heap")
            r.set_attribute("retrieval.documents.0.document.metadata", '{"lang": "en"}')
            r.set_attribute("retrieval.documents.1.document.content", "bisect sorts")
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "t.json"
        path.write_text(json.dumps(otlp_json(exporter.get_finished_spans())))
        lenient = Leniency(strict=True)  # said, not refused: the data is as it is
        _, outputs, _ = outputs_of(read_traces(path, lenient), lenient, TraceKeys())
    [out] = outputs.values()
    assert [(c.id, c.score) for c in out.contexts] == [(None, None), (None, None)]
    assert lenient.count(NO_DOC_ID) == 1 and "(2 of 2)" in lenient.messages()[0]
