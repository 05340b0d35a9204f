"""LangChain and LlamaIndex objects as the pipeline: ``kind = "langchain"`` or
``kind = "llamaindex"`` with ``target = "module:attribute"`` naming the object (or a
function of no arguments that builds it).

- LangChain: a retriever or any runnable, called with the question (``ainvoke`` when it
  has it, else ``invoke`` in a worker thread); a LangGraph graph whose state holds
  ``messages`` (an agent: ``create_agent``, ``create_react_agent``) with the conversation
  so far as its messages (a question alone: one message; a graph with a checkpointer
  keeps a thread a conversation and is sent each later turn's question alone), its
  final state's last AI message the answer and the messages from the question on the
  trajectory (the tool calls and their results;
  ``search_tools`` makes a search tool's calls the retrieval). A list of ``Document`` is
  the ranking (no answer); a mapping is read as ``create_retrieval_chain`` writes it (``answer``,
  ``context``) or as the older chains (``result`` / ``output``, ``source_documents``); a
  string or a message is the answer alone.
- LlamaIndex: a query engine (``aquery``: the response's text and its source nodes) or a
  retriever (``aretrieve``: the nodes, no answer).

A document's id is its ``id`` (LangChain) or node id (LlamaIndex), else the metadata's
``id``, ``doc_id`` or ``source``; its score the node's score or the metadata's ``score``
/ ``relevance_score``. The result is what a Python pipeline returns (``answer``,
``contexts``), so everything else (concurrency, timeouts, conversations) is the same.
"""

from __future__ import annotations

import asyncio
import inspect
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from ragmark.errors import ConfigError
from ragmark.pipelines.base import as_messages

KINDS = ("langchain", "llamaindex")


def _meta_id(meta: Mapping[str, Any]) -> str | None:
    for key in ("id", "doc_id", "source"):
        if meta.get(key) is not None:
            return str(meta[key])
    return None


def _score(meta: Mapping[str, Any]) -> float | None:
    for key in ("score", "relevance_score"):
        v = meta.get(key)
        if isinstance(v, int | float) and not isinstance(v, bool):
            return float(v)
    return None


def lc_context(doc: Any) -> dict[str, Any]:
    """A LangChain ``Document`` as a context."""
    meta = dict(getattr(doc, "metadata", None) or {})
    out: dict[str, Any] = {"text": str(getattr(doc, "page_content", ""))}
    cid = getattr(doc, "id", None) or _meta_id(meta)
    if cid is not None:
        out["id"] = str(cid)
    if (score := _score(meta)) is not None:
        out["score"] = score
    return out


def li_context(item: Any) -> dict[str, Any]:
    """A LlamaIndex ``NodeWithScore`` (or node) as a context."""
    node = getattr(item, "node", item)
    meta = dict(getattr(node, "metadata", None) or {})
    out: dict[str, Any] = {"text": str(node.get_content())}
    cid = _meta_id(meta) or getattr(node, "node_id", None)
    if cid is not None:
        out["id"] = str(cid)
    ref = getattr(node, "ref_doc_id", None)
    if ref is not None:
        out["doc_id"] = str(ref)
    score = getattr(item, "score", None)
    if isinstance(score, int | float):
        out["score"] = float(score)
    elif (s := _score(meta)) is not None:
        out["score"] = s
    return out


def _is_documents(value: Any) -> bool:
    return isinstance(value, list) and all(hasattr(d, "page_content") for d in value)


def _agent_state(value: Mapping[str, Any]) -> dict[str, Any]:
    """A LangGraph agent's final state (``{"messages": [...]}``): the answer its last AI
    message gives, and the messages in OpenAI's chat format (its trajectory)."""
    from langchain_core.messages import convert_to_openai_messages

    messages = convert_to_openai_messages(list(value["messages"]))
    last = next((m for m in reversed(messages) if m.get("role") == "assistant"
                 and not m.get("tool_calls")), None)
    content = None if last is None else last.get("content")
    if isinstance(content, list):  # content blocks: their texts
        content = "".join(b.get("text", "") for b in content if isinstance(b, Mapping))
    return {"answer": content or "", "messages": messages}


def lc_result(value: Any) -> dict[str, Any]:
    """What a LangChain runnable returned, as ``{"answer", "contexts"}`` (a LangGraph
    agent's state: ``{"answer", "messages"}``, its trajectory)."""
    if isinstance(value, Mapping) and isinstance(value.get("messages"), list) and all(
            hasattr(m, "type") for m in value["messages"]):
        return _agent_state(value)
    if _is_documents(value):
        return {"answer": None, "contexts": [lc_context(d) for d in value]}
    if isinstance(value, Mapping):
        answer = next((value[k] for k in ("answer", "result", "output") if k in value), None)
        docs: Any = next((value[k] for k in ("context", "source_documents") if k in value),
                         [])
        answer = getattr(answer, "content", answer)
        return {"answer": answer, "contexts": [lc_context(d) for d in docs]
                if _is_documents(docs) else docs}
    return {"answer": getattr(value, "content", value), "contexts": []}


