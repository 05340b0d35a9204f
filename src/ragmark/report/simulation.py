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
    """Each config's lines, then the paired comparison and the gates."""
    lines: list[str] = []
    for r in report["configs"]:
        lines += config_lines(r)
    lines += comparison_lines(report.get("comparison") or [])
    lines += [("gate held: " if g["ok"] else "gate failed: ") + visible(g["text"])
              for g in report.get("gates") or []]
    return lines


def comparison_lines(rows: list[Mapping[str, Any]]) -> list[str]:
    """Each config against the baseline, per metric: the paired difference, its
    interval and Holm-adjusted p, over how many scenarios."""
    if not rows:
        return []
    out = [f"paired by scenario against {visible(rows[0]['baseline'])} (difference "
           "[95% CI], Holm-adjusted p over every row):"]
    for r in rows:
        if r["difference"] is None:
            out.append(f"  {visible(r['config'])} {r['metric']}: no scenario has a value "
                       "in both")
            continue
        iv = r["interval"]
        text = (f"  {visible(r['config'])} {r['metric']}: {r['difference']:+.3f}"
                + ("" if iv is None else f" [{iv[0]:+.3f}, {iv[1]:+.3f}]")
                + f", p = {r['p_holm']:.3g} over {r['pairs']} scenario"
                + "s" * (r["pairs"] != 1))
        if r["left_out"]:
            text += f" ({r['left_out']} left out: a value missing on one side)"
        out.append(text)
    return out


def config_lines(report: Mapping[str, Any]) -> list[str]:
    """One config's simulation: how its conversations ended and their scores."""
    s = report["summary"]
    n = s["conversations"]
    ended = ", ".join(f"{ENDINGS.get(k, k)} {v}" for k, v in sorted(
        s["outcomes"].items(), key=lambda kv: -kv[1]))
    lines = [f"{n} conversation{'s' * (n != 1)} with {visible(report['system'])}, "
             f"{s['turns']} turn{'s' * (s['turns'] != 1)}, simulated by "
             f"{visible(report['simulator'])}: {ended}"]
    if s["goal_reached"] is not None:
        iv = s["goal_reached_interval"]
        lines.append(f"goal reached (the simulated user's verdict): {s['goal_reached']:.0%}"
                     + ("" if iv is None else f" [95% CI {iv[0]:.0%}-{iv[1]:.0%}]")
                     + ("" if s["turns_to_goal"] is None
                        else f", in {s['turns_to_goal']:.1f} turns on average"))
    if s["role_adherence"] is not None:
        lines.append(f"simulator role adherence: {s['role_adherence']:.0%} of its calls "
                     f"({s['role_breaks']} broke role and were asked again)")
    if s.get("failed_turns"):
        why = "; ".join(f"{visible(k)} ({v})" for k, v in s["failures"].items())
        lines.append(f"the system failed on {s['failed_turns']} of {s['turns']} turns "
                     f"({why}); the first: {visible(s['first_failure'])}")
    lines += conversation_metric_lines(report.get("conversation_metrics") or {},
                                       report.get("judges"))
    lines += turn_metric_lines(report.get("turn_metrics") or {})
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


def turn_metric_lines(scored: Mapping[str, Any]) -> list[str]:
    """Each turn metric's mean with its interval, over how many turns, and why the
    others have none; the scoring run's notes."""
    if not scored:
        return []
    lines = []
    for m, r in scored["metrics"].items():
        n = r["n"] + r["missing"]
        text = f"  {visible(m)}: " + ("none" if r["mean"] is None else f"{r['mean']:.3f}") + (
            "" if r["interval"] is None else
            f" [95% CI {r['interval'][0]:.3f}-{r['interval'][1]:.3f}]")
        text += f" over {r['n']} of {n} turn{'s' * (n != 1)}"
        if r["missing"]:
            why = "; ".join(f"{visible(k)} ({v})" for k, v in r["reasons"].items())
            text += f" ({r['missing']} missing: {why})"
        lines.append(text)
    notes = [f"  note: {visible(x)}" for x in scored.get("notes") or []]
    return ["per turn (--metrics):", *lines, *notes]


NAMES = {"goal_completion": "goal completion (judged against the expected outcome)",
         "knowledge_retention": "knowledge retention (answers that keep what the user said)"}


def conversation_metric_lines(got: Mapping[str, Any], judge: str | None) -> list[str]:
    """Each conversation metric's mean with its interval, over how many conversations,
    and why the others have none; the judged goal beside the simulated user's verdict."""
    lines = []
    for m, name in NAMES.items():
        r = got.get(m)
        if r is None:
            continue
        n = r["n"] + r["missing"]
        if r["mean"] is None:
            text = f"{name}: missing for all {n} conversation{'s' * (n != 1)}"
        else:
            iv = r["interval"]
            text = (f"{name}: {r['mean']:.2f}"
                    + ("" if iv is None else f" [95% CI {iv[0]:.2f}-{iv[1]:.2f}]")
                    + f" over {r['n']} of {n} conversation{'s' * (n != 1)}")
        if r["missing"]:
            why = "; ".join(f"{visible(k)} ({v})" for k, v in r["reasons"].items())
            text += f" ({r['missing']} missing: {why})"
        lines.append(text + (f", judged by {visible(judge)}" if judge and m ==
                             "goal_completion" else ""))
    agree = got.get("goal_agreement")
    if agree and agree["n"]:
        lines.append(f"the judge and the simulated user agree on whether the goal was "
                     f"reached in {agree['agree']} of {agree['n']} conversations")
    return lines
