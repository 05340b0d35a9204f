"""What a simulation leaves: each conversation as a line of a conversation log
(``ragmark run --outputs`` scores it with any metric, every turn a question of the run,
without the simulator), as OpenAI chat messages, and the summary of how the
conversations ended (the simulated user's own verdicts, with intervals)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from ragmark.simulate.play import Played
from ragmark.simulate.scenarios import Scenario
from ragmark.stats.paired import wilson_interval


def conversation_line(s: Scenario, p: Played, scores: Mapping[str, Any] | None = None
                      ) -> dict[str, Any] | None:
    """One conversation as a conversation log's line (None when no turn was played):
    each turn's question, answer and contexts, the scenario's passages as each turn's
    ground truth; how it ended, and the conversation's own scores (``scores``), beside.
    A turn the system failed has no answer and its failure in ``error`` (its metrics are
    missing with that reason, never an empty answer's)."""
    if not p.turns:
        return None
    gt = {"ground_truth_contexts": list(s.ground_truth_contexts)} if (
        s.ground_truth_contexts) else {}
    turns = [{"question": t["question"], **gt, **(
        {"error": t["error"]} if t.get("error") else
        {"answer": t["answer"] or "", "contexts": t["contexts"], "latency_s": t["latency_s"]})}
        for t in p.turns]
    return {"conversation_id": s.id, "turns": turns, "scenario": s.scenario,
            "expected_outcome": s.expected_outcome, "outcome": p.outcome,
            **({"outcome_reason": p.reason} if p.reason else {}),
            **({"conversation_metrics": dict(scores)} if scores else {})}


def shown_turns(p: Played, scored: Mapping[str, Mapping[str, Any]] | None = None
                ) -> list[dict[str, Any]]:
    """Each turn as a simulation's report holds it, to be read or shown without the
    transcripts: the user's message, the answer (or the system's failure), the
    retrieved passages' ids (or their first words when they have none), the latency,
    and its metrics when the turns were scored (``scored``: ``CONVERSATION#TURN`` ->
    metric -> value)."""
    def ref(c: Mapping[str, Any]) -> str:
        return str(c.get("doc_id") or c.get("id") or " ".join(str(c["text"]).split()[:8]))

    got = scored or {}
    return [{"user": t["question"], **({"error": t["error"]} if t.get("error") else {
        "answer": t["answer"] or "", "contexts": [ref(c) for c in t["contexts"]],
        "latency_s": t["latency_s"]}), **({"metrics": dict(got[f"{p.scenario}#{n}"])}
                                          if f"{p.scenario}#{n}" in got else {})}
        for n, t in enumerate(p.turns, start=1)]


def chat_messages(p: Played) -> list[dict[str, str]]:
    """The conversation as OpenAI chat messages (user and assistant in turn; a turn the
    system failed has no assistant message)."""
    out: list[dict[str, str]] = []
    for t in p.turns:
        out.append({"role": "user", "content": t["question"]})
        if not t.get("error"):
            out.append({"role": "assistant", "content": t["answer"] or ""})
    return out


def summary(played: Sequence[Played], closing_breaks: Sequence[int] = ()) -> dict[str, Any]:
    """How the conversations ended: counts by outcome, the share whose simulated user
    said its goal was reached (Wilson 95% interval), the mean turns of those, and the
    simulator's role adherence (its calls without a role break, over all its calls:
    one a turn, and the one that ended a conversation)."""
    n = len(played)
    outcomes: dict[str, int] = {}
    for p in played:
        outcomes[p.outcome] = outcomes.get(p.outcome, 0) + 1
    reached = [p for p in played if p.outcome == "goal_reached"]
    iv = wilson_interval(len(reached), n)
    calls = sum(len(p.turns) + (p.outcome in ("goal_reached", "gave_up")) for p in played)
    broke = sum(bool(t.get("role_breaks")) for p in played for t in p.turns)
    broke += sum(1 for b in closing_breaks if b)
    return {"conversations": n, "outcomes": outcomes,
            "goal_reached": len(reached) / n if n else None,
            "goal_reached_interval": None if iv is None else [iv.low, iv.high],
            "turns_to_goal": (sum(len(p.turns) for p in reached) / len(reached)
                              if reached else None),
            "turns": sum(len(p.turns) for p in played),
            "role_adherence": (calls - broke) / calls if calls else None,
            "role_breaks": broke, **failures([t for p in played for t in p.turns])}


def failures(turns: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The turns the system failed: how many, by reason (the five commonest), and the
    first one's reason with its message."""
    failed = [t for t in turns if t.get("error")]
    first = failed[0] if failed else None
    return {"failed_turns": len(failed),
            "failures": dict(Counter(t["error"] for t in failed).most_common(5)),
            "first_failure": None if first is None else
            first["error"] + (f": {first['error_detail']}" if first.get("error_detail")
                              else "")}
