"""An agent's trajectory from its trace's spans (issue 50, item 2), in start order:

- a model turn from each LLM span that is not part of a retrieval nor inside another LLM
  span: its text and the tool calls it asked for (OpenInference
  ``llm.output_messages.N.message.tool_calls.M.tool_call.id|function.name|
  function.arguments``; GenAI: the ``tool_call`` parts of ``gen_ai.output.messages``), its
  tokens (``llm.token_count.*``; ``gen_ai.usage.*``) and its time;
- a tool's run from each TOOL span not inside another (GenAI: an ``execute_tool``
  operation): the tool (``tool.name``; ``gen_ai.tool.name``), its arguments
  (``gen_ai.tool.call.arguments``, else ``input.value`` when it is a JSON object, else
  kept as text), its call id (``gen_ai.tool.call.id``, ``tool_call.id``, or the
  ``tool_call_id`` of the ToolMessage LangChain records as the output), its result
  (``gen_ai.tool.call.result``, ``output.value``, a ToolMessage's content) and its
  error (the span's error status; a ToolMessage with ``status: error``), and its time;
- a hand-off where the agent of a step (its nearest AGENT span: ``agent.name``,
  ``gen_ai.agent.name``, else the span's name) differs from the previous step's.

A trace with no TOOL or AGENT span, no tool call asked for and no model offered tools has
no trajectory (a plain RAG chain); an agent that answered without calling a tool has one,
its calls none. Agent frameworks record the conversation as their root's input and output
(LangGraph: ``{"messages": [...]}``; smolagents: ``{"task": ...}``): :func:`said` reads
the question and the answer from it. smolagents' ``final_answer`` tool is the model's
answer, not a step.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ragmark.data.logged import number
from ragmark.data.otlp import Span
from ragmark.data.trace_spans import Trace
from ragmark.trajectory import Call, Handoff, Step, ToolRun, Trajectory, Turn, parse_arguments

_OUT = "llm.output_messages."


def _json(value: Any) -> Any:
    if isinstance(value, str) and value[:1] in "[{":
        try:
            return json.loads(value)
        except ValueError:
            return None
    return value


def _number(attrs: Mapping[str, Any], *keys: str) -> int | None:
    v = next((attrs[k] for k in keys if isinstance(attrs.get(k), int | float)
              and not isinstance(attrs.get(k), bool)), None)
    return None if v is None else int(v)


def _sum_or_first(attrs: Mapping[str, Any], total: str, *parts: tuple[str, ...]
                  ) -> float | None:
    """``total`` as recorded, else the sum of the parts recorded (each the first of its
    names present); None when none is."""
    def first(keys: tuple[str, ...]) -> float | None:
        return next((v for v in (number(attrs.get(k)) for k in keys) if v is not None), None)

    got = first((total,))
    if got is not None:
        return got
    found = [v for v in (first(p) for p in parts) if v is not None]
    return sum(found) if found else None


def span_cost(attrs: Mapping[str, Any]) -> float | None:
    """An LLM call's cost in US dollars as its span records it (``llm.cost.total``, else
    ``llm.cost.prompt`` + ``llm.cost.completion``)."""
    return _sum_or_first(attrs, "llm.cost.total", ("llm.cost.prompt",),
                         ("llm.cost.completion",))


def span_tokens(attrs: Mapping[str, Any]) -> float | None:
    """An LLM call's tokens as its span records them (``llm.token_count.total``, else
    prompt + completion, OpenInference's or the GenAI conventions' names)."""
    return _sum_or_first(attrs, "llm.token_count.total",
                         ("llm.token_count.prompt", "gen_ai.usage.input_tokens",
                          "gen_ai.usage.prompt_tokens"),
                         ("llm.token_count.completion", "gen_ai.usage.output_tokens",
                          "gen_ai.usage.completion_tokens"))


def _seconds(span: Span) -> float | None:
    return (span.end - span.start) / 1e9 if span.end > span.start else None


def _asked(span: Span) -> tuple[str, list[Call]]:
    """An LLM span's text and the calls it asked for."""
    a = span.attributes
    calls: dict[tuple[int, int], dict[str, Any]] = {}
    for key, v in a.items():
        if key.startswith(_OUT) and ".message.tool_calls." in key:
            head, _, rest = key[len(_OUT):].partition(".message.tool_calls.")
            m, _, field = rest.partition(".tool_call.")
            if head.isdigit() and m.isdigit():
                calls.setdefault((int(head), int(m)), {})[field] = v
    text = "".join(str(v) for k, v in sorted(a.items()) if k.startswith(_OUT)
                   and k.endswith(".message.content"))
    out = [_call(c.get("function.name"), c.get("function.arguments"), c.get("id"))
           for _, c in sorted(calls.items())]
    for m in _json(a.get("gen_ai.output.messages")) or []:
        for p in (m.get("parts") or []) if isinstance(m, Mapping) else []:
            if isinstance(p, Mapping) and p.get("type") == "tool_call":
                out.append(_call(p.get("name"), p.get("arguments"), p.get("id")))
            elif isinstance(p, Mapping) and p.get("type") == "text" and not text:
                text = str(p.get("content") or "")
    return text, [c for c in out if c.name]


