"""The recorded windows of a source read back: the drift gate's reference values and
the trend (each window's means with their intervals; a window whose per-question values
were pruned by its aggregates)."""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

from ragmark.history import store
from ragmark.monitor.settings import KIND, Settings
from ragmark.stats import bootstrap_ci

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


def reference_values(s: Settings, key: str) -> tuple[dict[str, list[float | None]], str]:
    """The values the newest window is compared with, and what they are."""
    if s.reference_run is not None:
        row, _, _ = store.run_row(s.history, s.reference_run)
        config = s.system if s.system in row.configs else row.configs[0]
        _, vals = store.values(s.history, s.reference_run, config)
        return ({m: list(v.values()) for m, v in vals.items()},
                f"run {s.reference_run} ({config!r})")
    rows = _windows(s, key)[: s.reference]
    pooled: dict[str, list[float | None]] = {}
    for r in rows:
        _, vals = store.values(s.history, r.id, s.system)
        for m, v in vals.items():
            pooled.setdefault(m, []).extend(v.values())
    return pooled, f"the previous {len(rows)} window{'s' if len(rows) != 1 else ''}"


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
            iv = bootstrap_ci(xs, 0.95, TREND_RESAMPLES)  # within what the values can be
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
