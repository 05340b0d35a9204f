"""Per-question differences between two runs: which questions got worse or better, and
whether the change in the mean is real.

A side is one config of one run: question id -> text, metric -> question id -> value,
and the dataset hash. Questions are paired on the ids both sides have a value for; the
paired differences get a bootstrap interval of their mean and a paired randomisation
test. Runs over different datasets or question sets are refused unless ``intersect``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ragmark.errors import ConfigError
from ragmark.history import (
    JUDGE_NOISE,
    NUGGETS_HASHES,
    OUTCOMES,
    list_runs,
    pairwise_of,
    run_row,
    trajectories,
    values,
)
from ragmark.history.retention import pruned_at
from ragmark.judges.nugget_scores import METRICS as NUGGET_METRICS
from ragmark.results import SIMULATION, read_results
from ragmark.results.codec import compare_from_json, run_from_json
from ragmark.running.tournament import outcomes, record_of
from ragmark.simulate.compare import conversation_scores
from ragmark.stats import bootstrap_ci, paired_permutation_test
from ragmark.trajectory import Trajectory

if TYPE_CHECKING:
    from ragmark.results.model import RunReport


@dataclass
class Side:
    """One config of one run."""

    label: str
    """How the user named it (a file, a history id, ``last``), with the config."""
    config: str
    dataset_hash: str
    questions: dict[str, str]
    values: dict[str, dict[str, float | None]]
    note: str = ""
    """Set when the side was taken for a system of another name (see
    :func:`ragmark.plan.gating.resolve_baseline`)."""
    origin: str = ""
    """The results file or history run the side was read from."""
    pairwise: dict[str, Any] | None = None
    """That compare's pairwise verdicts (``--pairwise``), if it judged any."""
    nuggets_hash: str | None = None
    """The fingerprint of the nuggets its nugget scores count against, when it has them
    (:func:`ragmark.results.nuggetizer_files.nuggets_hash`)."""
    trajectories: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """An agent's steps per question (question id -> steps as a results file holds
    them), where it has them."""
    noise: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The judges' own noise the run measured (``--judge-repeats``), by metric
    (:mod:`ragmark.running.repeats`)."""
    outcomes: dict[str, str] = field(default_factory=dict)
    """How each simulated conversation ended (scenario id -> ``goal_reached``,
    ``gave_up``, ...), when the side is a simulation's config."""


@dataclass(frozen=True)
class Moved:
    """A question whose value changed: id, text, value in A and in B."""

    id: str
    question: str
    a: float
    b: float

    @property
    def delta(self) -> float:
        return self.b - self.a


@dataclass
class MetricDiff:
    """One metric over the paired questions."""

    metric: str
    n: int
    mean_a: float | None
    mean_b: float | None
    delta: float | None
    low: float | None
    high: float | None
    p_value: float | None
    worse: list[Moved] = field(default_factory=list)
    better: list[Moved] = field(default_factory=list)
    unchanged: int = 0

    def to_json(self) -> dict[str, Any]:
        def moved(m: Moved) -> dict[str, Any]:
            return {"id": m.id, "question": m.question, "a": m.a, "b": m.b, "delta": m.delta}

        return {"metric": self.metric, "n": self.n, "mean_a": self.mean_a,
                "mean_b": self.mean_b, "delta": self.delta,
                "interval": None if self.low is None else [self.low, self.high],
                "p_value": self.p_value, "unchanged": self.unchanged,
                "worse": [moved(m) for m in self.worse],
                "better": [moved(m) for m in self.better]}


def check_comparable(a: Side, b: Side, intersect: bool) -> list[str]:
    """Notes on what differs; a ConfigError when the runs cannot be paired as they are."""
    notes = []
    if a.dataset_hash != b.dataset_hash:
        if not intersect:
            raise ConfigError(f"{a.label} and {b.label} ran on different datasets (hashes "
                              f"{a.dataset_hash[:12]} and {b.dataset_hash[:12]}); pass "
                              "--intersect to pair the questions both have anyway")
        notes.append("the runs are over different datasets; only the questions both have "
                     "are paired")
    if set(a.questions) != set(b.questions):
        only_a = len(set(a.questions) - set(b.questions))
        only_b = len(set(b.questions) - set(a.questions))
        if not intersect:
            raise ConfigError(f"{a.label} and {b.label} answered different questions "
                              f"({only_a} only in A, {only_b} only in B, e.g. a different "
                              "--max-queries); pass --intersect to pair those both have")
        notes.append(f"{only_a} question{'s' * (only_a != 1)} only in A and {only_b} only "
                     "in B are left out")
    return notes