def _call(name: Any, arguments: Any, cid: Any, **more: Any) -> Call:
    args, raw = parse_arguments(arguments)
    return Call(str(name or ""), args, None if cid in (None, "") else str(cid), raw, **more)


def _tool_message(value: Any) -> Mapping[str, Any] | None:
    """The ToolMessage LangChain records as a tool span's output (``{"type": "tool",
    "data": {...}}``), or None."""
    got = _json(value)
    if isinstance(got, Mapping) and got.get("type") == "tool" and isinstance(
            got.get("data"), Mapping):
        return got["data"]
    return None


def _ran(span: Span) -> Call:
    a = span.attributes
    message = _tool_message(a.get("output.value"))
    result = a.get("gen_ai.tool.call.result", a.get("output.value"))
    cid = a.get("gen_ai.tool.call.id", a.get("tool_call.id"))
    error = span.error
    if message is not None:
        result, cid = message.get("content"), cid or message.get("tool_call_id")
        if message.get("status") == "error":
            error = error or str(result)
    given = a.get("gen_ai.tool.call.arguments", a.get("input.value"))
    framed = _json(given)
    if isinstance(framed, Mapping) and isinstance(framed.get("kwargs"), Mapping) and not \
            framed.get("args"):  # smolagents records a call as {"args": [], "kwargs": {...}}
        given = framed["kwargs"]
    args, raw = (None, None) if given is None else parse_arguments(given)
    text = None if result is None or error is not None else (
        result if isinstance(result, str) else json.dumps(result, ensure_ascii=False))
    return Call(tool_name(span), args, None if cid in (None, "") else str(cid), raw, text, error,
                _seconds(span), asked=False, ran=True)


def tool_name(span: Span) -> str:
    """The tool a tool span ran (``tool.name``, ``gen_ai.tool.name``, else its name)."""
    a = span.attributes
    return str(a.get("tool.name") or a.get("gen_ai.tool.name") or span.name)


def _agent(trace: Trace, span: Span, agents: Mapping[str, Span]) -> str | None:
    for sid in trace.above(span):
        if sid in agents:
            a = agents[sid].attributes
            return str(a.get("agent.name") or a.get("gen_ai.agent.name") or agents[sid].name)
    return None


