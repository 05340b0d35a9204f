"""Assertions on an evaluation, for tests (the pytest plugin's ``ragmark_run`` returns an
:class:`Evaluated`). Failure messages show the numbers and the worst questions."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ragmark.analysis.diff import diff_metric, resolve_side, side_from_report
from ragmark.analysis.regression import gate_lines, regression_gate
from ragmark.history import history_path
from ragmark.metrics.names import judge_metrics, parse_metric
from ragmark.results.model import RunReport

_CUTOFF = re.compile(r"^(.*?)_(\d+)$")


def metric_key(name: str) -> str:
    """``ndcg_10`` -> ``ndcg@10`` (a Python keyword cannot hold ``@``); names that are
    already metric names stay as they are."""
    if name in judge_metrics():
        return name
    m = _CUTOFF.match(name)
    text = f"{m.group(1)}@{m.group(2)}" if m and "@" not in name else name
    return str(parse_metric(text))


class Evaluated:
    """A run's report with assertions. ``report`` is the :class:`RunReport`; ``run_id``
    its id in the run history (None when not recorded)."""

    def __init__(self, report: RunReport, run_id: int | None = None,
                 history: Path | None = None) -> None:
        self.report = report
        self.run_id = run_id
        self.history = history

    def __getattr__(self, name: str) -> Any:
        return getattr(self.report, name)

    def value(self, metric: str) -> float | None:
        return self.report.value(metric_key(metric))

    def worst(self, metric: str, n: int = 3) -> list[tuple[str, str, float]]:
        """The ``n`` questions with the lowest value: (id, question, value)."""
        key = self.report.key(metric_key(metric))
        got = [(q.id, q.question, s.value) for q in self.report.queries
               if (s := q.metrics.get(key)) is not None and s.value is not None]
        return sorted(got, key=lambda t: (t[2], t[0]))[:n]

    def _worst_text(self, metric: str) -> str:
        rows = self.worst(metric)
        return "; ".join(f"{i} {q[:60]!r} = {v:.4f}" for i, q, v in rows) or "none"

    def assert_at_least(self, thresholds: Mapping[str, float] | None = None,
                        **kw: float) -> None:
        """Every metric's mean is at least its threshold: ``assert_at_least(ndcg_10=0.6,
        mrr=0.5)`` (or a dict with ``"ndcg@10"`` keys)."""
        failed = []
        for name, floor in {**(thresholds or {}), **kw}.items():
            key = self.report.key(metric_key(name))
            agg = self.report.metrics.get(key)
            if agg is None:
                failed.append(f"{key} was not computed; computed: "
                              f"{', '.join(self.report.metrics)}")
            elif agg.value is None:
                failed.append(f"{key} has no value: missing for {agg.missing} questions "
                              f"({'; '.join(f'{r} ({n})' for r, n in agg.reasons.items())})")
            elif agg.value < floor:
                failed.append(f"{key} = {agg.value:.4f} < {floor:g} over {agg.n} questions"
                              f"{f' ({agg.missing} missing)' if agg.missing else ''}; worst: "
                              f"{self._worst_text(key)}")
        if failed:
            raise AssertionError("ragmark: " + "\n  ".join(failed))

    def assert_no_regression(self, baseline: str = "last", metrics: Sequence[str] = (),
                             *, alpha: float = 0.05, margin: float = 0.0) -> None:
        """No metric is significantly worse than ``baseline`` (a results file, a history
        id, or ``last``: the newest other recorded run of this config on this dataset);
        the same gate as ``--fail-on-regression``."""
        now = side_from_report(self.report)
        hist = self.history or history_path()
        ref = baseline
        if baseline == "last" and self.run_id is not None:
            from ragmark.history import list_runs

            earlier = [r for r in list_runs(hist, config=now.config)
                       if r.id != self.run_id and r.dataset_hash == now.dataset_hash
                       and r.kind in ("run", "compare") and r.verdict != "failed"]
            if not earlier:  # the first run: nothing to compare with yet
                import pytest

                pytest.skip(f"ragmark: no earlier run of {now.config!r} on this dataset in "
                            f"{hist} to compare with (the first run): not gated")
            ref = str(earlier[0].id)
        base = resolve_side(ref, now.config, hist, now.dataset_hash)
        names = [self.report.key(metric_key(m)) for m in metrics] or [
            m for m in self.report.metrics if m in now.values and m in base.values]
        rows = regression_gate(base, now, names, alpha=alpha, margin=margin)
        failed = [(r, line) for r, line in zip(rows, gate_lines(rows, base.label), strict=True)
                  if not r.passed]
        if failed:
            parts = []
            for r, line in failed:
                worse = diff_metric(base, now, r.metric, top=3).worse
                parts.append(line + "; worse: " + ("; ".join(
                    f"{m.id} {m.a:.4f} -> {m.b:.4f}" for m in worse) or "none"))
            raise AssertionError("ragmark: " + "\n  ".join(parts))
