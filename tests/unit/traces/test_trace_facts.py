"""What traces tell beyond the answer (issue 22): each retriever span judged on its own
(per-hop recall, hit and MRR, and which hop first found each relevant document), the
latency split into retrieval and generation, tokens and cost from the LLM spans, the
user's feedback, the question's id from an attribute, and the GenAI conventions. Spans
come from the real OpenTelemetry SDK with explicit times, so every value is worked by
hand."""

from __future__ import annotations

import json

import pytest
from openinference.semconv.trace import (
    DocumentAttributes,
    OpenInferenceSpanKindValues,
    SpanAttributes,
)
from opentelemetry import trace
from support.cli import run_cli
from support.otlp import otlp_json, recorder

from ragmark.data.leniency import Leniency
from ragmark.data.traces import TraceKeys, covered, load_traces, thumb
from ragmark.errors import ConfigError

KIND = SpanAttributes.OPENINFERENCE_SPAN_KIND
P1 = "BM25 ranks documents by term frequency and inverse document frequency."
P2 = "A reranker reorders the candidate passages with a stronger model."
P3 = "Dense retrievers embed queries and passages into vectors."
S = 1_000_000_000  # one second in ns
T0 = 1_700_000_000 * S


def _span(tracer, name, parent, start, end, attrs, events=()):
    ctx = trace.set_span_in_context(parent) if parent is not None else None
    span = tracer.start_span(name, context=ctx, start_time=T0 + start)
    for k, v in attrs.items():
        span.set_attribute(k, v)
    for ev_name, ev_attrs in events:
        span.add_event(ev_name, ev_attrs, timestamp=T0 + end)
    span.end(end_time=T0 + end)
    return span


def _docs(docs):
    out = {KIND: OpenInferenceSpanKindValues.RETRIEVER.value}
    for i, (doc_id, text) in enumerate(docs):
        p = f"{SpanAttributes.RETRIEVAL_DOCUMENTS}.{i}."
        out[p + DocumentAttributes.DOCUMENT_ID] = doc_id
        out[p + DocumentAttributes.DOCUMENT_CONTENT] = text
    return out


def _two_hop_app():
    """One question in two hops: hop 1 [d3, d1] over 0.0-0.3 s, hop 2 [d2, d1] over
    0.2-0.5 s (they overlap: 0.5 s of retrieval), an LLM call over 0.5-1.5 s (120 + 30
    tokens, $0.002), the root over 0-2 s, thumbs up on the root, and an id attribute."""
    tracer, exporter = recorder()
    root = tracer.start_span("rag", start_time=T0)
    root.set_attribute(KIND, OpenInferenceSpanKindValues.CHAIN.value)
    root.set_attribute(SpanAttributes.INPUT_VALUE, "How are passages ranked and reordered?")
    root.set_attribute("ragmark.sample_id", "rank-q")
    root.set_attribute("feedback", "thumbs_up")
    root.set_attribute(SpanAttributes.SESSION_ID, "s-1")
    _span(tracer, "bm25", root, 0, 3 * S // 10, _docs([("d3", P3), ("d1", P1)]))
    _span(tracer, "rerank-pool", root, 2 * S // 10, 5 * S // 10,
          _docs([("d2", P2), ("d1", P1)]))
    _span(tracer, "llm", root, 5 * S // 10, 15 * S // 10, {
        KIND: OpenInferenceSpanKindValues.LLM.value,
        SpanAttributes.LLM_TOKEN_COUNT_PROMPT: 120,
        SpanAttributes.LLM_TOKEN_COUNT_COMPLETION: 30,
        SpanAttributes.LLM_COST_TOTAL: 0.002,
        SpanAttributes.OUTPUT_VALUE: "BM25 ranks them; a reranker reorders them."})
    root.end(end_time=T0 + 2 * S)
    return exporter.get_finished_spans()