def trajectory_of_trace(trace: Trace) -> Trajectory | None:
    """The trace's steps (see the module), or None when it tells of no agent."""
    kinds = {s.span_id: s.kind for s in trace.spans}
    agents = {s.span_id: s for s in trace.spans if s.kind == "AGENT"}
    steps: list[Step] = []
    last: str | None = None
    runs = {s.span_id: _ran(s) for s in trace.spans if s.kind == "TOOL"}  # read once
    ran = {r.id for r in runs.values()} - {None}
    for s in sorted(trace.spans, key=lambda s: (s.start, s.end)):
        inside = [kinds.get(a) for a in trace.above(s)]
        if s.kind == "LLM" and "LLM" not in inside and not trace.in_retrieval(s):
            agent = _agent(trace, s, agents)
            told = [ToolRun(c, agent) for c in _answered(s, steps) if c.id not in ran]
            ran |= {r.call.id for r in told}
            found: list[Turn | ToolRun] = [*told, _turn(s, agent)]
        elif s.kind == "TOOL" and "TOOL" not in inside and \
                runs[s.span_id].name not in FINAL_ANSWER:
            found = [ToolRun(runs[s.span_id], _agent(trace, s, agents))]
        else:
            continue
        for step in found:
            if step.agent is not None and last is not None and step.agent != last:
                steps.append(Handoff(last, step.agent))
            last = step.agent or last
            steps.append(step)
    if not agents and not any(isinstance(s, ToolRun) or isinstance(s, Turn) and s.calls
                              for s in steps) and not any(map(_offered, trace.spans)):
        return None
    return Trajectory(tuple(steps))


def _offered(span: Span) -> bool:
    """Whether an LLM span's model was offered tools (OpenInference ``llm.tools.*``, or
    ``tools`` among its invocation parameters; GenAI ``gen_ai.tool.definitions``): an
    agent's turn even when it called none."""
    if span.kind != "LLM":
        return False
    a = span.attributes
    params = _json(a.get("llm.invocation_parameters"))
    return (any(k.startswith("llm.tools.") for k in a) or "gen_ai.tool.definitions" in a
            or isinstance(params, Mapping) and bool(params.get("tools")))


def _answered(span: Span, before: list[Step]) -> list[Call]:
    """The tool results an LLM span's input messages hold (the app ran the tools and
    sent their results back: OpenInference ``llm.input_messages.N.message`` of role tool;
    GenAI ``tool_call_response`` parts), as runs of the calls asked for earlier; the
    only record of a tool's run when the app traces no TOOL span."""
    names = {c.id: c.name for st in before if isinstance(st, Turn) for c in st.calls if c.id}
    a = span.attributes
    got: dict[str, tuple[str | None, Any]] = {}
    for key, v in a.items():
        head, _, field = key.removeprefix("llm.input_messages.").partition(".message.")
        if key.startswith("llm.input_messages.") and head.isdigit() and field == "role" \
                and v == "tool":
            cid = a.get(f"llm.input_messages.{head}.message.tool_call_id")
            if cid:
                got[str(cid)] = (a.get(f"llm.input_messages.{head}.message.name"),
                                 a.get(f"llm.input_messages.{head}.message.content"))
    for m in _json(a.get("gen_ai.input.messages")) or []:
        for p in (m.get("parts") or []) if isinstance(m, Mapping) else []:
            if isinstance(p, Mapping) and p.get("type") == "tool_call_response" and p.get("id"):
                got[str(p["id"])] = (None, p.get("response"))
    out = []
    for cid, (name, result) in got.items():
        if cid in names or name:
            text = result if isinstance(result, str) or result is None else json.dumps(
                result, ensure_ascii=False)
            out.append(Call(str(names.get(cid) or name), None, cid, None, text, asked=False,
                            ran=True))
    return out


FINAL_ANSWER = frozenset({"final_answer"})
"""Tools that give the agent's final answer rather than act (smolagents' ``final_answer``):
a call to one is the model's last word, not a step of the trajectory."""


