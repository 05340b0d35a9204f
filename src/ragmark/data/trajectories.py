"""Trajectories in logged outputs, and the tool calls a set expects.

A logged output (a line of ``--outputs``, an HTTP pipeline's answer) may tell what the
agent did in one of two shapes:

- ``messages``: the conversation in OpenAI's chat format, as agents log it: assistant
  messages with ``tool_calls`` (``[{"id", "type": "function", "function": {"name",
  "arguments"}}]``, the arguments a JSON text or an object; the older ``function_call``
  too), ``tool`` messages with the ``tool_call_id`` they answer and the result as their
  ``content`` (``"status": "error"``, as LangChain's ToolMessage has it, or an ``error``
  field, marks a failed call); ``system`` and ``user`` messages are the question's, not
  steps; ``ai`` and ``human`` are read as ``assistant`` and ``user``; the items of
  OpenAI's Responses API (``function_call``, ``function_call_output`` by its
  ``call_id``, an assistant ``message`` of ``output_text`` parts: what the OpenAI
  Agents SDK's ``result.to_input_list()`` gives) are read among them;
- ``tool_calls``: a plain list of the calls made, ``[{"name", "arguments", "id"?,
  "result"?, "error"?, "latency_s"?}]`` (or OpenAI's ``{"function": {...}}`` items).

An evaluation item may give ``expected_tool_calls`` (``[{"name", "arguments"?}]``, in
order), ``tool_args_match`` (how arguments are compared: exact, the default; ignore;
subset; superset, as agentevals' modes; or rules, each argument a list of acceptable
values as the Berkeley Function Calling Leaderboard gives them) and
``tool_args_overrides`` (per tool name, a mode or the list of argument names
compared). A wrong shape is an error naming the item and the field.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping
from dataclasses import replace
from typing import Any

from ragmark.case import Context, Output
from ragmark.data.call_args import (  # noqa: F401 (the loaders' names for them)
    ODD_ARGUMENTS,
    TWICE_ENCODED,
    checked_calls,
    decoded,
)
from ragmark.data.files import Where, describe
from ragmark.data.leniency import Leniency
from ragmark.trajectory import Call, Expected, Handoff, Step, ToolRun, Trajectory, Turn
from ragmark.trajectory import parse_arguments as _arguments

ARG_MODES = ("exact", "ignore", "subset", "superset", "rules")
EXPECTED_FIELDS = frozenset({"expected_tool_calls", "tool_args_match", "tool_args_overrides",
                             "tools_compared", "failed_calls", "tool_errors"})
"""An item's fields that say which tool calls it expects."""
TRAJECTORY_FIELDS = frozenset({"messages", "tool_calls"})
"""A logged output's fields that tell its trajectory."""
ARG_KEYS = ("arguments", "args", "kwargs")
"""Where a call gives its arguments: OpenAI's, LangChain's, tau-bench's; the first present."""
CALL_KEYS = frozenset({"name", "id", "type", "function", *ARG_KEYS})
"""The keys an expected call is read from (others are counted in a warning)."""
UNKNOWN_CALL_KEYS = "expected calls with keys ragmark does not read (left out)"
ROLES = {"assistant": "assistant", "ai": "assistant", "tool": "tool", "function": "tool",
         "user": "user", "human": "user", "system": "system", "developer": "system"}


def trajectory_of(obj: Mapping[str, Any], where: Where) -> Trajectory | None:
    """The trajectory a logged output gives (``messages`` or ``tool_calls``), or None."""
    if obj.get("messages") is not None:
        return _from_messages(obj["messages"], where)
    if obj.get("tool_calls") is not None:
        calls = _list(obj["tool_calls"], where, "tool_calls")
        return Trajectory(tuple(ToolRun(_plain_call(c, where, f"tool_calls[{i}]"))
                                for i, c in enumerate(calls)))
    return None


def final_answer(trajectory: Trajectory) -> str | None:
    """The answer of a trajectory whose log gives no ``answer``: the text of its last
    step when that is a model turn that asked for no tool (hand-offs aside); None when
    it ends on a tool call or a tool's result (tau-bench's transfer to a human): an
    earlier text was not the answer. The one rule: ``run`` and ``inspect`` both read
    the answer this way."""
    last = next((s for s in reversed(trajectory.steps) if isinstance(s, Turn | ToolRun)),
                None)
    return last.content if isinstance(last, Turn) and not last.calls else None


def _list(value: Any, where: Where, name: str) -> list[Any]:
    if not isinstance(value, list):
        raise where.error(f"expected a list, got {describe(value)}", name)
    return value


