"""A tool call's arguments as real logs give them: JSON encoded twice (read decoded,
counted) or no JSON object at all (kept as their text, counted): the counted warnings
of :mod:`ragmark.data.trajectories`."""

from __future__ import annotations

import json
from dataclasses import replace

from ragmark.data.files import Where, describe
from ragmark.data.leniency import Leniency
from ragmark.trajectory import Call, Step, ToolRun, Trajectory, Turn
from ragmark.trajectory import parse_arguments as _arguments

ODD_ARGUMENTS = "tool-call arguments that are not a JSON object (matched only under ignore)"
TWICE_ENCODED = "tool-call arguments JSON-encoded twice (read decoded)"


def decoded(call: Call, where: Where, lenient: Leniency) -> Call:
    """``call`` with arguments JSON-encoded twice (a string holding a JSON object's
    text) read decoded, counted; arguments that are no JSON object at all counted."""
    if call.arguments is not None or call.raw is None:
        return call
    try:
        inner = json.loads(call.raw)
    except ValueError:
        inner = None
    if isinstance(inner, str):
        args, raw = _arguments(inner)
        if args is not None:
            lenient.warn(TWICE_ENCODED, where.short(), where.error(
                f"the arguments of a call of {call.name!r} are JSON-encoded twice"))
            return replace(call, arguments=args, raw=None)
    lenient.warn(ODD_ARGUMENTS, where.short(), where.error(
        f"the arguments of a call of {call.name!r} are not a JSON object: "
        f"{describe(call.raw)}"))
    return call


def checked_calls(trajectory: Trajectory | None, where: Where, lenient: Leniency
                  ) -> Trajectory | None:
    """``trajectory`` with its calls' odd arguments counted (:func:`decoded`): those
    encoded twice read decoded, those that are no JSON object kept as their text."""
    if trajectory is None:
        return None
    steps: list[Step] = []
    for s in trajectory.steps:
        if isinstance(s, Turn) and s.calls:
            s = replace(s, calls=tuple(decoded(c, where, lenient) for c in s.calls))
        elif isinstance(s, ToolRun):
            s = replace(s, call=decoded(s.call, where, lenient))
        steps.append(s)
    return Trajectory(tuple(steps))