def diff_metric(a: Side, b: Side, metric: str, *, top: int = 5, confidence: float = 0.95,
                n_resamples: int = 10_000, seed: int = 0) -> MetricDiff:
    """The metric's paired difference B - A and the questions that moved most."""
    va, vb = a.values.get(metric, {}), b.values.get(metric, {})
    ids = [q for q in a.questions if va.get(q) is not None and vb.get(q) is not None]
    if not ids:
        return MetricDiff(metric, 0, None, None, None, None, None, None)
    x = np.array([va[q] for q in ids], dtype=np.float64)
    y = np.array([vb[q] for q in ids], dtype=np.float64)
    iv = bootstrap_ci(y - x, confidence, n_resamples, seed)
    test = paired_permutation_test(x, y, n_resamples, seed)
    moved = [Moved(q, a.questions[q], float(va[q] or 0.0), float(vb[q] or 0.0)) for q in ids]
    worse = sorted((m for m in moved if m.delta < 0), key=lambda m: (m.delta, m.id))
    better = sorted((m for m in moved if m.delta > 0), key=lambda m: (-m.delta, m.id))
    return MetricDiff(metric, len(ids), float(x.mean()), float(y.mean()),
                      float(y.mean() - x.mean()), None if iv is None else iv.low,
                      None if iv is None else iv.high, test.p_value, worse[:top], better[:top],
                      sum(1 for m in moved if m.delta == 0))


def diff(a: Side, b: Side, metrics: Sequence[str] | None = None, *, intersect: bool = False,
         top: int = 5, seed: int = 0) -> tuple[list[MetricDiff], list[str]]:
    """Every metric both sides have (or ``metrics``), and notes on what was left out."""
    notes = check_comparable(a, b, intersect)
    shared = [m for m in a.values if m in b.values]
    if not shared:
        raise ConfigError(f"{a.label} and {b.label} have no metric in common: A has "
                          f"{', '.join(a.values) or 'none'}; B has "
                          f"{', '.join(b.values) or 'none'}")
    if metrics:
        unknown = [m for m in metrics if m not in shared]
        if unknown:
            raise ConfigError(f"metric {unknown[0]!r} is not in both runs; both have: "
                              f"{', '.join(shared) or 'none'}")
        shared = list(metrics)
    _same_nuggets(a, b, shared)
    return [diff_metric(a, b, m, top=top, seed=seed) for m in shared], notes


def other_nuggets(a: Side, b: Side, metrics: Sequence[str]) -> str | None:
    """Why the nugget metrics among ``metrics`` cannot pair A's values with B's (they
    count against different nuggets), or None when they can (or none is named)."""
    named = [m for m in metrics if m in NUGGET_METRICS]
    if not (named and a.nuggets_hash and b.nuggets_hash and a.nuggets_hash != b.nuggets_hash):
        return None
    return (f"{a.label} and {b.label} scored {', '.join(named)} against different nuggets "
            f"(fingerprints {a.nuggets_hash[:12]} and {b.nuggets_hash[:12]}): their values "
            "cannot be paired. Score both against the same nuggets (--nuggets FILE, e.g. the "
            "first's <results>.nuggets.jsonl)")


def _same_nuggets(a: Side, b: Side, metrics: Sequence[str]) -> None:
    """A ConfigError when nugget metrics would pair scores over different nuggets."""
    why = other_nuggets(a, b, metrics)
    if why is not None:
        raise ConfigError(why + ", or leave those metrics out (--metrics)")