def _object(value: Any, where: Where, name: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise where.error(f"expected an object, got {describe(value)}", name)
    return value


def _name(value: Any, where: Where, name: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise where.error(f"expected the tool's name (a non-empty string), got "
                          f"{describe(value)}", name)
    return value


def _text(value: Any) -> str:
    """A message's content as text (a list of parts: their texts joined)."""
    if value is None:
        return ""
    if isinstance(value, list):
        return "".join(p.get("text", "") if isinstance(p, Mapping) else str(p)
                       for p in value)
    return value if isinstance(value, str) else str(value)


def _requested(c: Any, where: Where, at: str) -> Call:
    """A call a model asked for: OpenAI's ``{"id", "function": {"name", "arguments"}}``,
    LangChain's ``{"id", "name", "args"}`` or tau-bench's ``{"name", "kwargs"}``."""
    c = _object(c, where, at)
    fn = c.get("function")
    if fn is not None:
        fn = _object(fn, where, f"{at}.function")
        name, given = _name(fn.get("name"), where, f"{at}.function.name"), fn.get("arguments")
    else:
        name = _name(c.get("name"), where, f"{at}.name")
        given = next((c[k] for k in ARG_KEYS if k in c), None)
    args, raw = _arguments(given)
    cid = c.get("id")
    return Call(name, args, str(cid) if cid not in (None, "") else None, raw)


def _plain_call(c: Any, where: Where, at: str) -> Call:
    call = _requested(c, where, at)
    c = _object(c, where, at)
    error = c.get("error")
    latency = c.get("latency_s")
    if latency is not None and (isinstance(latency, bool)
                                or not isinstance(latency, int | float) or latency < 0):
        raise where.error(f"expected a non-negative number, got {describe(latency)}",
                          f"{at}.latency_s")
    ran = "result" in c or error is not None
    result = c.get("result")
    return Call(call.name, call.arguments, call.id, call.raw,
                None if result is None else _text(result) if not isinstance(
                    result, Mapping | list) else _json(result),
                None if error is None else _text(error), latency, ran=ran)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _from_messages(value: Any, where: Where) -> Trajectory:
    messages = _list(value, where, "messages")
    steps: list[Step] = []
    asked: dict[str, str] = {}  # call id -> tool name
    agent: str | None = None
    for i, m in enumerate(messages):
        at = f"messages[{i}]"
        m = _object(m, where, at)
        item = _response_item(m, where, at, asked)
        if item is not None:  # OpenAI's Responses API items (the Agents SDK's)
            if isinstance(item, Turn) and steps and isinstance(steps[-1], Turn) and \
                    steps[-1].calls and item.calls and not item.content:
                item = Turn(steps[-1].content, (*steps[-1].calls, *item.calls), agent)
                steps.pop()  # calls of one response are one turn
            steps.append(item)
            continue
        role = ROLES.get(str(m.get("role", m.get("type", ""))).lower())
        if role is None:
            raise where.error(f"expected a role among {', '.join(sorted(ROLES))}, got "
                              f"{describe(m.get('role'))}", f"{at}.role")
        if role == "assistant":
            name = m.get("name") if isinstance(m.get("name"), str) else None
            if name and agent and name != agent:
                steps.append(Handoff(agent, name))
            agent = name or agent
            given = m.get("tool_calls") or []
            calls = [_requested(c, where, f"{at}.tool_calls[{j}]")
                     for j, c in enumerate(_list(given, where, f"{at}.tool_calls"))]
            if m.get("function_call") is not None:
                calls.append(_requested({"function": m["function_call"]}, where,
                                        f"{at}.function_call"))
            asked |= {c.id: c.name for c in calls if c.id}
            steps.append(Turn(_text(m.get("content")), tuple(calls), agent))
        elif role == "tool":
            cid = m.get("tool_call_id")
            cid = str(cid) if cid not in (None, "") else None
            if cid is not None and cid not in asked:  # named or not: an orphan is refused
                raise where.error(f"a tool message answers the call {cid!r}, which no "
                                  "assistant message before it asked for (check the "
                                  "messages' order and ids)", f"{at}.tool_call_id")
            name = m.get("name") if isinstance(m.get("name"), str) and m.get("name") \
                else asked.get(cid or "")
            if not name:
                raise where.error("a tool message names no tool: give 'name', or the "
                                  "'tool_call_id' of a call an assistant message asked for",
                                  f"{at}.tool_call_id")
            failed = m.get("status") == "error" or m.get("error") is not None
            text = _text(m.get("content"))
            error = (_text(m.get("error")) or text) if failed else None
            steps.append(ToolRun(Call(name, None, cid, None, None if failed else text, error,
                                      asked=False, ran=True), agent))
    return Trajectory(tuple(steps))


def _response_item(m: Mapping[str, Any], where: Where, at: str, asked: dict[str, str]
                   ) -> Step | None:
    """A Responses API item as a step (``function_call``: a turn asking for the call;
    ``function_call_output``: its run, by ``call_id``; an assistant ``message`` whose
    ``content`` is ``output_text`` parts: a turn of text); None for anything else."""
    kind = m.get("type")
    if kind == "function_call":
        args, raw = _arguments(m.get("arguments"))
        cid = m.get("call_id") or m.get("id")
        name = _name(m.get("name"), where, f"{at}.name")
        if cid:
            asked[str(cid)] = name
        return Turn("", (Call(name, args, None if not cid else str(cid), raw),))
    if kind == "function_call_output":
        cid = str(m.get("call_id") or "")
        if cid not in asked:
            raise where.error("a function_call_output answers no function_call before it",
                              f"{at}.call_id")
        return ToolRun(Call(asked[cid], None, cid, None, _text(m.get("output")), asked=False,
                            ran=True))
    if kind == "message" and m.get("role") == "assistant" and isinstance(m.get("content"), list):
        return Turn("".join(str(p.get("text", "")) for p in m["content"]
                            if isinstance(p, Mapping) and p.get("type") == "output_text"))
    return None


def expected_of(obj: Mapping[str, Any], where: Where, lenient: Leniency | None = None
                ) -> Expected | None:
    """The tool calls an item expects (``expected_tool_calls``, ``tool_args_match``,
    ``tool_args_overrides``), or None when it gives none. An expected call without
    arguments is refused unless its tool's arguments are not compared (``ignore``);
    keys it does not read and arguments encoded twice are counted warnings."""
    given = obj.get("expected_tool_calls")
    if given is None:
        for key in ("tool_args_match", "tool_args_overrides", "tools_compared",
                    "failed_calls", "tool_errors"):
            if obj.get(key) is not None:
                raise where.error("given without 'expected_tool_calls'", key)
        return None
    mode = obj.get("tool_args_match", "exact")
    if mode not in ARG_MODES:
        raise where.error(f"expected one of {', '.join(ARG_MODES)}, got {describe(mode)}",
                          "tool_args_match")
    calls = []
    lenient = lenient or Leniency()
    unread: set[str] = set()
    for i, c in enumerate(_list(given, where, "expected_tool_calls")):
        at = f"expected_tool_calls[{i}]"
        call = decoded(_requested(c, where, at), where, lenient)
        if call.arguments is None:
            raise where.error(f"expected a JSON object, got {describe(call.raw)}",
                              f"{at}.arguments")
        given_args = isinstance(c, Mapping) and (any(k in c for k in ARG_KEYS) or isinstance(
            c.get("function"), Mapping) and "arguments" in c["function"])
        rule = (obj.get("tool_args_overrides") or {}).get(call.name, mode) if isinstance(
            obj.get("tool_args_overrides") or {}, Mapping) else mode
        if not given_args and rule != "ignore":
            raise where.error(
                f"no arguments for the expected call of {call.name!r} (read from "
                f"{', '.join(repr(k) for k in ARG_KEYS)}): under tool_args_match {rule} it "
                "could never match; give {} for a call without arguments, or leave its "
                f"arguments out with tool_args_overrides {{\"{call.name}\": \"ignore\"}}",
                f"{at}.arguments")
        unread |= set(c) - CALL_KEYS if isinstance(c, Mapping) else set()
        calls.append(call)
    if unread:
        lenient.warn(UNKNOWN_CALL_KEYS, where.short(), where.error(
            f"keys ragmark does not read in an expected call: {', '.join(sorted(unread))} "
            f"(it reads {', '.join(sorted(CALL_KEYS))})", "expected_tool_calls"))
    overrides: dict[str, str | tuple[str, ...]] = {}
    for tool, rule in _object(obj.get("tool_args_overrides") or {}, where,
                              "tool_args_overrides").items():
        at = f"tool_args_overrides.{tool}"
        if rule == []:  # as agentevals reads it (a falsy override): the question's mode
            continue
        if isinstance(rule, list) and all(isinstance(k, str) and k for k in rule):
            overrides[str(tool)] = tuple(rule)
        elif rule in ARG_MODES:
            overrides[str(tool)] = rule
        else:
            raise where.error(f"expected one of {', '.join(ARG_MODES)} or a list of "
                              f"argument names, got {describe(rule)}", at)
    for i, c in enumerate(calls):  # rules give each argument its acceptable values
        if overrides.get(c.name, mode) == "rules":
            for name, values in (c.arguments or {}).items():
                if not isinstance(values, list) or not values:
                    raise where.error("with tool_args_match rules, expected a non-empty list "
                                      "of acceptable values (\"\" among them when it may be "
                                      f"left out), got {describe(values)}",
                                      f"expected_tool_calls[{i}].arguments.{name}")
    return Expected(tuple(calls), mode, overrides, *_comparing(obj, where))


def _comparing(obj: Mapping[str, Any], where: Where) -> tuple[tuple[str, ...], bool, str | None]:
    """What an item says of which calls are compared: ``tools_compared`` (names),
    ``failed_calls`` (count or skip) and ``tool_errors`` (a regular expression)."""
    tools = obj.get("tools_compared") or []
    if not isinstance(tools, list) or not all(isinstance(t, str) and t for t in tools):
        raise where.error(f"expected a list of tool names, got {describe(tools)}",
                          "tools_compared")
    failed = obj.get("failed_calls", "count")
    if failed not in ("count", "skip"):
        raise where.error(f"expected count or skip, got {describe(failed)}", "failed_calls")
    pattern = obj.get("tool_errors")
    if pattern is not None:
        try:
            re.compile(pattern if isinstance(pattern, str) else "(")
        except re.error as e:
            raise where.error(f"expected a regular expression, got {describe(pattern)} "
                              f"({e})", "tool_errors") from None
    return tuple(tools), failed == "skip", pattern


TEXT_KEYS = ("text", "content", "page_content", "snippet", "body", "document")
"""Where a search result's item holds its text, the first present."""
ID_KEYS = ("id", "doc_id", "document_id", "docid", "_id")
"""Where a search result's item (or its ``metadata``) names it, the first present."""
LIST_KEYS = ("documents", "results", "hits", "items")
"""Where a search tool's result object lists its documents."""


def documents_of(result: str | None) -> tuple[Context, ...]:
    """The documents a search call returned, best first: its result parsed as JSON — a
    list (or an object listing them under ``documents``, ``results``, ``hits``, ``items``)
    of texts or of objects with a text (:data:`TEXT_KEYS`) and an id (:data:`ID_KEYS`,
    or in their ``metadata``) — else the whole result as one document without an id."""
    if result is None or not result.strip():
        return ()
    try:
        got = json.loads(result)
    except ValueError:
        return (Context(result),)
    if isinstance(got, Mapping):
        got = next((got[k] for k in LIST_KEYS if isinstance(got.get(k), list)), [got])
    if not isinstance(got, list):
        return (Context(result),)
    out = []
    for item in got:
        if isinstance(item, str) and item.strip():
            out.append(Context(item))
        elif isinstance(item, Mapping):
            text = next((item[k] for k in TEXT_KEYS if isinstance(item.get(k), str)), None)
            meta = item["metadata"] if isinstance(item.get("metadata"), Mapping) else {}
            ident = next((str(d[k]) for d in (item, meta) for k in ID_KEYS
                          if isinstance(d.get(k), str | int) and not isinstance(d.get(k), bool)
                          and str(d[k]).strip()), None)
            if text and text.strip():
                score = item.get("score")
                out.append(Context(text, ident, None, float(score) if isinstance(
                    score, int | float) and not isinstance(score, bool) else None))
    return tuple(out)


def searched(output: Output, tools: Collection[str]) -> Output:
    """``output`` with the calls of its search tools (``--search-tool``) as its
    retrieval: each call a hop (named by its tool; its query is in the trajectory) of
    the documents its result lists (:func:`documents_of`), the contexts the hops' in
    call order; their seconds, when every call gives them, its ``retrieval_latency_s``
    (a trace's covered search spans come first). Unchanged when it has no trajectory or
    none of its calls is to one of ``tools``."""
    if output.trajectory is None or not tools:
        return output
    calls = [c for c in output.trajectory.calls() if c.name in tools]
    if not calls:
        return output
    hops: list[tuple[str, int]] = []
    contexts: list[Context] = []
    for c in calls:
        docs = documents_of(c.result)
        hops.append((c.name, len(docs)))
        contexts += docs
    facts = output.facts
    took = [c.latency_s for c in calls]
    if "retrieval_latency_s" not in facts and all(t is not None for t in took):
        facts = {**facts, "retrieval_latency_s": sum(took)}  # type: ignore[arg-type]
    return replace(output, contexts=tuple(contexts), hops=tuple(hops), facts=facts)
