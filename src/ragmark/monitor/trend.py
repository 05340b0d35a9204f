"""The recorded windows of a source read back: the drift gate's reference values and
the trend (each window's means with their intervals; a window whose per-question values
were pruned by its aggregates)."""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

from ragmark.errors import ConfigError
from ragmark.history import store
from ragmark.monitor.settings import KIND, MOMENTS, Settings
from ragmark.stats import mean_ci
from ragmark.stats.drift import Moments

TREND_RESAMPLES = 2_000
"""Resamples of each window's bootstrap interval in the trend (every call redraws the
trend of up to 20 windows; 2,000 keep a window of thousands of records at ~0.04 s a
metric)."""


@dataclass(frozen=True)
class Point:
    """One recorded window of the trend: its history id, when, how many records, and
    each metric's mean with its 95 % percentile bootstrap interval and n."""

    id: int
    created_at: str
    records: int
    means: dict[str, tuple[float | None, float | None, float | None, int]]
    flagged: bool
    drifted: frozenset[str] | None = None
    """The metrics that drifted in the window (None: a window recorded before the
    history kept them; then :attr:`flagged` stands for all)."""

    def drift_in(self, metric: str) -> bool:
        """Whether ``metric`` drifted in this window."""
        return metric in self.drifted if self.drifted is not None else self.flagged


def _windows(s: Settings, key: str) -> list[store.RunRow]:
    ds = dataset_hash(key)
    return [r for r in store.list_runs(s.history, kind=KIND, config=s.system)
            if r.dataset_hash == ds] if s.history.exists() else []


def dataset_hash(key: str) -> str:
    """A source's stand-in for a dataset hash: its windows share it."""
    return hashlib.sha256(f"monitor:{key}".encode()).hexdigest()


def _moments(s: Settings, run_id: int, config: str) -> dict[str, Moments] | None:
    """Each metric's moments in a recorded window: of its values, else (pruned) the
    moments it recorded; None when it has neither."""
    _, vals = store.values(s.history, run_id, config)
    if vals:
        return {m: Moments.of(list(v.values())) for m, v in vals.items()}
    kept = store.run_row(s.history, run_id)[1].get(MOMENTS)
    if not isinstance(kept, dict):
        return None
    return {m: Moments.from_json(v) for m, v in kept.items()}


def reference_values(s: Settings, key: str) -> tuple[dict[str, Moments], str]:
    """Each metric's moments in what the newest window is compared with (the previous
    windows pooled, or a pinned run), and what that is, with how many records."""
    if s.reference_run is not None:
        row, _, _ = store.run_row(s.history, s.reference_run)
        config = s.system if s.system in row.configs else row.configs[0]
        got = _moments(s, s.reference_run, config)
        if got is None:
            raise ConfigError(f"--reference-run {s.reference_run}: its per-question values "
                              "were pruned and it recorded no moments to test against; "
                              "pin a run that keeps them (`ragmark history accept ID`)")
        return got, f"run {s.reference_run} ({config!r}, {row.questions} records)"
    parts: dict[str, list[Moments]] = {}
    rows = _windows(s, key)[: s.reference]
    used = []
    for r in rows:
        got = _moments(s, r.id, s.system)
        if got is None:  # pruned by a ragmark that kept no moments
            continue
        used.append(r)
        for m, mo in got.items():
            parts.setdefault(m, []).append(mo)
    pooled = {m: Moments.pooled(ps) for m, ps in parts.items()}
    what = (f"the previous {len(used)} window{'s' if len(used) != 1 else ''} "
            f"({sum(r.questions for r in used):,} records)")
    if len(used) < len(rows):
        what += (f"; {len(rows) - len(used)} older window(s) left out: pruned before "
                 "their moments were kept")
    return pooled, what


def trend(s: Settings, key: str) -> list[Point]:
    """The source's recorded windows, oldest first (the newest ``s.windows``)."""
    points = []
    for r in reversed(_windows(s, key)[: s.windows]):
        _, vals = store.values(s.history, r.id, s.system)
        env = store.run_row(s.history, r.id)[1]
        means: dict[str, tuple[float | None, float | None, float | None, int]] = {}
        for m, v in vals.items():
            xs = [x for x in v.values() if x is not None and not math.isnan(x)]
            if not xs:
                means[m] = (None, None, None, 0)
                continue
            iv = mean_ci(xs, 0.95, TREND_RESAMPLES)  # within what the values can be
            assert iv is not None  # xs is not empty
            means[m] = (iv.mean, iv.low, iv.high, iv.n)
        # the aggregates without values a question (grounded_ratio, aurc; late feedback
        # counted in): the window's value, without an interval
        for m, a in store.aggregates(s.history, r.id).get(s.system, {}).items():
            if m not in means or m == "feedback" and a.n != means[m][3]:
                means[m] = (a.value, None, None, a.n)
        drifted = env.get("drifted")
        points.append(Point(r.id, r.created_at, r.questions, means, r.verdict == "failed",
                            None if drifted is None else frozenset(drifted)))
    return points
