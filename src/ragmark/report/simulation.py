"""What ``ragmark simulate`` says when it is done: how the conversations ended, by the
simulated users' own verdicts, the simulator's role adherence, and where the
transcripts are (and how to score them)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragmark.text import visible

ENDINGS = {"goal_reached": "goal reached", "gave_up": "gave up",
           "max_turns": "turns ran out", "simulator_failed": "simulator failed"}


def simulation_lines(report: Mapping[str, Any]) -> list[str]:
    s = report["summary"]
    n = s["conversations"]
    ended = ", ".join(f"{ENDINGS.get(k, k)} {v}" for k, v in sorted(
        s["outcomes"].items(), key=lambda kv: -kv[1]))
    lines = [f"{n} conversation{'s' * (n != 1)} with {visible(report['system'])}, "
             f"{s['turns']} turns, simulated by {visible(report['simulator'])}: {ended}"]
    if s["goal_reached"] is not None:
        iv = s["goal_reached_interval"]
        lines.append(f"goal reached (the simulated user's verdict): {s['goal_reached']:.0%}"
                     + ("" if iv is None else f" [95% CI {iv[0]:.0%}-{iv[1]:.0%}]")
                     + ("" if s["turns_to_goal"] is None
                        else f", in {s['turns_to_goal']:.1f} turns on average"))
    if s["role_adherence"] is not None:
        lines.append(f"simulator role adherence: {s['role_adherence']:.0%} of its calls "
                     f"({s['role_breaks']} broke role and were asked again)")
    for c in report["conversations"]:
        if c.get("reason"):
            lines.append(f"  {visible(c['id'])}: {ENDINGS.get(c['outcome'], c['outcome'])}"
                         f" — {visible(c['reason'])}")
    if report["left_out"]:
        lines.append(f"not in the transcripts (no turn played): "
                     f"{visible(', '.join(report['left_out']))}")
    if report["resumed_lines_dropped"]:
        lines.append("resumed: the journal's last line was cut short by a kill and was "
                     "dropped (that turn was asked again)")
    lines.append(f"transcripts: {visible(report['transcripts'])} (score them: ragmark run "
                 "--outputs TRANSCRIPTS --metrics ...)")
    return lines
