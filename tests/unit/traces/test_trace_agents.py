"""An agent's trajectory from its trace (issue 50, item 2): a LangGraph agent (LangChain's
``create_agent``) with a search tool and a calculator that fails, driven by a scripted
tool-calling chat model, traced by ``openinference-instrumentation-langchain`` through
the real SDK and read by ``run --traces``: every call, argument, result and error comes
through as the agent had it, the question and the answer are the conversation's, not
its JSON; and GenAI ``execute_tool`` / ``invoke_agent`` spans read the same way."""

from __future__ import annotations

import json

import pytest
from support.cli import run_cli
from support.otlp import otlp_json, recorder

from ragmark.data.leniency import Leniency
from ragmark.data.traces import load_traces
from ragmark.trajectory import Handoff, ToolRun, Turn


@pytest.fixture
def langchain_traces():
    pytest.importorskip("langchain")
    pytest.importorskip("langgraph")
    from openinference.instrumentation.langchain import LangChainInstrumentor
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    inst = LangChainInstrumentor()
    inst.instrument(tracer_provider=provider)
    yield exporter
    inst.uninstrument()


def _agent(replies):
    """LangChain's ReAct agent over a search tool and a calculator that fails, its model
    a chat model that says ``replies`` in turn (each an AIMessage, with tool calls)."""
    from langchain.agents import create_agent
    from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
    from langchain_core.tools import ToolException, tool

    class Scripted(FakeMessagesListChatModel):
        def bind_tools(self, tools, **kwargs):  # offered as a chat model offers them
            from langchain_core.utils.function_calling import convert_to_openai_tool

            return self.bind(tools=[convert_to_openai_tool(t) for t in tools])

    @tool
    def search(query: str) -> str:
        """Search the corpus."""
        return "Dune is a 1965 novel by Frank Herbert."

    @tool
    def calculator(expression: str) -> str:
        """Compute an arithmetic expression."""
        raise ToolException(f"cannot compute {expression!r}")

    calculator.handle_tool_error = True
    return create_agent(Scripted(responses=replies), [search, calculator])


def _ai(text="", *calls):
    from langchain_core.messages import AIMessage

    return AIMessage(content=text, tool_calls=[
        {"id": cid, "name": name, "args": args} for cid, name, args in calls])


def test_a_langgraph_agents_calls_come_through_its_trace(langchain_traces, tmp_path, capsys):
    agent = _agent([_ai("", ("call_1", "search", {"query": "Dune author"})),
                    _ai("", ("call_2", "calculator", {"expression": "2026-"}),
                        ("call_3", "search", {"query": "Dune year"})),
                    _ai("Frank Herbert, 1965")])
    agent.invoke({"messages": [("user", "Who wrote Dune, and when?")]})
    path = tmp_path / "spans.json"
    path.write_text(json.dumps(otlp_json(langchain_traces.get_finished_spans())))
    got = load_traces(path, Leniency())
    (qid, out), = got.outputs.items()
    assert got.dataset.samples[0].question == "Who wrote Dune, and when?"
    assert out.answer == "Frank Herbert, 1965"
    t = out.trajectory
    assert t is not None
    assert [type(s).__name__ for s in t.steps] == ["Turn", "ToolRun", "Turn", "ToolRun",
                                                   "ToolRun", "Turn"]
    calls = t.calls()
    assert [(c.name, c.arguments, c.id, c.error) for c in calls] == [
        ("search", {"query": "Dune author"}, "call_1", None),
        ("calculator", {"expression": "2026-"}, "call_2", "cannot compute '2026-'"),
        ("search", {"query": "Dune year"}, "call_3", None)]
    assert calls[0].result == calls[2].result == "Dune is a 1965 novel by Frank Herbert."
    assert all(c.asked and c.ran and c.latency_s is not None for c in calls)
    assert not any(isinstance(s, Handoff) for s in t.steps)
    # scored as a user would: the set expects one search; the run keeps the steps
    data = tmp_path / "set.jsonl"
    data.write_text(json.dumps({
        "question": "Who wrote Dune, and when?", "expected_answer": "Frank Herbert, 1965",
        "ground_truth_contexts": ["Dune is a 1965 novel by Frank Herbert."],
        "expected_tool_calls": [{"name": "search", "arguments": {"query": "Dune author"}}],
    }) + "\n")
    out_file = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--traces", str(path), "--dataset", str(data),
                            "--metrics", "trajectory_superset,trajectory_strict,tool_precision,"
                            "tool_error_rate,repeated_calls,tool_calls,exact_match",
                            "--output", str(out_file), "--include-details", "--no-history",
                            "--quiet"], capsys)
    assert code == 0, err
    res = json.loads(out_file.read_text())
    assert res["metrics"] == pytest.approx({
        "trajectory_superset": 1.0, "trajectory_strict": 0.0, "tool_precision": 1 / 3,
        "tool_error_rate": 1 / 3, "repeated_calls": 0.0, "tool_calls": 3.0,
        "exact_match": 1.0})
    steps = res["queries"][0]["trajectory"]
    ran = {s["id"]: s for s in steps if s["kind"] == "tool"}  # the two may run in parallel
    assert steps[1]["name"] == "search" and ran["call_2"]["error"] == "cannot compute '2026-'"


