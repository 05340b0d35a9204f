"""A question's trajectory as the reports show it, a line a step: what the model said or
asked for (with its tokens and time), what each tool returned or why it failed, and the
hand-offs between agents. ``ragmark inspect``, the HTML question view and the Markdown
report print the same lines."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragmark.results.model import QueryRecord
from ragmark.trajectory import Call, Handoff, Step, ToolRun, Trajectory, Turn

CLIP = 160
"""Characters of a model's text or a tool's result shown; the rest is in the JSON."""


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= CLIP else text[:CLIP].rsplit(" ", 1)[0] + " …"


def _call(c: Call) -> str:
    args = c.raw if c.arguments is None else json.dumps(dict(c.arguments), ensure_ascii=False)
    return f"{c.name}({args or ''})"


def _took(seconds: float | None) -> str:
    return "" if seconds is None else f" · {seconds:.2f} s"


def step_line(step: Step) -> str:
    """One step as a line."""
    if isinstance(step, Handoff):
        return f"hand-off: {step.source or '?'} → {step.target}"
    who = f" ({step.agent})" if step.agent else ""
    if isinstance(step, ToolRun):
        c = step.call
        cid = f" [{c.id}]" if c.id else ""
        args = "" if c.arguments is None and c.raw is None else f" {_call(c)[len(c.name):]}"
        got = (f"failed: {_clip(c.error)}" if c.error is not None
               else f"→ {_clip(c.result)}" if c.result is not None else "no result recorded")
        return f"tool {c.name}{cid}{who}{args}: {got}{_took(c.latency_s)}"
    tokens = ("" if step.prompt_tokens is None and step.completion_tokens is None else
              f" · {step.prompt_tokens or 0}+{step.completion_tokens or 0} tokens")
    said = (f"asked {', '.join(_call(c) for c in step.calls)}" if step.calls
            else _clip(step.content) or "(no text)")
    cost = "" if step.cost_usd is None else f" · ${step.cost_usd:.6f}"
    return f"model{who}: {said}{tokens}{_took(step.latency_s)}{cost}"


@dataclass(frozen=True)
class Totals:
    """One trajectory counted: its steps, model turns, tool calls, failed calls, tokens,
    the time its steps took (model turns and tool runs; steps that ran side by side
    counted each) and its cost (None: no step recorded it)."""

    steps: int
    turns: int
    calls: int
    failed: int
    tokens: int | None
    seconds: float | None
    cost_usd: float | None

    @classmethod
    def of(cls, t: Trajectory) -> Totals:
        calls = t.calls()
        turns = [s for s in t.steps if isinstance(s, Turn)]
        tokens = [n for s in turns for n in (s.prompt_tokens, s.completion_tokens)
                  if n is not None]
        took = [s.latency_s for s in turns if s.latency_s is not None] + [
            c.latency_s for c in calls if c.latency_s is not None]
        cost = [s.cost_usd for s in turns if s.cost_usd is not None]
        return cls(len(t.steps), len(turns), len(calls),
                   sum(c.error is not None for c in calls), sum(tokens) if tokens else None,
                   sum(took) if took else None, sum(cost) if cost else None)


def _plural(n: int, what: str) -> str:
    return f"{n} {what}{'s' if n != 1 else ''}"


NO_STEP = "(no step: the agent answered at once)"


def step_lines(steps: Sequence[Mapping[str, Any]]) -> list[str]:
    """A trajectory as a results file or the history holds it: a line a step."""
    return [step_line(s) for s in Trajectory.from_json(steps).steps] or [NO_STEP]


def trajectory_section(q: QueryRecord) -> tuple[str, list[str]] | None:
    """The heading (steps, calls, tokens, time, cost) and a line a step; None without a
    trajectory."""
    if q.trajectory is None:
        return None
    t = Trajectory.from_json(q.trajectory)
    n = Totals.of(t)
    parts = [_plural(n.steps, "step"), _plural(n.calls, "tool call")
             + (f", {n.failed} failed" if n.failed else "")]
    if n.tokens is not None:
        parts.append(f"{n.tokens} tokens")
    if n.seconds is not None:
        parts.append(f"{n.seconds:.2f} s")
    if n.cost_usd is not None:
        parts.append(f"${n.cost_usd:.6f}")
    return (f"Trajectory ({'; '.join(parts)})",
            [step_line(s) for s in t.steps] or [NO_STEP])


def trajectories_summary(queries: Sequence[QueryRecord]) -> list[str]:
    """The agents' steps over a run, for the Markdown report: how many questions have a
    trajectory, and per trajectory the mean of its :class:`Totals` (each over the
    trajectories that recorded it)."""
    rows = [Totals.of(Trajectory.from_json(q.trajectory)) for q in queries
            if q.trajectory is not None]
    if not rows:
        return []
    fields = ("steps", "turns", "calls", "failed", "tokens", "seconds", "cost_usd")

    def mean(name: str) -> str:
        got = [float(v) for r in rows if (v := getattr(r, name)) is not None]
        if not got:
            return "—"
        m = sum(got) / len(got)
        return f"{m:.6f}" if name == "cost_usd" else f"{m:.2f}"

    return [f"Agent trajectories: {len(rows)} of {len(queries)} questions, mean per "
            "trajectory:", "",
            "| Steps | Model turns | Tool calls | Failed calls | Tokens | Step time (s) "
            "| Cost (USD) |",
            "|---:|---:|---:|---:|---:|---:|---:|",
            "| " + " | ".join(mean(f) for f in fields) + " |"]