def calls_diff(a: Side, b: Side) -> list[dict[str, Any]]:
    """The questions both sides answered as agents whose tool calls differ: per question
    its id, text and each side's calls in order (``name(arguments)``, `` failed`` after
    a call whose tool failed), in A's question order."""
    def calls(steps: list[dict[str, Any]]) -> list[str]:
        return [c.key + (" failed" if c.error is not None else "")
                for c in Trajectory.from_json(steps).calls()]

    out = []
    for q in a.questions:
        if q in a.trajectories and q in b.trajectories:
            ca, cb = calls(a.trajectories[q]), calls(b.trajectories[q])
            if ca != cb:
                out.append({"id": q, "question": a.questions[q], "a": ca, "b": cb})
    return out


def pairwise_diff(a: Side, b: Side) -> list[dict[str, Any]]:
    """When A and B are two runs that each judged their config's answers against the
    same other config (``compare --pairwise``): per opponent and criterion, the config's
    record in A and in B, and the questions whose outcome changed (won, lost, tie)."""
    if a.pairwise is None or b.pairwise is None or (a.origin and a.origin == b.origin):
        return []

    def names(r: dict[str, Any]) -> list[str]:
        return [s["name"] for s in r.get("systems") or []]

    out = []
    for other in names(a.pairwise):
        if other in (a.config, b.config) or other not in names(b.pairwise):
            continue
        for c in dict.fromkeys(c for m in a.pairwise["matches"] for c in m["criteria"]):
            ra = record_of(a.pairwise, a.config, other, c)
            rb = record_of(b.pairwise, b.config, other, c)
            if ra is None or rb is None:
                continue
            before = outcomes(a.pairwise, a.config, other, c)
            after = outcomes(b.pairwise, b.config, other, c)
            changed = [{"id": q, "a": o, "b": after[q]} for q, o in before.items()
                       if q in after and after[q] != o]
            out.append({"against": other, "criterion": c, "a": ra, "b": rb,
                        "changed": changed})
    return out


def side_from_results(label: str, kind: str, data: Mapping[str, Any], config: str | None
                      ) -> Side:
    """A side from a parsed run or compare results file (``config`` picks one config of
    a compare; the baseline when not given), read through the results model
    (:mod:`ragmark.results.codec`)."""
    if kind == "run":
        if not isinstance(data.get("per_query"), dict):
            raise ConfigError(f"{label}: this results file has no per-question values "
                              "(written by an older ragmark); rerun to diff it")
        report = run_from_json(data, label)
        name = str(report.config.get("name", "run"))
        if config is not None and config != name:
            raise ConfigError(f"{label}: the run is of config {name!r}, not {config!r}")
        return side_from_report(report, label)
    if kind == "compare":
        c = compare_from_json(data, label)
        chosen = config or c.baseline or next(iter(c.reports), None)
        if chosen not in c.reports:
            raise ConfigError(f"{label}: no config {chosen!r}; it has {', '.join(c.reports)}")
        side = side_from_report(c.reports[str(chosen)], label)
        side.dataset_hash = c.dataset_hash
        side.origin, side.pairwise = label, c.pairwise
        return side
    if kind == SIMULATION:
        return side_from_simulation(label, data, config)
    raise ConfigError(f"{label}: a {kind} file cannot be diffed; give run or compare results")


def side_from_simulation(label: str, data: Mapping[str, Any], config: str | None) -> Side:
    """A side from a simulation's report (``ragmark simulate --output``): one config's
    conversations (``config``; the first, the baseline, when not given), each scenario
    a question, its conversation metrics named ``simulate:...``, and how it ended."""
    configs = {str(c["system"]): c for c in data.get("configs") or []}
    chosen = config or next(iter(configs), None)
    if chosen not in configs:
        raise ConfigError(f"{label}: no config {chosen!r}; it has {', '.join(configs)}")
    convs = configs[str(chosen)]["conversations"]
    if any("scenario" not in c for c in convs):
        raise ConfigError(f"{label}: this simulation's report has no scenario texts "
                          "(written by an older ragmark); simulate again to diff it")
    vals: dict[str, dict[str, float | None]] = {}
    for conv in convs:
        for m, score in conversation_scores(conv).items():
            vals.setdefault(m, {})[conv["id"]] = score.value
    return Side(f"{label} ({chosen})", str(chosen), str(data["envelope"]["dataset_hash"]),
                {c["id"]: c["scenario"] for c in convs}, vals, origin=label,
                outcomes={c["id"]: c["outcome"] for c in convs})