def _turn(span: Span, agent: str | None) -> Turn:
    text, calls = _asked(span)
    final = [c for c in calls if c.name in FINAL_ANSWER]
    if final:  # the model's answer, given as a call
        said = (final[0].arguments or {}).get("answer")
        text = said if isinstance(said, str) else text
        calls = [c for c in calls if c.name not in FINAL_ANSWER]
    a = span.attributes
    return Turn(text, tuple(calls), agent,
                _number(a, "llm.token_count.prompt", "gen_ai.usage.input_tokens"),
                _number(a, "llm.token_count.completion", "gen_ai.usage.output_tokens"),
                _seconds(span), span_cost(a))


_ROLES = {"user": "user", "human": "user", "assistant": "ai", "ai": "ai"}


def said(value: Any, role: str, otherwise: str | None = None) -> str | None:
    """The last ``role`` ("user" or "ai") message's text in an agent's conversation as
    its framework records it (``{"messages": [...]}``: LangChain's serialised messages,
    ``[role, text]`` pairs, or ``{"role", "content"}``; an AI message that only asks for
    tools is not an answer); ``otherwise`` when ``value`` is not a conversation, None
    when it is one without such a message (an agent stopped on a tool's result)."""
    got = _json(value)
    if role == "user" and isinstance(got, Mapping) and isinstance(got.get("task"), str):
        return str(got["task"])  # smolagents' run(task)
    messages = got.get("messages") if isinstance(got, Mapping) else None
    if not isinstance(messages, list):
        return otherwise
    for m in reversed(messages):
        body: Mapping[str, Any]
        if isinstance(m, list | tuple) and len(m) == 2:
            who, body = m[0], {"content": m[1]}
        elif isinstance(m, Mapping):
            inner = m.get("data") or m.get("kwargs") or m
            body = inner if isinstance(inner, Mapping) else {}
            who = m.get("role") or m.get("type") or body.get("type")
        else:
            continue
        content = body.get("content")
        if _ROLES.get(str(who)) == role and isinstance(content, str) and content.strip() \
                and not body.get("tool_calls"):
            return content
    return None


def generated_text(text: str) -> str | None:
    """An LLM span's output as the answer: LangChain's serialised result
    (``{"generations": [[{"text", "message"}]]}``) read as its last generation's text
    (None when that is empty: a failed or tool-only call), any other text as it is.

    >>> generated_text('{"generations": [[{"text": "Paris.", "type": "ChatGeneration"}]]}')
    'Paris.'
    >>> generated_text('{"generations": [[{"text": ""}]], "llm_output": null}') is None
    True
    """
    if not text.lstrip().startswith("{") or '"generations"' not in text:
        return text
    try:
        got = json.loads(text)
    except ValueError:
        return text
    gens = got.get("generations") if isinstance(got, dict) else None
    if not isinstance(gens, list):
        return text
    flat = [g for batch in gens if isinstance(batch, list) for g in batch
            if isinstance(g, dict)]
    if not flat:
        return None
    last = flat[-1]
    said = last.get("text")
    if not (isinstance(said, str) and said.strip()):
        msg = last.get("message")
        body = msg.get("kwargs", msg) if isinstance(msg, dict) else {}
        said = body.get("content") if isinstance(body, dict) else None
    return said if isinstance(said, str) and said.strip() else None


def asked_of(span: Span) -> str | None:
    """The first user message an LLM span was sent (OpenInference's
    ``llm.input_messages.N.message``: its ``content``, or its text parts), without
    smolagents' "New task:" line: a trace's question when its root does not say it."""
    a = span.attributes
    for n in range(64):
        role = a.get(f"llm.input_messages.{n}.message.role")
        if role is None:
            return None
        if role != "user":
            continue
        text = a.get(f"llm.input_messages.{n}.message.content")
        if not isinstance(text, str):
            text = "".join(str(a.get(f"llm.input_messages.{n}.message.contents.{m}"
                                     ".message_content.text", "")) for m in range(16))
        text = text.removeprefix("New task:").strip()
        return text or None
    return None