def test_an_agent_that_calls_no_tool_has_a_trajectory_of_no_call(langchain_traces,
                                                                 tmp_path, capsys):
    """A model offered tools that answers at once (what the 1.5B model did on SciFact):
    its trace tells of an agent, so its trajectory has one turn and no call, and the
    expected search is missing (0), not 'no trajectory'."""
    _agent([_ai("Frank Herbert.")]).invoke({"messages": [("user", "Who wrote Dune?")]})
    path = tmp_path / "spans.json"
    path.write_text(json.dumps(otlp_json(langchain_traces.get_finished_spans())))
    (out,) = load_traces(path, Leniency()).outputs.values()
    assert out.trajectory is not None and out.trajectory.calls() == ()
    assert [type(s).__name__ for s in out.trajectory.steps] == ["Turn"]
    data = tmp_path / "set.jsonl"
    data.write_text(json.dumps({"question": "Who wrote Dune?", "ground_truth_contexts": [
        "Dune is a 1965 novel by Frank Herbert."], "expected_tool_calls": [
        {"name": "search", "arguments": {"query": "Dune"}}]}) + "\n")
    res = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--traces", str(path), "--dataset", str(data), "--metrics",
                            "trajectory_superset,tool_recall,tool_calls", "--output",
                            str(res), "--no-history", "--quiet"], capsys)
    assert code == 0, err
    assert json.loads(res.read_text())["metrics"] == {
        "trajectory_superset": 0.0, "tool_recall": 0.0, "tool_calls": 0.0}