def _genai_app():
    """The same kind of question told with the GenAI conventions only: messages, a
    retrieval operation with its documents as a JSON string, usage tokens, and the
    feedback as an event on the root."""
    tracer, exporter = recorder()
    root = tracer.start_span("invoke_agent rag", start_time=T0)
    root.set_attribute("gen_ai.operation.name", "invoke_agent")
    root.set_attribute("gen_ai.input.messages", json.dumps([
        {"role": "system", "parts": [{"type": "text", "content": "Be brief."}]},
        {"role": "user", "parts": [{"type": "text", "content": "What does a reranker do?"}]}]))
    _span(tracer, "retrieval kb", root, 0, S // 10, {
        "gen_ai.operation.name": "retrieval",
        "gen_ai.retrieval.documents": json.dumps([
            {"id": "d2", "score": 0.9, "content": P2}, {"id": "d3", "score": 0.4,
                                                        "content": P3}])})
    _span(tracer, "chat small-model", root, S // 10, 4 * S // 10, {
        "gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 80,
        "gen_ai.usage.output_tokens": 12,
        "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [
            {"type": "text", "content": "It reorders the candidate passages."}],
            "finish_reason": "stop"}])})
    root.add_event("feedback", {"score": 4}, timestamp=T0 + S // 2)
    root.end(end_time=T0 + S // 2)
    return exporter.get_finished_spans()


@pytest.fixture
def two_hop(tmp_path):
    path = tmp_path / "two_hop.json"
    path.write_text(json.dumps(otlp_json(_two_hop_app())), encoding="utf-8")
    return path


def test_latency_tokens_cost_feedback_and_id_come_from_the_spans(two_hop):
    oset = load_traces(two_hop)
    (s,) = oset.dataset.samples
    assert s.id == "rank-q" and oset.given_ids == {"rank-q"}
    assert s.extra == {"session.id": "s-1", "conversation_id": "s-1", "turn": 1,
                       "history": []}  # a session of one turn
    out = oset.outputs["rank-q"]
    assert out.hops == (("bm25", 2), ("rerank-pool", 2))
    assert out.latency_s == pytest.approx(2.0)
    assert out.facts == pytest.approx({
        "retrieval_latency_s": 0.5,  # 0.0-0.3 and 0.2-0.5 overlap: 0.5 s, not 0.6
        "generation_latency_s": 1.0, "tokens": 150.0, "cost_usd": 0.002, "feedback": 1.0})


def test_per_hop_metrics_and_the_hop_that_found_each_document(two_hop, tmp_path, capsys):
    """Relevant: P1 and P2. Hop 1 [P3, P1]: recall 1/2, hit 1, MRR 1/2, first to find P1.
    Hop 2 [P2, P1]: recall 2/2, hit 1, MRR 1/1, first to find P2. Merged [P3, P1, P2, P1]:
    recall@2 = 1/2, MRR 1/2."""
    gt = tmp_path / "set.json"
    gt.write_text(json.dumps([{"id": "rank-q", "question": "a question worded otherwise",
                               "ground_truth_contexts": [P1, P2]}]), encoding="utf-8")
    out = tmp_path / "r.json"
    code, stdout, err = run_cli(
        ["run", "--traces", str(two_hop), "--dataset", str(gt), "--metrics",
         "recall@2,mrr,latency_s,retrieval_latency_s,generation_latency_s,tokens,cost_usd,"
         "feedback,refusal,empty_retrieval", "--output", str(out), "--include-details",
         "--no-history"], capsys)
    assert code == 0, err
    data = json.loads(out.read_text())
    assert data["per_query"]["rank-q"] == pytest.approx({  # joined by the id attribute
        "recall@2": 0.5, "mrr": 0.5, "latency_s": 2.0, "retrieval_latency_s": 0.5,
        "generation_latency_s": 1.0, "tokens": 150.0, "cost_usd": 0.002, "feedback": 1.0,
        "refusal": 0.0, "empty_retrieval": 0.0})
    (q,) = data["queries"]
    assert [(h["name"], h["recall"], h["hit"], h["mrr"]) for h in q["hops"]] == [
        ("bm25", 0.5, 1.0, 0.5), ("rerank-pool", 1.0, 1.0, 1.0)]
    first, second = (h["found"] for h in q["hops"])
    assert len(first) == 1 and len(second) == 1 and first != second
    assert [(h["hop"], h["recall"], h["mrr"], h["found"], h["found_any"])
            for h in data["hops"]] == [(1, 0.5, 0.5, 1, 2), (2, 1.0, 1.0, 1, 2)]
    assert "Retrieval by hop" in stdout
    # the report reads back as written
    from ragmark.results.codec import run_from_json

    back = run_from_json(data, str(out))
    assert back.hops[1].recall == 1.0 and back.queries[0].hops[0].name == "bm25"


def test_genai_conventions_read_alike(tmp_path):
    path = tmp_path / "genai.json"
    path.write_text(json.dumps(otlp_json(_genai_app())), encoding="utf-8")
    oset = load_traces(path)
    (s,) = oset.dataset.samples
    assert s.question == "What does a reranker do?"  # the last user message
    out = oset.outputs[s.id]
    assert out.answer == "It reorders the candidate passages."
    assert [(c.id, c.text, c.score) for c in out.contexts] == [("d2", P2, 0.9),
                                                                ("d3", P3, 0.4)]
    assert out.facts == pytest.approx({"tokens": 92.0, "retrieval_latency_s": 0.1,
                                       "generation_latency_s": 0.3, "feedback": 4.0})
    assert "cost_usd" not in out.facts  # not recorded: missing, never 0


def test_feedback_and_id_attributes_are_configurable_and_odd_feedback_counted(tmp_path):
    tracer, exporter = recorder()
    for i, thumbs in enumerate(["down", "meh"]):
        root = tracer.start_span("rag", start_time=T0)
        root.set_attribute(SpanAttributes.INPUT_VALUE, f"question {i}?")
        root.set_attribute("app.rating", thumbs)
        root.set_attribute("app.qid", f"Q{i}")
        root.end(end_time=T0 + S)
    path = tmp_path / "t.json"
    path.write_text(json.dumps(otlp_json(exporter.get_finished_spans())), encoding="utf-8")
    lenient = Leniency()
    keys = TraceKeys.parse(["feedback=app.rating", "id=app.qid"])
    oset = load_traces(path, lenient, keys)
    assert [s.id for s in oset.dataset.samples] == ["Q0", "Q1"]
    assert oset.outputs["Q0"].facts["feedback"] == 0.0
    assert "feedback" not in oset.outputs["Q1"].facts
    assert lenient.count("feedback that is neither a thumb nor a number: left out") == 1
    with pytest.raises(ConfigError, match="expected ROLE=NAME .id=NAME: the attribute that "
                                          "names the question.s id; feedback=NAME"):
        TraceKeys.parse(["rating"])


def test_helpers_worked_by_hand():
    assert thumb(False) == 0.0 and thumb("👍") == 1.0 and thumb("2") == 2.0
    assert thumb(None) is None and thumb([1]) is None

    class Sp:
        def __init__(self, a, b):
            self.start, self.end = a * S, b * S

    # [0, 2] and [1, 3] overlap (3 s), [5, 6] apart (1 s): 4 s; nothing: None
    assert covered([Sp(0, 2), Sp(5, 6), Sp(1, 3)]) == 4.0
    assert covered([]) is None


def test_production_measures_are_missing_when_not_recorded(tmp_path, capsys):
    """A logged outputs file records no tokens: they are missing with the reason (and a
    metric asked for that got no value fails the run, exit 1), and the flags read from
    the output itself have values."""
    log = tmp_path / "log.jsonl"
    log.write_text("\n".join(json.dumps(x) for x in [
        {"question": "q1?", "answer": "I don't know.", "contexts": []},
        {"question": "q2?", "answer": "BM25 ranks by term weights.", "contexts": [P1]},
    ]) + "\n", encoding="utf-8")
    out = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--outputs", str(log), "--metrics",
                            "refusal,empty_retrieval,tokens", "--output", str(out),
                            "--no-history", "--quiet"], capsys)
    assert code == 1 and "gate failed: tokens got no value for any of 2 questions" in err
    data = json.loads(out.read_text())
    assert data["metrics"] == {"refusal": 0.5, "empty_retrieval": 0.5, "tokens": None}
    assert data["counts"]["tokens"] == {
        "n": 0, "missing": 2,
        "reasons": {"not recorded (tokens the LLM calls used (prompt and completion))": 2}}


