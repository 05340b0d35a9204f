"""The regression gate of a plan: the gated metrics, each config's baseline (found before
the run starts), the gate's rows against it, and how they are written (results JSON,
Markdown) and recorded (the verdict)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragmark.analysis.diff import resolve_side, side_from_report
from ragmark.analysis.gates import Condition, metric_name
from ragmark.analysis.regression import gate_lines, gate_markdown, regression_gate
from ragmark.data.fingerprint import dataset_hash
from ragmark.errors import ConfigError
from ragmark.history import history_path, run_row
from ragmark.metrics.names import split_names
from ragmark.results import read_results

PAIRWISE = "pairwise:"
"""The prefix of a pairwise gate in ``--fail-on-regression`` (``pairwise:overall``)."""


def split_gates(text: str | None) -> tuple[list[str], list[str]]:
    """``--fail-on-regression``'s names: the metrics, and the criteria of the pairwise
    gates (``pairwise:CRITERION``)."""
    names = split_names(text) if text else []
    return ([n for n in names if not n.startswith(PAIRWISE)],
            [n[len(PAIRWISE):] for n in names if n.startswith(PAIRWISE)])


def regression_metrics(text: str | None, against: str | None, *, pairwise: bool = False
                       ) -> list[str]:
    """The gated metrics' canonical names (checked before any work); ``pairwise``: the
    command takes pairwise gates (they are left out here), else one is an error."""
    names, judged = split_gates(text)
    if judged and not pairwise:
        raise ConfigError(f"--fail-on-regression {PAIRWISE}{judged[0]}: a pairwise gate "
                          "needs two systems judged side by side: 'ragmark compare "
                          "--pairwise' or 'ragmark duel'")
    if not names:
        if against:
            raise ConfigError("--against names the run to gate against: give "
                              "--fail-on-regression METRIC[,METRIC] too" + (
                                  " (a pairwise gate is against the compare's baseline "
                                  "config, not --against)" if judged else ""))
        return []
    return [metric_name(m) for m in names]


def resolve_baseline(ref: str | None, config: str, dataset_hash: str, history: Any) -> Any:
    """The baseline side (default ``last``: the newest recorded run of the config on the
    dataset), resolved before the run starts. A file or history id named explicitly may
    hold another name (yesterday's log file): a run file, or a compare of one config, is
    then taken as the baseline of this system, and the side's ``note`` names both."""
    path = history_path(history)
    try:
        return resolve_side(ref or "last", config, path, dataset_hash)
    except ConfigError as e:
        if ref is None or ref == "last" or not ("is of config" in str(e) or "no config" in str(
                e)):
            raise
        if _configs_in(ref, path) != 1:  # which of several systems would be a guess
            raise
        side = resolve_side(ref, None, path, dataset_hash)
        side.note = (f"the baseline {ref} is of {side.config!r} and this run of {config!r}: "
                     "gated as the same system")
        return side


def _configs_in(ref: str, history: Path) -> int:
    """How many configs the results file or history run ``ref`` holds."""
    if Path(ref).exists():
        kind, data = read_results(Path(ref))
        return len(data.get("configs") or {}) if kind == "compare" else 1
    return len(run_row(history, int(ref))[2]) if ref.isdigit() else 0


@dataclass
class Gated:
    """One config's regression gate: the run's side, its baseline (None: not gated), the
    rows, and the lines printed."""

    now: Any
    base: Any
    rows: list[Any]
    lines: list[str]


def regression_gates(gated_runs: Sequence[tuple[Any, Any]], gated: Sequence[str],
                     alpha: float, margin: float) -> list[Gated]:
    """The regression gate of each (baseline side or None, report)."""
    out = []
    for base, report in gated_runs if gated else ():
        now = side_from_report(report)
        if base is None:
            out.append(Gated(now, None, [], []))
            continue
        names = list(dict.fromkeys(report.key(m) for m in gated))  # map -> map@10
        rows = regression_gate(base, now, names, alpha=alpha, margin=margin)
        out.append(Gated(now, base, rows, gate_lines(rows, base.label)))
    return out


def gates_json(gates: Sequence[Gated], metrics: Sequence[str], history: Any,
               dataset_hash: str) -> dict[str, Any]:
    """``gates`` (per config: its baseline and every gated metric's verdict) and
    ``trend`` (per config and gated metric, the recorded runs on this dataset, oldest
    first) for the results file; empty without a regression gate."""
    if not gates:
        return {}
    out: dict[str, Any] = {"gates": [
        {"config": g.now.config, "baseline": None if g.base is None else g.base.label,
         "rows": [r.to_json() for r in g.rows]} for g in gates]}
    if history is not None and Path(history).is_file():
        from ragmark.history.store import trend

        out["trend"] = {g.now.config: {m: [
            {"run": r.id, "created_at": r.created_at, "value": a.value, "n": a.n}
            for r, a in trend(history, g.now.config, m, dataset=dataset_hash)]
            for m in ([r.metric for r in g.rows] or metrics)} for g in gates}
    return out


def gates_markdown(gates: Sequence[Gated], alpha: float, margin: float) -> str:
    return "".join("\n" + gate_markdown(g.rows, g.base.label, alpha, margin)
                   for g in gates if g.base is not None)


def verdict_of(conditions: Sequence[Any], gates: Sequence[Gated]) -> str:
    """``failed`` when a gate condition or a regression gate failed (the run exits 1),
    else ``passed``: recorded in the history, where ``last`` skips failed runs."""
    ok = all(c.passed for c in conditions) and all(r.passed for g in gates for r in g.rows)
    return "passed" if ok else "failed"


def base_of(ref: str | None, config: str, dataset_hash: str, history: Any) -> Any:
    """``config``'s side in ``ref`` (default ``last``: its newest recorded run on the
    dataset), or None when ``ref`` has no such config (it is then not gated)."""
    if ref is None or ref == "last":
        try:
            return resolve_baseline("last", config, dataset_hash, history)
        except ConfigError as e:
            if "matching runs" in str(e) or "no run history" in str(e):
                return None
            raise
    try:
        return resolve_side(ref, config, history_path(history), dataset_hash)
    except ConfigError as e:
        if "no config" in str(e) or "is of config" in str(e):
            return None
        raise


def baselines(plan: Any) -> dict[str, Any]:
    """Each config's baseline side (None: not gated), found before the run starts: a
    run's from ``--against`` (default ``last``; the first run has none and is not
    gated, as compare), each config of a compare its own in ``--against``."""
    g = plan.gating
    if not g.regression:
        return {}

    ds_hash = dataset_hash(plan.dataset)
    if plan.kind == "compare" or g.baseline in (None, "last"):
        return {c.name: base_of(g.baseline, c.name, ds_hash, g.history)
                for c in plan.configs}
    (cfg,) = plan.configs
    return {cfg.name: resolve_baseline(g.baseline, cfg.name, ds_hash, g.history)}


def gate_conditions(conditions: Sequence[Any], gates: Sequence[Gated]
                    ) -> tuple[list[Any], list[str]]:
    """The conditions with the regression gates' added (a config without a baseline is
    not gated: a passing condition with a note), and the lines that say so."""
    out = list(conditions)
    lines: list[str] = []
    for g in gates:
        if g.base is None:
            note = (f"{g.now.config}: no earlier run of this config on this dataset to "
                    "gate against: not gated for regressions")
            lines.append(f"note: {note}")
            out.append(Condition(f"{g.now.config}: has a baseline", True, note))
            continue
        lines += g.lines
        out += [Condition(f"{g.now.config}: no regression in {r.metric}", r.passed, line)
                for r, line in zip(g.rows, g.lines, strict=True)]
    return out, lines
