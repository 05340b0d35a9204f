"""LangChain's own nested retrievers, traced by the OpenInference instrumentor and sent by
the real OTLP/HTTP exporter to ``ragmark monitor --listen`` (issue 48, items 1-2): a
ContextualCompressionRetriever around a MultiQueryRetriever (which writes its queries
with the chat model) around an EnsembleRetriever of BM25 and a vector store. A
compressor that keeps nothing is an empty retrieval, however many documents its inner
retrievers found; the multi-query LLM call is part of the retrieval, never the answer.
Each test fails on the main of before the issue."""

from __future__ import annotations

import json
import threading

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from support.cli import run_cli
from support.otlp import otlp_json

from ragmark.data.leniency import Leniency
from ragmark.data.traces import RETRIEVAL_ONLY, load_traces

pytest.importorskip("langchain_classic.retrievers")
pytest.importorskip("langchain_community.retrievers")
pytest.importorskip("rank_bm25")

TEXTS = {"d0": "BM25 ranks documents by term frequency and inverse document frequency.",
         "d1": "A reranker reorders the candidate passages with a stronger model.",
         "d2": "Dense retrieval embeds questions and passages as vectors.",
         "d3": "heapq implements a heap queue, also known as a priority queue."}
ASKED = ["What does BM25 rank by?", "What does a reranker do?", "What is dense retrieval?"]
UNKNOWN = "I don't know."


@pytest.fixture
def instrumented():
    from openinference.instrumentation.langchain import LangChainInstrumentor

    kept = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(kept))
    inst = LangChainInstrumentor()
    inst.instrument(tracer_provider=provider)
    yield provider, kept
    inst.uninstrument()


def _app(top_n: int, answers: list[str]):
    """The app: (chain, compression retriever); the chat model answers ``answers`` in
    turn (each question takes two: the multi-query retriever's queries, then the
    answer)."""
    from langchain_classic.retrievers import (
        ContextualCompressionRetriever,
        EnsembleRetriever,
        MultiQueryRetriever,
    )
    from langchain_community.retrievers import BM25Retriever
    from langchain_core.documents import BaseDocumentCompressor, Document
    from langchain_core.embeddings import DeterministicFakeEmbedding
    from langchain_core.language_models.fake_chat_models import FakeListChatModel
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.runnables import RunnablePassthrough
    from langchain_core.vectorstores import InMemoryVectorStore

    class TopN(BaseDocumentCompressor):
        """A reranker keeping the ``top_n`` documents sharing most words with the
        question, its score in the metadata (as LangChain's rerankers write it)."""

        top_n: int = 3

        def compress_documents(self, documents, query, callbacks=None):
            words = set(query.lower().split())
            scored = sorted(((len(words & set(d.page_content.lower().split())), i, d)
                             for i, d in enumerate(documents)), key=lambda t: (-t[0], t[1]))
            return [Document(page_content=d.page_content,
                             metadata={**d.metadata, "relevance_score": float(s)})
                    for s, _, d in scored[: self.top_n]]

    docs = [Document(page_content=t, metadata={"id": i}) for i, t in TEXTS.items()]
    bm25 = BM25Retriever.from_documents(docs, k=2)
    vectors = InMemoryVectorStore.from_documents(
        docs, DeterministicFakeEmbedding(size=32)).as_retriever(search_kwargs={"k": 2})
    chat = FakeListChatModel(responses=answers)
    multi = MultiQueryRetriever.from_llm(
        retriever=EnsembleRetriever(retrievers=[bm25, vectors], weights=[0.5, 0.5]),
        llm=chat)
    ccr = ContextualCompressionRetriever(base_compressor=TopN(top_n=top_n),
                                         base_retriever=multi)
    chain = ({"context": ccr, "question": RunnablePassthrough()}
             | ChatPromptTemplate.from_template("Context: {context}\nQuestion: {question}")
             | chat | StrOutputParser())
    return chain, ccr


def _queries(q: str) -> str:
    return f"{q}\n{q.replace('What', 'Which')}"


