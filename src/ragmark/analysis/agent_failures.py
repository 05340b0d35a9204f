"""Where an agent went wrong on a question (``inspect --failures``, issue 50, item 5),
read from its trajectory (the results' details) and the calls the question expects,
each failure at the step where it happened:

- ``wrong_tool``: a call to a tool the question expects no call to;
- ``extra_call``: a call to an expected tool beyond the calls it expects of it;
- ``wrong_arguments``: a call to an expected tool whose arguments match none of the
  expected calls of that tool left (as the question's ``tool_args_match`` compares them);
- ``missing_call``: an expected call no call made matches (by tool, then arguments);
- ``tool_error``: a call that failed;
- ``loop``: a call identical (tool and arguments) to an earlier one;
- ``out_of_steps``: the question has no answer: the log gave none and its trajectory
  ends on a tool call or a tool's result (:func:`ragmark.data.trajectories.final_answer`,
  the one rule ``run`` reads answers by).

The first four need the expected calls; the last three the trajectory alone.
"""

from __future__ import annotations

import json
from collections import Counter

from ragmark.data.files import Where
from ragmark.data.trajectories import expected_of
from ragmark.metrics.agent import matcher
from ragmark.results.model import QueryRecord
from ragmark.trajectory import Call, Expected, Trajectory

AGENT_KINDS = ("wrong_tool", "extra_call", "wrong_arguments", "missing_call", "tool_error",
               "loop", "out_of_steps")
LABELS = {
    "wrong_tool": "called a tool the question expects no call to",
    "extra_call": "called an expected tool more often than expected",
    "wrong_arguments": "called an expected tool with the wrong arguments",
    "missing_call": "did not make an expected call",
    "tool_error": "a tool call failed",
    "loop": "repeated an identical call",
    "out_of_steps": "ended without an answer",
}
SHORT = {"wrong_tool": "wrong tool", "extra_call": "extra call",
         "wrong_arguments": "wrong arguments", "missing_call": "missing call",
         "tool_error": "tool error", "loop": "loop", "out_of_steps": "out of steps"}
"""Each kind as the list of failing questions names it."""
EXPECTING = frozenset(AGENT_KINDS[:4])
"""The kinds that need the question's expected calls."""
Found = tuple[str, str, str]
"""One failure: its kind, what was seen (with the step), and what to do."""
NO_TRAJECTORY = "no trajectory in the file (an agent's log or traces, with --include-details)"


def trajectory_and_expected(q: QueryRecord) -> tuple[Trajectory | None, Expected | None]:
    """What the results file kept of the question's trajectory and expected calls."""
    trajectory = None if q.trajectory is None else Trajectory.from_json(q.trajectory)
    truth = q.ground_truth if q.ground_truth is not None else {}
    expected = expected_of(truth, Where("results", item=q.id)) if isinstance(
        truth, dict) else None
    return trajectory, expected


def _shown(c: Call) -> str:
    args = c.raw if c.arguments is None else json.dumps(dict(c.arguments), ensure_ascii=False)
    return f"{c.name}({args or ''})"


def _at(c: Call) -> str:
    return f"step {c.step}" if c.step is not None else "a step"


def _against(made: list[Call], expected: Expected) -> list[Found]:
    """The calls that match an expected call are paired with it first (by tool, then
    arguments, in the order made), whatever came before them; only the calls left are
    blamed: a call to a tool the question does not expect, a call to an expected tool
    with a slot of it still unmatched (wrong arguments), or one beyond its slots (extra).
    Calls that succeeded are matched before calls that failed. So ``book(amount=300)``
    failing, then ``book(amount=250)`` (the expected call) blames the first, not the
    second."""
    wanted = Counter(c.name for c in expected.calls)
    left = list(expected.calls)
    unmatched: set[int] = set()  # by identity: two identical calls are two calls
    # the calls that succeeded are matched first: a failed try and its successful
    # repeat are one expected call, and the failed try is the one to blame
    for c in sorted(made, key=lambda c: c.error is not None):
        match = matcher(expected, c.name)
        hit = next((w for w in left if w.name == c.name and match(c.arguments, w.arguments)),
                   None)
        if hit is None:
            unmatched.add(id(c))
        else:
            left.remove(hit)
    out: list[Found] = []
    slots = Counter(w.name for w in left)  # expected calls of each tool not yet made
    for c in made:
        if id(c) not in unmatched:
            continue
        if c.name not in wanted:
            out.append(("wrong_tool", f"{_at(c)}: {_shown(c)}", "the question expects "
                        f"calls to {', '.join(sorted(wanted)) or 'no tool'}"))
        elif slots[c.name] > 0:
            slots[c.name] -= 1
            options = [_shown(w) for w in left if w.name == c.name]
            out.append(("wrong_arguments", f"{_at(c)}: {_shown(c)}",
                        "expected " + " or ".join(options)))
        else:
            calls = sum(m.name == c.name for m in made)
            out.append(("extra_call", f"{_at(c)}: {_shown(c)} ({c.name} called {calls} "
                        f"times; {wanted[c.name]} expected)",
                        "the agent calls this tool more than it needs"))
    for name, short in slots.items():  # expected calls neither made nor tried
        missed = [w for w in left if w.name == name][-short:] if short else []
        out += [("missing_call", f"{_shown(w)} was never made",
                 "the agent stopped, or answered, before making this call") for w in missed]
    return out


def agent_failures(q: QueryRecord) -> tuple[list[Found], bool] | None:
    """The question's agent failures and whether its expected calls were checked; None
    when the file kept no trajectory for it."""
    trajectory, expected = trajectory_and_expected(q)
    if trajectory is None:
        return None
    made = list(trajectory.calls())
    out = [] if expected is None else _against(*expected.focused(made))
    first: dict[str, Call] = {}
    for c in made:
        if c.error is not None or (expected is not None and expected.failed(c)):
            out.append(("tool_error", f"{_at(c)}: {_shown(c)} failed: {c.error or c.result}",
                        "check the tool, and what the agent does when a call fails"))
        if c.key in first:
            out.append(("loop", f"{_at(c)}: {_shown(c)} repeats {_at(first[c.key])}",
                        "the agent repeats a call instead of using its result"))
        first.setdefault(c.key, c)
    if not q.answer:  # the case's answer: the log's, else the trajectory's final turn
        out.append(("out_of_steps", f"ended after step {len(trajectory.steps)} without "
                    "an answer", "the agent ran out of steps or stopped on a tool's result: "
                    "raise its step limit or check why it did not conclude"))
    return out, expected is not None
