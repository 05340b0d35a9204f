"""A simulation's turns scored by simulate itself (``simulate --metrics``): each config's
transcripts are read as the conversation log they are and scored as ``ragmark run
--outputs TRANSCRIPTS --metrics ...`` scores them, in this process, with the judges'
endpoint — every turn a question, the scenario's passages its ground truth. The means,
with their 95% interval and how many turns they cover (and why the others have no
value), go in the config's report; each turn's values beside that turn in the report's
transcript, which the simulation's page shows. The run itself is not recorded in the
history: ``ragmark run --outputs`` on the transcripts does that."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragmark.llm import LLMSettings
from ragmark.metrics.names import parse_metrics
from ragmark.plan.build import plan_run
from ragmark.plan.execute import execute
from ragmark.plan.request import RunRequest
from ragmark.progress import Progress
from ragmark.results.codec import per_query_json
from ragmark.results.model import RunReport
from ragmark.stats.paired import mean_ci


def turn_metrics(names: str | None) -> tuple[str, ...]:
    """``--metrics`` checked before any call: the metrics each turn gets (none when not
    given); an unknown name is a ConfigError naming it."""
    return () if not names else tuple(str(m) for m in parse_metrics(names))


def score_turns(transcripts: Path, metrics: Sequence[str], judges: LLMSettings,
                progress: Progress) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """One config's transcripts scored: per metric the mean over the turns with a value,
    its interval (none from one value), how many have one and why the others have none,
    and the run's notes (``notes``); and each turn's values (``CONVERSATION#TURN`` ->
    metric -> value, None where missing)."""
    plan = plan_run(RunRequest(outputs=str(transcripts), metrics=list(metrics), llm=judges,
                               no_history=True, allow_missing=True))
    report = execute(plan, progress).result
    assert isinstance(report, RunReport)  # a run's plan
    per_turn = per_query_json(report)
    summary: dict[str, Any] = {}
    for name, agg in report.metrics.items():
        values = [float(v) for t in per_turn.values() if (v := t.get(name)) is not None]
        iv = mean_ci(values) if len(values) > 1 else None
        summary[name] = {"mean": agg.value, "interval": None if iv is None else
                         [iv.low, iv.high], "n": agg.n, "missing": agg.missing,
                         "reasons": dict(agg.reasons)}
    return {"metrics": summary, "notes": list(report.notes)}, per_turn
