"""Several configurations over the same questions, and their changes against a baseline."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ragmark.config import RunConfig
from ragmark.errors import ConfigError
from ragmark.metrics.names import MetricName
from ragmark.report.model import RunReport
from ragmark.runner import Progress, run
from ragmark.types import Dataset

TABLE_METRICS = ["mrr", "recall@5", "hit@5", "precision@5", "ndcg@10"]


@dataclass(frozen=True, slots=True)
class Change:
    """One config's change on one metric against the baseline."""

    config: str
    baseline: str
    metric: str
    value: float | None
    baseline_value: float | None

    @property
    def relative(self) -> float | None:
        if self.value is None or not self.baseline_value:
            return None
        return (self.value - self.baseline_value) / self.baseline_value

    def sentence(self) -> str:
        """``hybrid: MRR +15.2% vs dense``."""
        rel = self.relative
        what = "n/a" if rel is None else f"{rel * 100:+.1f}%"
        return f"{self.config}: {self.metric} {what} vs {self.baseline}"


@dataclass(slots=True)
class Comparison:
    reports: dict[str, RunReport]
    baseline: str
    changes: list[Change]


def compare(
    dataset: Dataset,
    configs: Sequence[RunConfig],
    metrics: Sequence[str | MetricName] | None = None,
    baseline: str | None = None,
    *,
    max_queries: int | None = None,
    progress: Progress | None = None,
) -> Comparison:
    names = [c.name for c in configs]
    if len(set(names)) != len(names):
        raise ConfigError(f"config names must be distinct, got {names}")
    base = baseline or names[0]
    if base not in names:
        raise ConfigError(f"baseline {base!r} is not one of the configs: {', '.join(names)}")
    reports = {c.name: run(dataset, c, metrics, max_queries=max_queries, progress=progress)
               for c in configs}
    changes = [
        Change(n, base, m, reports[n].value(m), reports[base].value(m))
        for n in names if n != base
        for m in reports[base].metrics
    ]
    return Comparison(reports, base, changes)
