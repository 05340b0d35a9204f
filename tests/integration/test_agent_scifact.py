"""A real agent client end to end (issue 50, "done means"): LangChain's ReAct agent
(``create_agent``, a LangGraph graph) with a BM25 search tool over SciFact (bm25s) and
a calculator, driven by a scripted tool-calling chat model, traced by
``openinference-instrumentation-langchain`` and exported by the real OTLP/HTTP exporter
(protobuf) to ``ragmark monitor --listen``'s receiver, then read by ``run --traces
--search-tool search``: every call, argument and result comes through as the agent had
it, each search call is a hop whose recall equals pytrec_eval's on the documents the
tool returned, and nothing is counted twice.

SciFact: BEIR's copy (CC BY 4.0), beside the project as ../shared/data/scifact."""

from __future__ import annotations

import json
import threading

import pytest
from support.cli import run_cli

from ragmark.data import load_dataset

ASKED = 4
"""Questions the agent answers (the first SciFact test questions with qrels)."""


@pytest.fixture
def instrumented():
    pytest.importorskip("langchain")
    from openinference.instrumentation.langchain import LangChainInstrumentor
    from opentelemetry.sdk.trace import TracerProvider

    provider = TracerProvider()
    inst = LangChainInstrumentor()
    inst.instrument(tracer_provider=provider)
    yield provider
    inst.uninstrument()


def _agent(ds, questions):
    """The agent, and what its search tool returned for each question (doc ids, best
    first): BM25 (bm25s) over SciFact's abstracts, top 5."""
    import bm25s
    from langchain.agents import create_agent
    from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.tools import tool

    docs = list(ds.corpus.documents)
    index = bm25s.BM25()
    index.index(bm25s.tokenize([d.text for d in docs], stopwords="en", show_progress=False),
                show_progress=False)
    returned: dict[str, list[str]] = {}

    @tool
    def search(query: str) -> str:
        """Search SciFact's abstracts; returns the top 5 as JSON."""
        hits, _ = index.retrieve(bm25s.tokenize([query], stopwords="en", show_progress=False),
                                 k=5, show_progress=False)
        found = [docs[int(i)] for i in hits[0]]
        returned.setdefault(query, [d.id for d in found])
        return json.dumps([{"id": d.id, "text": d.text[:300]} for d in found])

    @tool
    def calculator(expression: str) -> str:
        """Evaluate a sum of integers."""
        return str(sum(int(x) for x in expression.split("+")))

    script = []
    for n, q in enumerate(questions):
        script.append(AIMessage(content="", tool_calls=[
            {"id": f"s{n}", "name": "search", "args": {"query": q}}]))
        if n == 1:  # one question also counts
            script.append(AIMessage(content="", tool_calls=[
                {"id": f"c{n}", "name": "calculator", "args": {"expression": "2+3"}}]))
        script.append(AIMessage(content=f"Answer {n}."))

    class Scripted(FakeMessagesListChatModel):
        def bind_tools(self, tools, **kwargs):
            return self

    return create_agent(Scripted(responses=script), [search, calculator]), returned


def test_a_langgraph_agent_over_scifact_through_the_receiver(instrumented, scifact, tmp_path,
                                                             monkeypatch, capsys):
    import pytrec_eval
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    from ragmark.monitor.receiver import make_server

    ds = load_dataset(scifact)
    samples = [s for s in ds.samples if s.truth.doc_grades][:ASKED]
    agent, returned = _agent(ds, [s.question for s in samples])
    spool = tmp_path / "spool"
    server, sp = make_server("127.0.0.1:0", spool)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT",
                           f"http://127.0.0.1:{server.server_address[1]}")
        instrumented.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
        for s in samples:
            agent.invoke({"messages": [("user", s.question)]})
        instrumented.force_flush()
    finally:
        server.shutdown()
        server.server_close()
        sp.close()
    out = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--traces", str(spool), "--dataset", str(scifact),
                            "--search-tool", "search", "--metrics",
                            "recall@5,mrr@5,tool_calls,repeated_calls,tool_error_rate",
                            "--output", str(out), "--include-details", "--no-history",
                            "--quiet"], capsys)
    assert code == 0, err
    got = json.loads(out.read_text())
    by_q = {q["question"]: q for q in got["queries"] if q.get("trajectory")}
    assert len(by_q) == ASKED  # each question once
    qrels = {s.id: dict(s.truth.doc_grades) for s in samples}
    run = {s.id: {d: 5.0 - i for i, d in enumerate(returned[s.question])} for s in samples}
    oracle = pytrec_eval.RelevanceEvaluator(qrels, {"recall_5", "recip_rank"}).evaluate(run)
    for n, s in enumerate(samples):
        q = by_q[s.question]
        calls = [st for st in q["trajectory"] if st["kind"] == "model" and st["tool_calls"]]
        asked = [c for st in calls for c in st["tool_calls"]]
        assert [(c["name"], c["arguments"]) for c in asked] == [
            ("search", {"query": s.question}),
            *([("calculator", {"expression": "2+3"})] if n == 1 else [])]
        runs = [st for st in q["trajectory"] if st["kind"] == "tool"]
        assert [r["id"] for r in runs] == [c["id"] for c in asked]
        assert [json.loads(runs[0]["result"])[i]["id"] for i in range(5)] == \
            returned[s.question]
        assert q["metrics"]["tool_calls"] == (2.0 if n == 1 else 1.0)
        assert q["metrics"]["repeated_calls"] == 0.0
        assert [h["name"] for h in q["hops"]] == ["search"]
        assert q["hops"][0]["recall"] == pytest.approx(oracle[s.id]["recall_5"])
        assert q["metrics"]["recall@5"] == pytest.approx(oracle[s.id]["recall_5"])
        assert q["metrics"]["mrr@5"] == pytest.approx(oracle[s.id]["recip_rank"])
        assert q["answer"] == f"Answer {n}."
