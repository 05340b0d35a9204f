"""A question's trajectory as the reports show it, a line a step: what the model said or
asked for (with its tokens and time), what each tool returned or why it failed, and the
hand-offs between agents. ``ragmark inspect``, the HTML question view and the Markdown
report print the same lines."""

from __future__ import annotations

import json
from collections.abc import Sequence

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
    return f"model{who}: {said}{tokens}{_took(step.latency_s)}"


def trajectory_section(q: QueryRecord) -> tuple[str, list[str]] | None:
    """The heading (steps, calls, tokens) and a line a step; None without a trajectory."""
    steps = q.recorded.get("trajectory")
    if not isinstance(steps, list):
        return None
    t = Trajectory.from_json(steps)
    calls = t.calls()
    failed = sum(c.error is not None for c in calls)
    turns = [s for s in t.steps if isinstance(s, Turn)]
    tokens = [n for s in turns for n in (s.prompt_tokens, s.completion_tokens) if n is not None]
    parts = [f"{len(t.steps)} step{'s' if len(t.steps) != 1 else ''}",
             f"{len(calls)} tool call{'s' if len(calls) != 1 else ''}"
             + (f", {failed} failed" if failed else "")]
    if tokens:
        parts.append(f"{sum(tokens)} tokens")
    return (f"Trajectory ({'; '.join(parts)})",
            [step_line(s) for s in t.steps] or ["(no step: the agent answered at once)"])


def trajectories_summary(queries: Sequence[QueryRecord]) -> list[str]:
    """The agents' steps over a run, for the Markdown report: how many questions have a
    trajectory, and per trajectory the mean of its steps, model turns, tool calls, failed
    calls, tokens and the time its steps took (model turns and tool runs; steps that ran
    side by side counted each)."""
    rows: list[tuple[float | None, ...]] = []
    for q in queries:
        steps = q.recorded.get("trajectory")
        if not isinstance(steps, list):
            continue
        t = Trajectory.from_json(steps)
        calls = t.calls()
        turns = [s for s in t.steps if isinstance(s, Turn)]
        tokens = [n for s in turns for n in (s.prompt_tokens, s.completion_tokens)
                  if n is not None]
        took = [s.latency_s for s in turns if s.latency_s is not None] + [
            c.latency_s for c in calls if c.latency_s is not None]
        rows.append((len(t.steps), len(turns), len(calls),
                     sum(c.error is not None for c in calls),
                     sum(tokens) if tokens else None, sum(took) if took else None))
    if not rows:
        return []

    def mean(i: int) -> str:
        got = [float(v) for r in rows if (v := r[i]) is not None]
        return "—" if not got else f"{sum(got) / len(got):.2f}"

    return [f"Agent trajectories: {len(rows)} of {len(queries)} questions, mean per "
            "trajectory:", "",
            "| Steps | Model turns | Tool calls | Failed calls | Tokens | Step time (s) |",
            "|---:|---:|---:|---:|---:|---:|",
            "| " + " | ".join(mean(i) for i in range(6)) + " |"]