def outcomes_diff(a: Side, b: Side) -> list[dict[str, Any]] | None:
    """When A and B are simulations: the scenarios both played whose conversation ended
    otherwise (goal reached, gave up, turns ran out, simulator failed), in A's order;
    None when either is not a simulation."""
    if not (a.outcomes and b.outcomes):
        return None
    return [{"id": q, "scenario": a.questions.get(q, ""), "a": o, "b": b.outcomes[q]}
            for q, o in a.outcomes.items() if q in b.outcomes and b.outcomes[q] != o]


_LAST = re.compile(r"^last(?:~(\d+))?$")


def resolve_side(ref: str, config: str | None, history: Path,
                 dataset_hash: str | None = None, baseline: bool = True) -> Side:
    """A side from a results file, a history id, or ``last`` / ``last~N`` (the newest
    runs and compares of ``config``, on ``dataset_hash`` when given; as a ``baseline``,
    those that did not fail their gates: a failed run counts again once accepted). A run
    whose per-question values were pruned is refused, saying when and what to do."""
    p = Path(ref)
    if p.exists():
        kind, data = read_results(p, also=(SIMULATION,))
        return side_from_results(ref, kind, data, config)
    m = _LAST.match(ref)
    if m:
        back = int(m.group(1) or 0)
        runs = [r for r in list_runs(history, config=config) if r.kind in ("run", "compare")
                and (dataset_hash is None or r.dataset_hash == dataset_hash)
                and not (baseline and r.verdict == "failed")]  # failed: no baseline
        if config is None:
            names = {c for r in runs for c in r.configs}
            if len(names) > 1:
                raise ConfigError(f"{ref}: the history holds several configs "
                                  f"({', '.join(sorted(names))}); name one with --config-name")
        if back >= len(runs):
            what = f" of config {config!r}" if config else ""
            on = " on this dataset" if dataset_hash else ""
            raise ConfigError(f"{ref}: the history has {len(runs)} matching runs{what}{on} "
                              f"({history})")
        run_id = runs[back].id
    elif ref.isdigit():
        run_id = int(ref)
    else:
        raise ConfigError(f"{ref!r} is neither a results file, a history id, nor last / "
                          "last~N")
    row, env, configs = run_row(history, run_id)
    name = config or next(iter(configs))
    if name not in configs:
        raise ConfigError(f"run {run_id} has no config {name!r}; it has {', '.join(configs)}")
    when = pruned_at(history, run_id)
    if when is not None:
        kept = f" or its results file ({row.results_path})" if row.results_path else ""
        raise ConfigError(
            f"{ref}: run {run_id}'s per-question values were pruned on {when[:10]} "
            f"(history prune; its means are kept, `ragmark history show {run_id}`); a diff "
            "or a gate pairs questions and needs them: compare with a run that still has "
            f"them{kept}, and `ragmark history accept ID` keeps a baseline from pruning")
    questions, vals = values(history, run_id, name)
    used = (env.get(NUGGETS_HASHES) or {}).get(name)
    return Side(f"run {run_id} ({name})", name, row.dataset_hash, questions, vals,
                origin=f"run {run_id}", pairwise=pairwise_of(history, run_id),
                nuggets_hash=used if isinstance(used, str) else None,
                trajectories=trajectories(history, run_id, name),
                noise=dict((env.get(JUDGE_NOISE) or {}).get(name) or {}),
                outcomes=dict((env.get(OUTCOMES) or {}).get(name) or {}))


def side_from_report(report: RunReport, label: str = "this run") -> Side:
    """The side of a run just computed."""
    vals: dict[str, dict[str, float | None]] = {}
    for q in report.queries:
        for m, s in q.metrics.items():
            vals.setdefault(m, {})[q.id] = s.value
    name = str(report.config.get("name"))
    used = report.dataset.get("nuggets_hash")
    return Side(f"{label} ({name})", name, str(report.dataset.get("hash", "")),
                {q.id: q.question for q in report.queries}, vals,
                nuggets_hash=used if isinstance(used, str) else None,
                trajectories=report.trajectories(),
                noise=dict((report.llm or {}).get("judge_noise") or {}))