def test_genai_tool_and_agent_spans_read_the_same_way(tmp_path):
    """OpenTelemetry's GenAI conventions: ``invoke_agent`` spans (``gen_ai.agent.name``)
    around ``chat`` spans whose output messages ask for tools and ``execute_tool`` spans
    (``gen_ai.tool.name``, ``gen_ai.tool.call.id|arguments|result``); a failed tool's
    error status; the agent changing is a hand-off."""
    from opentelemetry.trace import Status, StatusCode

    tracer, exporter = recorder()
    with tracer.start_as_current_span("workflow") as root:
        root.set_attribute("gen_ai.operation.name", "invoke_workflow")
        root.set_attribute("gen_ai.input.messages", json.dumps(
            [{"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]}]))
        for agent, call, fail in (("triage", ("t1", "lookup", '{"city": "Paris"}'), True),
                                  ("weather", ("w1", "forecast", '{"city": "Paris"}'), False)):
            with tracer.start_as_current_span(f"invoke_agent {agent}") as a:
                a.set_attribute("gen_ai.operation.name", "invoke_agent")
                a.set_attribute("gen_ai.agent.name", agent)
                with tracer.start_as_current_span("chat") as chat:
                    chat.set_attribute("gen_ai.operation.name", "chat")
                    chat.set_attribute("gen_ai.usage.input_tokens", 40)
                    chat.set_attribute("gen_ai.usage.output_tokens", 7)
                    chat.set_attribute("gen_ai.output.messages", json.dumps([{
                        "role": "assistant", "parts": [{"type": "tool_call", "id": call[0],
                                                        "name": call[1],
                                                        "arguments": json.loads(call[2])}]}]))
                with tracer.start_as_current_span(f"execute_tool {call[1]}") as tool:
                    tool.set_attribute("gen_ai.operation.name", "execute_tool")
                    tool.set_attribute("gen_ai.tool.name", call[1])
                    tool.set_attribute("gen_ai.tool.call.id", call[0])
                    tool.set_attribute("gen_ai.tool.call.arguments", call[2])
                    if fail:
                        tool.set_status(Status(StatusCode.ERROR, "no such city table"))
                    else:
                        tool.set_attribute("gen_ai.tool.call.result", "sunny, 21C")
        with tracer.start_as_current_span("chat") as chat:
            chat.set_attribute("gen_ai.operation.name", "chat")
            chat.set_attribute("gen_ai.output.messages", json.dumps([{
                "role": "assistant", "parts": [{"type": "text", "content": "Sunny, 21C."}]}]))
    path = tmp_path / "spans.json"
    path.write_text(json.dumps(otlp_json(exporter.get_finished_spans())))
    (out,) = load_traces(path, Leniency()).outputs.values()
    t = out.trajectory
    assert t is not None and out.answer == "Sunny, 21C."
    assert [type(s).__name__ for s in t.steps] == ["Turn", "ToolRun", "Handoff", "Turn",
                                                   "ToolRun", "Turn"]
    assert t.steps[2] == Handoff("triage", "weather")
    first = t.steps[0]
    assert isinstance(first, Turn) and (first.prompt_tokens, first.completion_tokens,
                                        first.agent) == (40, 7, "triage")
    failed = t.steps[1]
    assert isinstance(failed, ToolRun) and failed.call.error == "no such city table"
    assert [(c.name, c.arguments, c.result, c.error) for c in t.calls()] == [
        ("lookup", {"city": "Paris"}, None, "no such city table"),
        ("forecast", {"city": "Paris"}, "sunny, 21C", None)]


def test_a_plain_rag_trace_has_no_trajectory(tmp_path):
    """A chain with a retriever and an LLM that asks for no tool: no trajectory (its
    results are as before)."""
    from openinference.semconv.trace import SpanAttributes

    tracer, exporter = recorder()
    kind = SpanAttributes.OPENINFERENCE_SPAN_KIND
    with tracer.start_as_current_span("chain") as root:
        root.set_attribute(kind, "CHAIN")
        root.set_attribute("input.value", "What is BM25?")
        root.set_attribute("output.value", "A ranking function.")
        with tracer.start_as_current_span("retrieve") as r:
            r.set_attribute(kind, "RETRIEVER")
            r.set_attribute("retrieval.documents.0.document.id", "d1")
            r.set_attribute("retrieval.documents.0.document.content", "BM25 ranks.")
        with tracer.start_as_current_span("llm") as llm:
            llm.set_attribute(kind, "LLM")
            llm.set_attribute("llm.output_messages.0.message.content", "A ranking function.")
    path = tmp_path / "spans.json"
    path.write_text(json.dumps(otlp_json(exporter.get_finished_spans())))
    (out,) = load_traces(path, Leniency()).outputs.values()
    assert out.trajectory is None and out.trajectory_json() is None


def _smolagents_spans(server):
    """The spans of smolagents' ToolCallingAgent asked "Who wrote Dune?" on the scripted
    server (a search call, then final_answer), traced by its OpenInference instrumentor."""
    pytest.importorskip("smolagents")
    from openinference.instrumentation.smolagents import SmolagentsInstrumentor
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from smolagents import OpenAIServerModel, ToolCallingAgent, tool
    from support.fake_llm_server import tool_call_reply

    @tool
    def search(query: str) -> str:
        """Search the passages.

        Args:
            query: what to search for.
        """
        return json.dumps([{"id": "d1", "text": "Dune is a 1965 novel by Frank Herbert."}])

    server.queue.extend([tool_call_reply("c1", "search", {"query": "Dune author"}),
                         tool_call_reply("c2", "final_answer", {"answer": "Frank Herbert"})])
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    inst = SmolagentsInstrumentor()
    inst.instrument(tracer_provider=provider)
    try:
        agent = ToolCallingAgent(tools=[search], model=OpenAIServerModel(
            model_id="m", api_base=server.url, api_key="none"), max_steps=4, verbosity_level=0)
        assert agent.run("Who wrote Dune?") == "Frank Herbert"
    finally:
        inst.uninstrument()
    return exporter.get_finished_spans()


def test_a_smolagents_tool_calling_agent(server, tmp_path):
    """smolagents' ToolCallingAgent on an OpenAI-compatible server (a real HTTP server
    scripted to call a tool, then give the final answer), traced by
    openinference-instrumentation-smolagents: the question is the task, the search call
    comes through with its arguments and result, and final_answer is the answer, not a
    call."""
    spans = _smolagents_spans(server)
    path = tmp_path / "spans.json"
    path.write_text(json.dumps(otlp_json(spans)))
    got = load_traces(path, Leniency())
    (out,) = got.outputs.values()
    assert got.dataset.samples[0].question == "Who wrote Dune?"
    assert out.answer == "Frank Herbert" and out.trajectory is not None
    calls = out.trajectory.calls()
    assert [(c.name, c.arguments, c.id, c.result) for c in calls] == [
        ("search", {"query": "Dune author"}, "c1",
         '[{"id": "d1", "text": "Dune is a 1965 novel by Frank Herbert."}]')]
    turns = [s for s in out.trajectory.steps if isinstance(s, Turn)]
    assert [t.content for t in turns][-1] == "Frank Herbert"
    assert [(t.prompt_tokens, t.completion_tokens) for t in turns] == [(50, 9), (50, 9)]


def test_each_model_turn_keeps_its_cost(tmp_path, capsys):
    """Issue 50, item 1: cost per step and per trajectory. Two OpenInference LLM spans,
    one recording ``llm.cost.total`` (0.0003), one only ``llm.cost.prompt`` (0.0001) and
    ``llm.cost.completion`` (0.00005): the turns keep 0.0003 and 0.00015, the question's
    trajectory 0.00045, as does the run's ``cost_usd``; ``inspect`` shows both."""
    from openinference.semconv.trace import SpanAttributes

    tracer, exporter = recorder()
    kind = SpanAttributes.OPENINFERENCE_SPAN_KIND
    with tracer.start_as_current_span("agent") as root:
        root.set_attribute(kind, "AGENT")
        root.set_attribute("input.value", "Who wrote Dune?")
        root.set_attribute("output.value", "Frank Herbert.")
        with tracer.start_as_current_span("llm") as llm:
            llm.set_attribute(kind, "LLM")
            out = "llm.output_messages.0.message.tool_calls.0.tool_call."
            llm.set_attribute(out + "id", "c1")
            llm.set_attribute(out + "function.name", "search")
            llm.set_attribute(out + "function.arguments", '{"query": "Dune author"}')
            llm.set_attribute("llm.cost.total", 0.0003)
        with tracer.start_as_current_span("search") as tool:
            tool.set_attribute(kind, "TOOL")
            tool.set_attribute("tool.name", "search")
            tool.set_attribute("input.value", '{"query": "Dune author"}')
            tool.set_attribute("output.value", "Dune is by Frank Herbert.")
        with tracer.start_as_current_span("llm") as llm:
            llm.set_attribute(kind, "LLM")
            llm.set_attribute("llm.output_messages.0.message.content", "Frank Herbert.")
            llm.set_attribute("llm.cost.prompt", 0.0001)
            llm.set_attribute("llm.cost.completion", 0.00005)
    path = tmp_path / "spans.json"
    path.write_text(json.dumps(otlp_json(exporter.get_finished_spans())))
    (got,) = load_traces(path, Leniency()).outputs.values()
    t = got.trajectory
    assert t is not None
    turns = [s for s in t.steps if isinstance(s, Turn)]
    assert [s.cost_usd for s in turns] == [pytest.approx(0.0003), pytest.approx(0.00015)]
    assert got.facts["cost_usd"] == pytest.approx(0.00045)
    res = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--traces", str(path), "--search-tool", "search",
                            "--output", str(res), "--include-details", "--no-history",
                            "--quiet"], capsys)
    assert code == 0, err
    qid = next(iter(json.loads(res.read_text())["per_query"]))
    code, text, _ = run_cli(["inspect", str(res), qid], capsys)
    flat = " ".join(text.split())
    assert "$0.000450)" in flat, flat  # the trajectory's heading
    assert 'model (agent): asked search({"query": "Dune author"})' in flat, flat
    assert "$0.000300" in flat and "$0.000150" in flat


def test_a_crashed_agent_has_no_answer_and_says_why(server, tmp_path, capsys):
    """Issue 61 item 13: a LangGraph agent whose model got HTTP 500 on its second turn;
    the root span has status ERROR and no output. Its answer was LangChain's generations
    JSON of the first turn (refusal 0, no note): it is missing with the span's error.
    Traced by the OpenInference instrumentor through the real OTLP/HTTP exporter into
    ragmark's receiver (what monitor --listen runs)."""
    from langchain.agents import create_agent
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from support.fake_llm_server import Reply, tool_call_reply

    @tool
    def search(query: str) -> str:
        """Search the corpus."""
        return "Dune is a 1965 novel by Frank Herbert."

    server.queue.extend([tool_call_reply("call_1", "search", {"query": "Dune"}),
                         Reply(status=500, body={"error": {"message": "model crashed"}})])
    import threading

    from openinference.instrumentation.langchain import LangChainInstrumentor
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    from ragmark.monitor.receiver import make_server

    # through the real OTLP/HTTP exporter into ragmark's receiver, as monitor --listen
    pytest.importorskip("langgraph")
    receiver, spool_writer = make_server("127.0.0.1:0", tmp_path / "spool")
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(
        endpoint=f"http://127.0.0.1:{receiver.server_address[1]}/v1/traces")))
    inst = LangChainInstrumentor()
    inst.instrument(tracer_provider=provider)
    try:
        model = ChatOpenAI(model="m", base_url=server.url, api_key="none", max_retries=0)
        with pytest.raises(Exception, match="500"):
            create_agent(model, [search]).invoke({"messages": [("user", "Who wrote Dune?")]})
        provider.force_flush()
    finally:
        inst.uninstrument()
        receiver.shutdown()
        receiver.server_close()
        spool_writer.close()
    path = tmp_path / "spool"
    (out,) = load_traces(path, Leniency()).outputs.values()
    assert out.answer is None
    assert out.no_answer is not None and out.no_answer.startswith(
        "no answer recorded: the run failed (")
    assert "500" in out.no_answer
    assert [c.name for c in out.trajectory.calls()] == ["search"]
    res = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--traces", str(path), "--metrics",
                            "refusal,tool_calls", "--output", str(res), "--include-details",
                            "--no-history", "--quiet"], capsys)
    q = json.loads(res.read_text())["queries"][0]
    assert q["answer"] in (None, "") and "generations" not in json.dumps(q.get("answer"))
    refusal = q["metrics"]["refusal"]
    assert refusal is None or refusal.get("value") is None
    assert "the run failed" in json.dumps(q)


