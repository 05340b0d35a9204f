"""What an agent did for one question, in order: its :class:`Trajectory`.

A trajectory is a list of steps: a model turn (:class:`Turn`: what the model said, the
tool calls it asked for, its tokens and time), a tool's execution (:class:`ToolRun`: the
tool, its arguments, its result or error, its time, and the call id that ties it to the
request), and a hand-off from one agent to another (:class:`Handoff`). The final answer
is the case's. Read from a log's ``messages`` (OpenAI's chat format) or ``tool_calls``
(:mod:`ragmark.data.trajectories`) or from a trace's spans; kept in the results as
JSON (:meth:`Trajectory.to_json`, :meth:`Trajectory.from_json`).

:meth:`Trajectory.calls` joins each requested call to its execution (by call id, else
the next execution of that tool not yet joined); an execution nobody asked for (a trace
without the model's side) is a call of its own. The agent metrics
(:mod:`ragmark.metrics.agent`) read those calls.
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

Arguments = Mapping[str, Any] | None
"""A call's arguments, parsed from JSON (None: not a JSON object; the raw text is kept)."""


@dataclass(frozen=True, slots=True)
class Call:
    """One tool call: asked for by a model turn, run, or both (``asked``, ``ran``)."""

    name: str
    arguments: Arguments = None
    id: str | None = None
    raw: str | None = None
    """The arguments as given, when they are not a JSON object."""
    result: str | None = None
    error: str | None = None
    latency_s: float | None = None
    asked: bool = True
    ran: bool = False
    step: int | None = None
    """Where in its trajectory the call was asked for (its model turn's place, from 1),
    or ran when nobody asked (:meth:`Trajectory.calls` sets it)."""

    @property
    def key(self) -> str:
        """The call as one text: its name and its arguments as canonical JSON (two calls
        with the same key are the same call)."""
        args = self.raw if self.arguments is None else json.dumps(
            self.arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return f"{self.name}({args or ''})"


@dataclass(frozen=True, slots=True)
class Turn:
    """A model turn: its text, the calls it asked for, its tokens, time and cost (US
    dollars, as recorded)."""

    content: str = ""
    calls: tuple[Call, ...] = ()
    agent: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_s: float | None = None
    cost_usd: float | None = None


@dataclass(frozen=True, slots=True)
class ToolRun:
    """A tool's execution: the call it ran (``call.ran``), with its result or error."""

    call: Call
    agent: str | None = None


@dataclass(frozen=True, slots=True)
class Handoff:
    """Control passed from one agent to another."""

    source: str | None
    target: str


Step = Turn | ToolRun | Handoff


@dataclass(frozen=True)
class Trajectory:
    """The ordered steps of one question (see the module). Its calls are joined to
    their executions once, and shared by every metric that reads them."""

    steps: tuple[Step, ...] = ()

    def calls(self) -> tuple[Call, ...]:
        """Every tool call, in the order asked (see :meth:`_joined`)."""
        return self._joined

    @cached_property
    def _joined(self) -> tuple[Call, ...]:
        """Every tool call, in the order asked (an execution nobody asked for, in the
        order run), each with its execution's result, error and time when it ran."""
        asked = [replace(c, step=i) for i, s in enumerate(self.steps, start=1)
                 if isinstance(s, Turn) for c in s.calls]
        runs = [replace(s.call, step=i) for i, s in enumerate(self.steps, start=1)
                if isinstance(s, ToolRun)]
        joined: set[int] = set()  # indexes into runs of the executions joined
        # each run's index queued by its id, by its tool (all, and those without an id):
        # a join takes the first not yet joined, so the whole is linear in the calls
        by_id: dict[str, deque[int]] = {}
        by_name: dict[str, deque[int]] = {}
        no_id: dict[str, deque[int]] = {}
        for i, r in enumerate(runs):
            if r.id:
                by_id.setdefault(r.id, deque()).append(i)
            else:
                no_id.setdefault(r.name, deque()).append(i)
            by_name.setdefault(r.name, deque()).append(i)

        def first(queue: deque[int] | None) -> int | None:
            while queue and queue[0] in joined:
                queue.popleft()
            return queue[0] if queue else None

        out: list[Call] = []
        for c in asked:
            at = first(by_id.get(c.id)) if c.id else None
            if at is None:  # by tool: a run without an id, or any when the call has none
                at = first((no_id if c.id else by_name).get(c.name))
            if at is None:
                out.append(c)
                continue
            r = runs[at]
            joined.add(at)
            out.append(replace(c, result=r.result, error=r.error, latency_s=r.latency_s,
                               ran=True))
        out += [r for i, r in enumerate(runs) if i not in joined]
        return tuple(out)

    @property
    def turns(self) -> int:
        return sum(isinstance(s, Turn) for s in self.steps)

    def to_json(self) -> list[dict[str, Any]]:
        return [_step_json(s) for s in self.steps]

    @classmethod
    def from_json(cls, steps: Sequence[Mapping[str, Any]]) -> Trajectory:
        """The trajectory :meth:`to_json` wrote (a results file's)."""
        return cls(tuple(_step_of(s) for s in steps))


def parse_arguments(value: Any) -> tuple[Arguments, str | None]:
    """A call's arguments as given (a JSON object, or its text): (the object, None), or
    (None, the text) when they are not a JSON object."""
    if isinstance(value, Mapping):
        return dict(value), None
    if value is None or value == "":
        return {}, None
    text = value if isinstance(value, str) else json.dumps(value)
    try:
        parsed = json.loads(text)
    except ValueError:
        return None, text
    return (parsed, None) if isinstance(parsed, dict) else (None, text)


def _call_json(c: Call) -> dict[str, Any]:
    out: dict[str, Any] = {"name": c.name}
    for key in ("id", "arguments", "raw", "result", "error", "latency_s"):
        v = getattr(c, key)
        if v is not None:
            out[key] = v
    return out


def _call_of(d: Mapping[str, Any], ran: bool) -> Call:
    return Call(str(d["name"]), d.get("arguments"), d.get("id"), d.get("raw"),
                d.get("result"), d.get("error"), d.get("latency_s"), asked=not ran, ran=ran)


_TURN_FIELDS = ("agent", "prompt_tokens", "completion_tokens", "latency_s", "cost_usd")


def _step_json(s: Step) -> dict[str, Any]:
    if isinstance(s, Turn):
        out: dict[str, Any] = {"kind": "model", "content": s.content,
                               "tool_calls": [_call_json(c) for c in s.calls]}
        return out | {k: getattr(s, k) for k in _TURN_FIELDS if getattr(s, k) is not None}
    if isinstance(s, ToolRun):
        return {"kind": "tool", **_call_json(s.call),
                **({"agent": s.agent} if s.agent is not None else {})}
    return {"kind": "handoff", "from": s.source, "to": s.target}


def _step_of(d: Mapping[str, Any]) -> Step:
    kind = d.get("kind")
    if kind == "model":
        return Turn(str(d.get("content") or ""),
                    tuple(_call_of(c, False) for c in d.get("tool_calls") or ()),
                    **{k: d[k] for k in _TURN_FIELDS if d.get(k) is not None})
    if kind == "tool":
        return ToolRun(_call_of(d, True), d.get("agent"))
    return Handoff(d.get("from"), str(d.get("to")))


@dataclass(frozen=True, slots=True)
class Expected:
    """The calls a question expects (``expected_tool_calls``), and how their arguments
    are matched (``tool_args_match``: exact, ignore, subset or superset, as agentevals'
    ``tool_args_match_mode``; per tool, ``overrides``: a mode or the argument names
    compared)."""

    calls: tuple[Call, ...]
    args: str = "exact"
    overrides: Mapping[str, str | tuple[str, ...]] = field(default_factory=dict)
    tools: tuple[str, ...] = ()
    """``tools_compared``: only the calls of these tools are compared, made and expected
    (tau-bench's reward compares the calls that change the state); empty: every tool."""
    skip_failed: bool = False
    """``failed_calls: "skip"``: a call that failed is not compared (a retried call
    counts once, as it succeeded)."""
    error_text: str | None = None
    """``tool_errors``: a regular expression a call's result matches when the tool
    failed but said so only in its text (tau-bench's ``Error: ...``)."""

    def failed(self, c: Call) -> bool:
        """Whether a call failed: its error, or its result matching ``error_text``."""
        return c.error is not None or (self.error_text is not None and c.result is not None
                                       and re.search(self.error_text, c.result) is not None)

    def focused(self, made: Sequence[Call]) -> tuple[list[Call], Expected]:
        """The calls made and this expectation as the metrics compare them: only the
        compared tools' calls, without the failed ones when they are skipped."""
        def kept(c: Call) -> bool:
            return not self.tools or c.name in self.tools

        if not self.tools and not self.skip_failed:
            return list(made), self
        mine = [c for c in made if kept(c) and not (self.skip_failed and self.failed(c))]
        return mine, replace(self, calls=tuple(c for c in self.calls if kept(c)))

    def to_json(self) -> dict[str, Any]:
        """As an item gives it (``expected_tool_calls``, ``tool_args_match``,
        ``tool_args_overrides``, ``tools_compared``, ``failed_calls``): what a results
        file keeps with the question's truth."""
        out: dict[str, Any] = {"expected_tool_calls": [
            {"name": c.name, "arguments": c.arguments} for c in self.calls]}
        if self.tools:
            out["tools_compared"] = list(self.tools)
        if self.skip_failed:
            out["failed_calls"] = "skip"
        if self.error_text is not None:
            out["tool_errors"] = self.error_text
        if self.args != "exact":
            out["tool_args_match"] = self.args
        if self.overrides:
            out["tool_args_overrides"] = {k: v if isinstance(v, str) else list(v)
                                          for k, v in self.overrides.items()}
        return out