def test_a_logged_outputs_line_records_its_measures(tmp_path, capsys):
    """latency_ms is read in seconds; a thumb reads as 1/0; odd feedback is counted; a
    measure of the wrong type is an error naming the line and the field (exit 2)."""
    from ragmark.data.outputs import load_outputs

    log = tmp_path / "log.jsonl"
    log.write_text("\n".join(json.dumps(x) for x in [
        {"question": "q1?", "answer": "a", "contexts": [P1], "latency_ms": 250,
         "tokens": 90, "cost_usd": 0.001, "feedback": "up"},
        {"question": "q2?", "answer": "b", "contexts": [P2], "feedback": "so-so"},
    ]) + "\n", encoding="utf-8")
    lenient = Leniency()
    oset = load_outputs(log, lenient)
    first, second = oset.outputs["q1"], oset.outputs["q2"]
    assert first.latency_s == 0.25
    assert first.facts == {"tokens": 90.0, "cost_usd": 0.001, "feedback": 1.0}
    assert second.facts == {} and second.latency_s is None
    assert lenient.count("feedback that is neither a thumb nor a number: left out") == 1
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"question": "q?", "answer": "a", "contexts": [],
                               "tokens": "many"}) + "\n", encoding="utf-8")
    code, _, err = run_cli(["run", "--outputs", str(bad), "--no-history", "--quiet"], capsys)
    assert code == 2 and "line 1" in err and "tokens" in err and "non-negative number" in err