def li_result(value: Any) -> dict[str, Any]:
    """What a LlamaIndex query engine or retriever returned, as ``{"answer", "contexts"}``."""
    if isinstance(value, list):
        return {"answer": None, "contexts": [li_context(n) for n in value]}
    text = getattr(value, "response", None)
    return {"answer": None if text is None else str(text),
            "contexts": [li_context(n) for n in getattr(value, "source_nodes", None) or []]}


def adapt(kind: str, obj: Any, name: str) -> Callable[..., Awaitable[dict[str, Any]]]:
    """An async function of the question that asks ``obj`` (a LangChain or LlamaIndex
    object) and returns the answer and contexts; a ConfigError, before any question,
    when ``obj`` is not something it can ask."""
    if inspect.isfunction(obj) and not inspect.signature(obj).parameters:
        obj = obj()  # a factory that builds the chain or the engine
    if kind == "langchain":
        call = _method(obj, ("ainvoke",), ("invoke",))
        if call is None:
            raise ConfigError(f"[pipeline] {name}: expected a LangChain retriever or "
                              f"runnable (with invoke or ainvoke), got {type(obj).__name__}")
        convert = lc_result
    else:
        call = _method(obj, ("aquery", "aretrieve"), ("query", "retrieve"))
        if call is None:
            raise ConfigError(f"[pipeline] {name}: expected a LlamaIndex query engine or "
                              f"retriever (with query or retrieve), got {type(obj).__name__}")
        convert = li_result

    if kind == "langchain" and _is_graph(obj):
        return _graph_turns(obj, call)

    async def ask(question: str) -> dict[str, Any]:
        return convert(await call(question))

    return ask


def _graph_turns(obj: Any, call: Callable[..., Awaitable[Any]]
                 ) -> Callable[..., Awaitable[dict[str, Any]]]:
    """A LangGraph graph asked a turn: its state the conversation so far (the earlier
    turns as messages, then the question). A graph with its own memory (a checkpointer)
    keeps one thread a conversation (``conversation``: its id), new for each run of
    ragmark: the first turn sent there carries the conversation so far (all of it,
    when a resumed conversation starts in a new process), each later one the question
    alone, so the graph answers from its own memory; a question outside a conversation
    gets a thread of its own. The turn's trajectory is the question and the messages
    after it."""
    memory = getattr(obj, "checkpointer", None) is not None
    run = uuid.uuid4().hex[:12]

    async def ask(question: str, history: Sequence[Mapping[str, Any]] | None = None,
                  conversation: str | None = None) -> dict[str, Any]:
        sent = as_messages(list(history or []), question)
        if not memory:
            got = lc_result(await call({"messages": sent}))
            held = 0
        else:
            key = uuid.uuid4().hex if conversation is None else f"{run}-{conversation}"
            thread = {"configurable": {"thread_id": f"ragmark-{key}"}}
            held = len(await _thread_messages(obj, thread))
            if held:  # the graph remembers the earlier turns: the question alone
                sent = sent[-1:]
            got = lc_result(await call({"messages": sent}, thread))
        if isinstance(got.get("messages"), list):
            got["messages"] = got["messages"][held + len(sent) - 1:]
        return got

    return ask


async def _thread_messages(obj: Any, thread: Mapping[str, Any]) -> list[Any]:
    """The messages a graph's checkpointer holds for ``thread`` (none for a new one)."""
    try:
        state = await obj.aget_state(thread)
    except NotImplementedError:  # a checkpointer without async methods
        state = await asyncio.to_thread(obj.get_state, thread)
    values = getattr(state, "values", None) or {}
    return list(values.get("messages") or [])


def _is_graph(obj: Any) -> bool:
    """A compiled LangGraph graph whose state holds ``messages`` (an agent)."""
    if not type(obj).__module__.startswith("langgraph") or not hasattr(obj, "get_graph"):
        return False
    try:
        fields = obj.get_input_jsonschema().get("properties", {})
    except Exception:  # noqa: BLE001 (a graph without a schema is asked as a runnable)
        return False
    return "messages" in fields


def _method(obj: Any, async_names: Sequence[str], sync_names: Sequence[str]
            ) -> Callable[..., Awaitable[Any]] | None:
    for n in async_names:
        if callable(getattr(obj, n, None)):
            return getattr(obj, n)  # type: ignore[no-any-return]
    for n in sync_names:
        fn = getattr(obj, n, None)
        if callable(fn):
            return _threaded(fn)
    return None


def _threaded(fn: Callable[..., Any]) -> Callable[..., Awaitable[Any]]:
    """``fn`` run in a worker thread, awaitable."""
    async def call(*args: Any) -> Any:
        return await asyncio.to_thread(fn, *args)

    return call
