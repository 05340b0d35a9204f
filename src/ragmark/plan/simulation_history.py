"""A simulation in the run history: one record of kind ``simulation`` whose "dataset" is
the scenarios (their hash), its configs' conversation metrics as metrics named
``simulate:goal_completion``, ``simulate:knowledge_retention`` and
``simulate:goal_reached``, each scenario's values as a question's, and the gates'
verdict. ``ragmark history`` lists it and ``history trend --metric
simulate:goal_completion`` follows it; the baselines of runs and compares are never
taken from it."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ragmark.history import OUTCOMES
from ragmark.history.store import ConfigResult, record
from ragmark.simulate.compare import METRICS, PREFIX, conversation_scores
from ragmark.simulate.scenarios import Scenario
from ragmark.types import Aggregate, Score


def scenarios_hash(scenarios: tuple[Scenario, ...]) -> str:
    """What a simulation's runs are compared on: the scenarios, all their fields."""
    text = json.dumps([asdict(s) for s in scenarios], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def record_simulation(path: Path, scenarios: tuple[Scenario, ...], name: str,
                      systems: Mapping[str, Any], report: Mapping[str, Any],
                      output: Path | None) -> int:
    """Record ``report`` (execute_simulate's) in the history at ``path``; its id.
    ``systems``: each config's name -> what the simulation's key holds of it. How each
    conversation ended is kept in the envelope (:data:`ragmark.history.OUTCOMES`), for
    ``ragmark diff``."""
    configs = {}
    for c in report["configs"]:
        values: dict[str, dict[str, Score]] = {
            conv["id"]: conversation_scores(conv) for conv in c["conversations"]}
        metrics = {m: Aggregate.of([v[m] for v in values.values() if m in v])
                   for m in (f"{PREFIX}{m}" for m in METRICS)}
        configs[c["system"]] = ConfigResult(
            {"name": c["system"], "simulation": systems[c["system"]],
             "simulator": c["simulator"]}, metrics, values)
    env = {**report["envelope"], OUTCOMES: {
        c["system"]: {conv["id"]: conv["outcome"] for conv in c["conversations"]}
        for c in report["configs"]}}
    failed = any(not g["ok"] for g in report["gates"])
    return record(path, env, name, [(s.id, s.scenario) for s in scenarios], configs,
                  None if output is None else str(output), "failed" if failed else "passed")