def test_traces_of_one_session_are_the_turns_of_a_conversation(tmp_path, capsys):
    """Two traces with session.id s-9 (the later one exported first) and one without:
    the session's traces are turns 1 and 2 in the order their roots started, the second
    with the first's question and answer as its history."""
    tracer, exporter = recorder()
    for start, question, answer in ((5, "And the reranker?", "It reorders."),
                                    (1, "What does BM25 rank?", "Documents.")):
        root = tracer.start_span("rag", start_time=T0 + start * S)
        root.set_attribute(SpanAttributes.INPUT_VALUE, question)
        root.set_attribute(SpanAttributes.OUTPUT_VALUE, answer)
        root.set_attribute(SpanAttributes.SESSION_ID, "s-9")
        root.end(end_time=T0 + (start + 1) * S)
    path = tmp_path / "session.json"
    path.write_text(json.dumps(otlp_json(exporter.get_finished_spans())), encoding="utf-8")
    oset = load_traces(path)
    by_q = {s.question: s.extra for s in oset.dataset.samples}
    assert by_q["What does BM25 rank?"]["turn"] == 1
    assert by_q["And the reranker?"]["turn"] == 2
    assert by_q["And the reranker?"]["history"] == [
        {"question": "What does BM25 rank?", "answer": "Documents."}]
    out = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--traces", str(path), "--metrics", "refusal",
                            "--output", str(out), "--no-history", "--quiet"], capsys)
    assert code == 0, err
    conv = json.loads(out.read_text())["conversations"]
    assert conv["conversations"] == 1 and [t["questions"] for t in conv["by_turn"]] == [1, 1]


def test_two_exports_of_the_same_questions_are_one_dataset_with_an_id_attribute(tmp_path):
    """The same question traced twice (new trace ids each time): with an id attribute
    the two loads are one dataset (same question ids, same fingerprint); without one
    each is its own (the trace ids are the questions' ids)."""
    from ragmark.data.fingerprint import dataset_hash

    def export(with_id: bool):
        spans = _two_hop_app()
        path = tmp_path / f"{with_id}-{len(list(tmp_path.iterdir()))}.json"
        doc = otlp_json(spans)
        if not with_id:
            for rs in doc["resourceSpans"]:
                for ss in rs["scopeSpans"]:
                    for s in ss["spans"]:
                        s["attributes"] = [a for a in s["attributes"]
                                           if a["key"] != "ragmark.sample_id"]
        path.write_text(json.dumps(doc), encoding="utf-8")
        return load_traces(path).dataset

    a, b = export(True), export(True)
    assert [s.id for s in a.samples] == [s.id for s in b.samples] == ["rank-q"]
    assert dataset_hash(a) == dataset_hash(b)
    c, d = export(False), export(False)
    assert c.samples[0].id != d.samples[0].id  # two trace ids
    assert dataset_hash(c) != dataset_hash(d)


