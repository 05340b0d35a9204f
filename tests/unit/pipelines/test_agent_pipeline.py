"""A LangGraph agent as the system under test (issue 50, item 2): ``kind = "langchain"``
naming a graph built by LangChain's ``create_agent``; ragmark asks it each question as
its first message, reads the answer from its last AI message and the trajectory from
its messages, and ``search_tools`` makes the search tool's calls its retrieval (each
call a hop of the documents it returned)."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest
from support.cli import run_cli

pytest.importorskip("langchain")
pytest.importorskip("langgraph")

P1 = "BM25 ranks documents by term frequency and inverse document frequency."
P2 = "A reranker reorders the candidate passages with a stronger cross-encoder model."

MODULE = f'''
import json

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import tool

DOCS = {{"d1": {P1!r}, "d2": {P2!r}}}


@tool
def search(query: str) -> str:
    """Search the passages."""
    found = [d for d, text in DOCS.items() if set(query.lower().split()) & set(
        text.lower().split())]
    return json.dumps([{{"id": d, "text": DOCS[d]}} for d in found])


class Scripted(FakeMessagesListChatModel):
    def bind_tools(self, tools, **kwargs):
        return self


def agent():
    return create_agent(Scripted(responses=[
        AIMessage(content="", tool_calls=[{{"id": "a", "name": "search",
                                           "args": {{"query": "reranker"}}}}]),
        AIMessage(content="", tool_calls=[{{"id": "b", "name": "search",
                                           "args": {{"query": "BM25 ranks"}}}}]),
        AIMessage(content="By term frequency.")]), [search])
'''


def test_a_langgraph_agent_run_by_ragmark(tmp_path, monkeypatch, capsys):
    name = "agent_" + tmp_path.name.replace("-", "_")
    (tmp_path / "svc").mkdir()
    (tmp_path / "svc" / f"{name}.py").write_text(textwrap.dedent(MODULE))
    monkeypatch.setattr(sys, "path", [str(tmp_path / "svc"), *sys.path])
    ds = tmp_path / "set.jsonl"
    ds.write_text(json.dumps({
        "id": "q1", "question": "What does BM25 rank documents by?",
        "ground_truth_contexts": [P1], "expected_answer": "By term frequency.",
        "expected_tool_calls": [{"name": "search", "arguments": {"query": "BM25"}}],
        "tool_args_match": "ignore"}) + "\n")
    cfg = tmp_path / "agent.toml"
    cfg.write_text(f'name = "agent"\n[pipeline]\nkind = "langchain"\ntarget = "{name}:agent"\n'
                   'python_path = ["svc"]\nsearch_tools = ["search"]\n')
    out = tmp_path / "r.json"
    try:
        code, _, err = run_cli(["run", "--dataset", str(ds), "--config", str(cfg),
                                "--metrics", "mrr,exact_match,trajectory_superset,tool_calls",
                                "--output", str(out), "--include-details", "--no-history",
                                "--quiet"], capsys)
    finally:
        sys.modules.pop(name, None)
    assert code == 0, err
    got = json.loads(out.read_text())
    (q,) = got["queries"]
    assert q["answer"] == "By term frequency."
    steps = q["trajectory"]
    assert [s["kind"] for s in steps] == ["model", "tool", "model", "tool", "model"]
    assert [c["arguments"] for s in steps if s["kind"] == "model" for c in s["tool_calls"]
            ] == [{"query": "reranker"}, {"query": "BM25 ranks"}]
    # the first search found only the reranker passage; the second found BM25's
    assert [(h["name"], h["size"], h["mrr"]) for h in q["hops"]] == [
        ("search", 1, 0.0), ("search", 1, 1.0)]
    assert q["contexts"] == [P2, P1]
    assert got["metrics"] == {"mrr": 0.5, "exact_match": 1.0, "trajectory_superset": 1.0,
                              "tool_calls": 2.0}


SDK_MODULE = '''
import json
import os

from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool
from openai import AsyncOpenAI


@function_tool
def search(query: str) -> str:
    """Search the passages."""
    return json.dumps([{"id": "d1", "text": "BM25 ranks documents by term frequency and "
                                            "inverse document frequency."}])


async def ask(question):
    client = AsyncOpenAI(base_url=os.environ["AGENT_BASE_URL"], api_key="none")
    agent = Agent(name="researcher", instructions="Search, then answer.", tools=[search],
                  model=OpenAIChatCompletionsModel(model="m", openai_client=client))
    result = await Runner.run(agent, question)
    return {"answer": result.final_output, "messages": result.to_input_list()}
'''


def test_an_openai_agents_sdk_agent_as_a_python_pipeline(server, tmp_path, monkeypatch,
                                                         capsys):
    """The OpenAI Agents SDK's run, returned as its Responses API items
    (``result.to_input_list()``: function_call, function_call_output, message): the
    call, its arguments and result, and the answer come through."""
    pytest.importorskip("agents")
    from support.fake_llm_server import chat_reply, tool_call_reply

    monkeypatch.setenv("AGENT_BASE_URL", server.url)
    monkeypatch.setenv("OPENAI_AGENTS_DISABLE_TRACING", "1")
    server.queue.extend([tool_call_reply("c1", "search", {"query": "BM25"}),
                         chat_reply("By term frequency.")])
    name = "sdk_" + tmp_path.name.replace("-", "_")
    (tmp_path / "svc").mkdir()
    (tmp_path / "svc" / f"{name}.py").write_text(textwrap.dedent(SDK_MODULE))
    monkeypatch.setattr(sys, "path", [str(tmp_path / "svc"), *sys.path])
    ds = tmp_path / "set.jsonl"
    ds.write_text(json.dumps({
        "id": "q1", "question": "What does BM25 rank documents by?",
        "ground_truth_contexts": [P1], "expected_answer": "By term frequency.",
        "expected_tool_calls": [{"name": "search", "arguments": {"query": "BM25"}}]}) + "\n")
    cfg = tmp_path / "sdk.toml"
    cfg.write_text(f'name = "sdk"\n[pipeline]\nkind = "python"\ntarget = "{name}:ask"\n'
                   'python_path = ["svc"]\nsearch_tools = ["search"]\n')
    out = tmp_path / "r.json"
    try:
        code, _, err = run_cli(["run", "--dataset", str(ds), "--config", str(cfg), "--metrics",
                                "mrr,exact_match,trajectory_strict", "--output", str(out),
                                "--include-details", "--no-history", "--quiet"], capsys)
    finally:
        sys.modules.pop(name, None)
    assert code == 0, err
    got = json.loads(out.read_text())
    (q,) = got["queries"]
    assert [s["kind"] for s in q["trajectory"]] == ["model", "tool", "model"]
    assert q["trajectory"][0]["tool_calls"] == [
        {"name": "search", "id": "c1", "arguments": {"query": "BM25"}}]
    assert json.loads(q["trajectory"][1]["result"])[0]["id"] == "d1"
    assert got["metrics"] == {"mrr": 1.0, "exact_match": 1.0, "trajectory_strict": 1.0}


MEMORY = '''
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph


def reply(state):
    said = [m.content for m in state["messages"] if m.type == "human"]
    return {"messages": [AIMessage(content=f"{len(said)} user messages; last: {said[-1]}")]}


def _build():
    g = StateGraph(MessagesState)
    g.add_node("reply", reply)
    g.add_edge(START, "reply")
    return g.compile(checkpointer=InMemorySaver())


GRAPH = _build()


def graph():
    return GRAPH
'''


def test_a_langgraph_graph_with_memory_gets_each_conversation_so_far(tmp_path, monkeypatch,
                                                                     capsys):
    """A graph compiled with a checkpointer (its own memory) keeps one thread a
    conversation: turn 1 is sent there, turn 2 is sent its question alone and the graph
    remembers turn 1 (2 user messages; the thread holds the 4 messages once, not the
    first turn twice); a conversation apart has a thread of its own."""
    name = "memory_" + tmp_path.name.replace("-", "_")
    (tmp_path / "svc").mkdir()
    (tmp_path / "svc" / f"{name}.py").write_text(MEMORY)
    monkeypatch.setattr(sys, "path", [str(tmp_path / "svc"), *sys.path])
    ds = tmp_path / "talks.jsonl"
    ds.write_text("".join(json.dumps(c) + "\n" for c in [
        {"conversation_id": "a", "turns": [{"question": "first?", "expected_answer": "x",
                                            "ground_truth_contexts": ["some passage"]},
                                           {"question": "second?", "expected_answer": "x"}]},
        {"conversation_id": "b", "turns": [{"question": "other?", "expected_answer": "x"}]}]))
    cfg = tmp_path / "graph.toml"
    cfg.write_text(f'name = "graph"\n[pipeline]\nkind = "langchain"\ntarget = "{name}:graph"\n'
                   'python_path = ["svc"]\n')
    out = tmp_path / "r.json"
    try:
        code, _, err = run_cli(["run", "--dataset", str(ds), "--config", str(cfg),
                                "--metrics", "exact_match", "--output", str(out),
                                "--include-details", "--no-history", "--quiet"], capsys)
        module = sys.modules[name]
    finally:
        sys.modules.pop(name, None)
    assert code == 0, err
    threads = sorted(
        [m.content for m in module.GRAPH.get_state(
            {"configurable": {"thread_id": t}}).values["messages"]]
        for t in module.GRAPH.checkpointer.storage)
    assert threads == [["first?", "1 user messages; last: first?", "second?",
                        "2 user messages; last: second?"],
                       ["other?", "1 user messages; last: other?"]]
    got = {q["id"]: q for q in json.loads(out.read_text())["queries"]}
    assert got["a#1"]["answer"] == "1 user messages; last: first?"
    assert got["a#2"]["answer"] == "2 user messages; last: second?"
    assert got["b#1"]["answer"] == "1 user messages; last: other?"
    # the turn's trajectory starts at its question: not the earlier turns' answers
    assert got["a#2"]["trajectory"] == [{"kind": "model", "content": "2 user messages; "
                                         "last: second?", "tool_calls": []}]


def test_a_conversation_resumed_in_a_new_process_sends_the_graph_its_earlier_turns(
        tmp_path, monkeypatch):
    """A killed simulation resumed: the new process's thread is new (the old one's
    memory may be gone with the old process), so its first turn carries the earlier
    turns as messages; the next turn goes to that thread with the question alone."""
    import asyncio
    import importlib

    from ragmark.pipelines.adapters import adapt

    name = "resume_" + tmp_path.name.replace("-", "_")
    (tmp_path / f"{name}.py").write_text(MEMORY)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        module = importlib.import_module(name)
        first, second = adapt("langchain", module.graph, "g"), adapt("langchain",
                                                                     module.graph, "g")
        said = asyncio.run(first("one?", [], conversation="c"))
        assert said["answer"] == "1 user messages; last: one?"
        history = [{"question": "one?", "answer": said["answer"]}]
        assert asyncio.run(second("two?", history, conversation="c"))["answer"] == \
            "2 user messages; last: two?"
        history.append({"question": "two?", "answer": "2 user messages; last: two?"})
        again = asyncio.run(second("three?", history, conversation="c"))
        assert again["answer"] == "3 user messages; last: three?"
        assert len(module.GRAPH.checkpointer.storage) == 2  # one thread a process
        assert [m["content"] for m in again["messages"]] == ["three?", again["answer"]]
    finally:
        sys.modules.pop(name, None)