def test_a_genai_agent_run_without_chat_spans_is_a_question(tmp_path):
    """Issue 61 item 20: an ``invoke_agent`` root with ``gen_ai.input.messages`` and
    ``gen_ai.output.messages`` and ``execute_tool`` children, no ``chat`` span, was left
    out as "neither a retriever nor an LLM span"."""
    tracer, exporter = recorder()
    with tracer.start_as_current_span("invoke_agent travel") as root:
        root.set_attribute("gen_ai.operation.name", "invoke_agent")
        root.set_attribute("gen_ai.agent.name", "travel")
        root.set_attribute("gen_ai.input.messages", json.dumps(
            [{"role": "user", "parts": [{"type": "text", "content": "Book flight 7."}]}]))
        root.set_attribute("gen_ai.output.messages", json.dumps(
            [{"role": "assistant", "parts": [{"type": "text", "content": "Booked."}]}]))
        with tracer.start_as_current_span("execute_tool book") as tool:
            tool.set_attribute("gen_ai.operation.name", "execute_tool")
            tool.set_attribute("gen_ai.tool.name", "book")
            tool.set_attribute("gen_ai.tool.call.id", "b1")
            tool.set_attribute("gen_ai.tool.call.arguments", '{"flight": 7}')
            tool.set_attribute("gen_ai.tool.call.result", "ok")
    path = tmp_path / "spans.json"
    path.write_text(json.dumps(otlp_json(exporter.get_finished_spans())))
    got = load_traces(path, Leniency())
    (out,) = got.outputs.values()
    assert got.dataset.samples[0].question == "Book flight 7." and out.answer == "Booked."
    assert [(c.name, c.arguments, c.result) for c in out.trajectory.calls()] == [
        ("book", {"flight": 7}, "ok")]


def test_a_partial_smolagents_trace_reads_its_question_and_answer(server, tmp_path):
    """Issue 61 item 17: a smolagents trace without its run span (its root one agent
    step, a CHAIN whose input is the step's memory) was refused as "no LLM span, and
    its root is a retriever", its question read as '{"memory_step": "ActionStep(...'.
    The question is the first LLM call's task, the answer the agent's final answer."""
    spans = [s for s in _smolagents_spans(server) if s.name != "ToolCallingAgent.run"]
    assert {s.attributes.get("openinference.span.kind") for s in spans} == {
        "CHAIN", "LLM", "TOOL"}
    path = tmp_path / "spans.json"
    path.write_text(json.dumps(otlp_json(spans)))
    got = load_traces(path, Leniency())
    assert [s.question for s in got.dataset.samples] == ["Who wrote Dune?"]
    (out,) = got.outputs.values()
    assert out.answer == "Frank Herbert" and out.no_answer is None
    assert [c.name for c in out.trajectory.calls()] == ["search"]