def _searching_agent():
    """Issue 61 item 21: an agent (no retriever span) whose ``search`` tool ran over
    0.1-0.4 s and 0.3-0.6 s (overlapping: 0.5 s), a ``calculator`` over 0.7-0.9 s, and
    its model over 0.0-0.1 s and 0.9-1.0 s."""
    tracer, exporter = recorder()
    root = tracer.start_span("agent", start_time=T0)
    root.set_attribute(KIND, "AGENT")
    root.set_attribute("input.value", "What does BM25 rank?")
    root.set_attribute("output.value", "Documents.")
    for start, end in ((0, S // 10), (9 * S // 10, S)):
        _span(tracer, "llm", root, start, end, {
            KIND: "LLM", "llm.output_messages.0.message.content": "Documents."})
    for i, (start, end) in enumerate(((S // 10, 4 * S // 10), (3 * S // 10, 6 * S // 10))):
        _span(tracer, "search", root, start, end, {
            KIND: "TOOL", "tool.name": "search", "input.value": f'{{"query": "q{i}"}}',
            "output.value": json.dumps([{"id": f"d{i}", "text": P1}])})
    _span(tracer, "calculator", root, 7 * S // 10, 9 * S // 10, {
        KIND: "TOOL", "tool.name": "calculator", "input.value": '{"x": "1+1"}',
        "output.value": "2"})
    root.end(end_time=T0 + S)
    return exporter.get_finished_spans()


def test_a_search_tools_spans_are_the_retrieval_latency(tmp_path):
    path = tmp_path / "agent.json"
    path.write_text(json.dumps(otlp_json(_searching_agent())), encoding="utf-8")
    (out,) = load_traces(path, Leniency(), TraceKeys(search_tools=("search",))
                         ).outputs.values()
    assert [c.id for c in out.contexts] == ["d0", "d1"]
    assert out.facts["retrieval_latency_s"] == pytest.approx(0.5)  # not 0.6, not 0.7
    (plain,) = load_traces(path, Leniency()).outputs.values()
    assert "retrieval_latency_s" not in plain.facts  # no search tool named: not recorded


def test_a_logged_agents_search_calls_give_the_retrieval_latency(tmp_path, capsys):
    """A log's search calls with their ``latency_s`` (0.25 + 0.5 s): 0.75 s of retrieval;
    a question whose one search gives no time has the metric missing, not 0."""
    timed = [{"name": "search", "arguments": {"query": "a"}, "latency_s": 0.25,
              "result": json.dumps([{"id": "d1", "text": P1}])},
             {"name": "calculator", "arguments": {"x": "1"}, "latency_s": 9, "result": "1"},
             {"name": "search", "arguments": {"query": "b"}, "latency_s": 0.5,
              "result": json.dumps([{"id": "d2", "text": P2}])}]
    rows = [{"id": "q1", "question": "What does BM25 rank?", "answer": "Documents.",
             "tool_calls": timed},
            {"id": "q2", "question": "What does a reranker do?", "answer": "Reorders.",
             "tool_calls": [{"name": "search", "arguments": {"query": "c"},
                             "result": json.dumps([{"id": "d2", "text": P2}])}]}]
    log = tmp_path / "agent.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--outputs", str(log), "--search-tool", "search",
                            "--metrics", "retrieval_latency_s", "--output", str(out),
                            "--no-history", "--quiet"], capsys)
    assert code == 0, err
    data = json.loads(out.read_text())
    assert data["per_query"]["q1"]["retrieval_latency_s"] == pytest.approx(0.75)
    assert data["per_query"]["q2"].get("retrieval_latency_s") is None