def test_an_empty_outer_retriever_is_an_empty_retrieval_through_the_receiver(
        instrumented, tmp_path, monkeypatch, capsys):
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    from ragmark.monitor.receiver import make_server

    provider, kept = instrumented
    spool = tmp_path / "spool"
    server, sp = make_server("127.0.0.1:0", spool)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT",
                           f"http://127.0.0.1:{server.server_address[1]}")
        provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))  # protobuf
        answers = [x for q in ASKED for x in (_queries(q), UNKNOWN)]
        chain, ccr = _app(0, answers + [_queries(ASKED[0])])  # the compressor keeps none
        assert [chain.invoke(q) for q in ASKED] == [UNKNOWN] * 3
        assert ccr.invoke(ASKED[0]) == []  # a bare retriever call beside the app's
        provider.force_flush()
    finally:
        server.shutdown()
        server.server_close()
        sp.close()
    lenient = Leniency()
    oset = load_traces(spool, lenient)
    # three questions asked, three records: the bare call is retrieval only
    assert sorted(s.question for s in oset.dataset.samples) == sorted(ASKED)
    assert lenient.count(RETRIEVAL_ONLY) == 1
    for o in oset.outputs.values():
        assert o.answer == UNKNOWN
        assert o.contexts == () and o.hops == (("ContextualCompressionRetriever", 0),)
    assert not any("without documents" in m for m in lenient.messages())
    # the same spans as OTLP JSON read the same
    file = tmp_path / "same.json"
    file.write_text(json.dumps(otlp_json(kept.get_finished_spans())))
    again = load_traces(file)
    assert sorted(again.outputs.values(), key=repr) == sorted(oset.outputs.values(), key=repr)
    out = tmp_path / "w.json"
    code, _, err = run_cli(["monitor", str(spool), "--strict", "--output", str(out),
                            "--history", str(tmp_path / "h.db")], capsys)
    assert code == 0, err
    w = json.loads(out.read_text())
    assert w["records"] == 3 and w["metrics"]["empty_retrieval"] == 1.0


def test_the_multi_query_llm_call_is_part_of_the_retrieval(instrumented, tmp_path):
    provider, kept = instrumented
    chain, ccr = _app(2, [_queries(ASKED[0]), "BM25 ranks by term frequency.",
                          _queries(ASKED[1])])
    assert chain.invoke(ASKED[0]) == "BM25 ranks by term frequency."
    got = ccr.invoke(ASKED[1])  # a trace rooted at the retriever: no answer
    spans = kept.get_finished_spans()
    file = tmp_path / "t.json"
    file.write_text(json.dumps(otlp_json(spans)))
    oset = load_traces(file)
    by_q = {s.question: oset.outputs[s.id] for s in oset.dataset.samples}
    app, bare = by_q[ASKED[0]], by_q[ASKED[1]]
    # the compressor's two documents, with its scores: not the inner retrievers' four
    assert app.hops == (("ContextualCompressionRetriever", 2),)
    outer = next(s for s in spans if s.name == "ContextualCompressionRetriever")
    kept_ids = [json.loads(outer.attributes[f"retrieval.documents.{i}.document.metadata"])
                ["id"] for i in range(2)]
    assert [c.id for c in app.contexts] == kept_ids and kept_ids[0] == "d0"
    assert [c.text for c in app.contexts] == [TEXTS[i] for i in kept_ids]
    assert app.contexts[0].score == 1.0  # the compressor's: one word shared, "bm25"
    # the bare call's answer is none: the multi-query call's generations are no answer
    assert bare.answer is None and [c.id for c in bare.contexts] == [
        d.metadata["id"] for d in got]
    # generation time is the answering call's alone, retrieval's holds the query writing
    llm = [s for s in spans if s.attributes.get("openinference.span.kind") == "LLM"]
    assert len(llm) == 3
    answering = max((s for s in llm if s.context.trace_id == llm[1].context.trace_id),
                    key=lambda s: s.end_time)
    assert app.facts["generation_latency_s"] == pytest.approx(
        (answering.end_time - answering.start_time) / 1e9)
    assert "generation_latency_s" not in bare.facts
