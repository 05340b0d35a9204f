"""Run history: every run, compare and label recorded in a SQLite store (see
:mod:`ragmark.history.store`), listed, shown, and followed over time."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragmark.history.store import (
    Also,
    ConfigResult,
    RunRow,
    aggregates,
    history_path,
    list_runs,
    pairwise_of,
    record,
    run_row,
    trajectories,
    trend,
    values,
)
from ragmark.passage_labels.tops import LabelRun
from ragmark.running.compare import Comparison

if TYPE_CHECKING:
    from ragmark.passage_labels.tops import LabelRun
    from ragmark.results.model import RunReport
    from ragmark.running.compare import Comparison

__all__ = ["JUDGE_NOISE", "NUGGETS_HASHES", "OUTCOMES", "ConfigResult", "RunRow", "aggregates",
           "history_path", "list_runs", "pairwise_of", "record", "record_results", "run_row",
           "trajectories", "trend", "values"]


NUGGETS_HASHES = "nuggets_hashes"
"""The envelope's record of each config's nuggets fingerprint, in the history."""
JUDGE_NOISE = "judge_noise"
"""The envelope's record of each config's judge noise (``--judge-repeats``), in the
history: a regression gate against the run counts it."""
OUTCOMES = "outcomes"
"""The envelope's record of how each config's simulated conversations ended (scenario
id -> ``goal_reached``, ``gave_up``, ``max_turns``, ``simulator_failed``), in the
history: ``ragmark diff`` lists the scenarios whose ending changed."""


def record_results(path: str | Path, envelope: Mapping[str, Any],
                   result: RunReport | Comparison | LabelRun,
                   results_path: str | Path | None = None, verdict: str | None = None) -> int:
    """Record what a run, compare or label computed (``envelope`` as written in its
    results file); returns the run's id in the history."""
    shown = None if results_path is None else str(results_path)
    if isinstance(result, LabelRun):
        configs = {name: ConfigResult(c.config, c.metrics,
                                      {q.id: dict(q.metrics) for q in c.queries})
                   for name, c in result.configs.items()}
        first = next(iter(result.configs.values()))
        questions = [(q.id, q.question) for q in first.queries]
        return record(path, envelope, str(result.dataset.get("name", "")), questions,
                      configs, shown, verdict)
    reports = result.reports if isinstance(result, Comparison) else {
        str(result.config.get("name")): result}
    first_report = next(iter(reports.values()))
    questions = [(q.id, q.question) for q in first_report.queries]
    used = {name: r.dataset["nuggets_hash"] for name, r in reports.items()
            if isinstance(r.dataset.get("nuggets_hash"), str)}
    if used:  # what each config's nugget scores counted against (diff pairs only equal)
        envelope = {**envelope, NUGGETS_HASHES: used}
    noise = {name: r.llm["judge_noise"] for name, r in reports.items()
             if (r.llm or {}).get("judge_noise")}
    if noise:  # the judges' own noise each config measured (a later gate counts it)
        envelope = {**envelope, JUDGE_NOISE: noise}
    return record(path, envelope, str(first_report.dataset.get("name", "")), questions,
                  {name: ConfigResult.of(r) for name, r in reports.items()}, shown, verdict,
                  Also(pairwise=result.pairwise) if isinstance(result, Comparison) else None)
