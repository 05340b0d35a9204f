"""Which metric predicts what users say: each metric's association with the users'
feedback over the records that have both.

Binary feedback (thumbs: every value 0 or 1): the AUC of the metric as a score for a
thumbs-up, the Mann-Whitney statistic over the positive-negative pairs (a tie counts a
half; 0.5 is no association). Graded feedback (scores): Spearman's rank correlation.
Each with a 95 % percentile bootstrap interval (records resampled with replacement; a
resample of one class only is drawn again) and n.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import stats as _scipy_stats

from ragmark.stats.auc import auc
from ragmark.stats.resample import percentile_interval, resample_rows

RESAMPLES = 1000


@dataclass(frozen=True, slots=True)
class Association:
    """One metric against the feedback: ``measure`` (auc or spearman), its value, the
    bootstrap interval, n, and why there is no value when there is none."""

    metric: str
    measure: str
    value: float | None
    low: float | None
    high: float | None
    n: int
    note: str = ""


def spearman(scores: NDArray[np.float64], feedback: NDArray[np.float64]) -> float:
    """Spearman's rank correlation (NaN when either side is constant).

    >>> round(spearman(np.array([1., 2., 3., 4.]), np.array([2., 1., 4., 3.])), 12)
    0.6
    """
    if np.ptp(scores) == 0 or np.ptp(feedback) == 0:
        return math.nan
    return float(_scipy_stats.spearmanr(scores, feedback).statistic)


def association(metric: str, values: Sequence[float | None], feedback: Sequence[float | None],
                seed: int = 0, n_resamples: int = RESAMPLES) -> Association:
    """One metric's association with the feedback, over the records with both."""
    pairs = [(float(v), float(f)) for v, f in zip(values, feedback, strict=True)
             if v is not None and f is not None and not math.isnan(v) and not math.isnan(f)]
    x = np.array([p[0] for p in pairs], dtype=np.float64)
    y = np.array([p[1] for p in pairs], dtype=np.float64)
    binary = bool(len(y)) and bool(np.isin(y, (0.0, 1.0)).all())
    measure = "auc" if binary else "spearman"
    if len(pairs) < 3:
        return Association(metric, measure, None, None, None, len(pairs),
                           "fewer than 3 records with both the metric and feedback")
    if binary and (y.all() or not y.any()):
        return Association(metric, measure, None, None, None, len(pairs),
                           "every record has the same thumb")
    if np.ptp(x) == 0:
        return Association(metric, measure, None, None, None, len(pairs),
                           "the metric has one value on every record")

    def stat(i: NDArray[np.intp]) -> float:
        return float(auc(x[i], y[i] == 1.0)) if binary else spearman(x[i], y[i])

    value = stat(np.arange(len(pairs)))
    if math.isnan(value):
        return Association(metric, measure, None, None, None, len(pairs),
                           "the metric or the feedback does not vary")
    draws: list[float] = []
    # a resample of one class, or constant, is redrawn: rows one at a time
    for rows in resample_rows(len(pairs), 10 * n_resamples, seed, 1):
        if len(draws) == n_resamples:
            break
        i = rows[0]
        if binary and (y[i].all() or not y[i].any()):
            continue
        s = stat(i)
        if not math.isnan(s):
            draws.append(s)
    if not draws:
        return Association(metric, measure, value, None, None, len(pairs))
    low, high = percentile_interval(draws, 0.95) or (value, value)
    return Association(metric, measure, value, low, high, len(pairs))


def associations(values: Mapping[str, Sequence[float | None]], feedback: Sequence[float | None],
                 seed: int = 0) -> list[Association]:
    """Every metric's association with the feedback (the feedback itself, and metrics
    without a value, left out)."""
    return [association(m, v, feedback, seed) for m, v in values.items()
            if m != "feedback" and any(x is not None for x in v)]
