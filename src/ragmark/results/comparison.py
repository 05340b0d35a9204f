"""The result of a compare: every config's report, the intervals, the tests against the
baseline and how they were computed; and the sentence a test row is said in."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ragmark.errors import ConfigError
from ragmark.results.model import RunReport
from ragmark.stats import CORRECTIONS, TESTS, ComparisonRow, Interval


@dataclass(frozen=True, slots=True)
class StatSettings:
    """How intervals and tests are computed; stored with the results."""

    test: str = "permutation"
    alpha: float = 0.05
    confidence: float = 0.95
    n_resamples: int = 10_000
    seed: int = 0
    correction: str = "per-metric"

    def __post_init__(self) -> None:
        if self.test not in TESTS:
            raise ConfigError(f"unknown test {self.test!r}; known: {', '.join(TESTS)}")
        if self.correction not in CORRECTIONS:
            raise ConfigError(f"unknown correction {self.correction!r}; known: "
                              f"{', '.join(CORRECTIONS)}")
        if not 0 < self.alpha < 1:
            raise ConfigError(f"alpha must be between 0 and 1, got {self.alpha}")


@dataclass(frozen=True, slots=True)
class Comparison:
    """The reports of every config, their intervals, and the tests against the baseline."""

    reports: dict[str, RunReport]
    baseline: str
    metrics: list[str]
    """The compared metrics (table columns and tests), in order."""
    intervals: dict[str, dict[str, Interval | None]]
    """config -> metric -> bootstrap interval of the mean (None: no query has a value)."""
    rows: list[ComparisonRow]
    settings: StatSettings = field(default_factory=StatSettings)
    dataset_hash: str = ""
    executor: dict[str, Any] = field(default_factory=dict)
    """Where the configs ran (see :attr:`RunReport.executor`), after the last one."""
    envelope: dict[str, Any] | None = None
    """A comparison read from a results file: its envelope (None: made when written)."""
    versions: dict[str, Any] | None = None
    """A comparison read from a results file: the versions it was made with."""
    gated: dict[str, Any] | None = None
    """The regression gates' verdicts and trend as recorded (see :attr:`RunReport.gated`)."""
    pairwise: dict[str, Any] | None = None
    """``--pairwise``: every two configs' answers judged side by side (the round robin's
    report of :mod:`ragmark.running.tournament`, with its ``baseline``)."""
    ranking: dict[str, Any] | None = None
    """``--rank-against``: Kendall's tau between the configs' ranking on each compared
    metric and a published table's (:func:`ragmark.stats.ranking.kendall_tau`)."""

    def row(self, config: str, metric: str) -> ComparisonRow | None:
        for r in self.rows:
            if r.config == config and r.metric == metric:
                return r
        return None


def change_sentence(row: ComparisonRow, baseline: str, label: str | None = None) -> str:
    """``hybrid: MRR +15.2% vs dense (p = 0.003 after Holm, significant)``."""
    rel = row.relative_change
    what = "n/a" if rel is None else f"{rel * 100:+.1f}%"
    text = f"{row.config}: {label or row.metric} {what} vs {baseline}"
    if row.p_adjusted is None:
        return text + " (no query has both values: not tested)"
    verdict = "significant" if row.significant else "not significant" if (
        row.judge_noise is None) else (f"within the judges' own noise (±{row.judge_noise:.4f}):"
                                       " not called a difference")
    how = "uncorrected" if row.family == "none" else "after Holm"
    return f"{text} (p = {_p(row.p_adjusted)} {how}, {verdict}, n = {row.n})"


def _p(p: float) -> str:
    return "< 0.0001" if p < 1e-4 else f"{p:.4f}"
