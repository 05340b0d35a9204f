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


def auc(scores: NDArray[np.float64], positive: NDArray[np.bool_]) -> float:
    """P(score of a positive > score of a negative) + half the ties.

    >>> auc(np.array([0.9, 0.8, 0.3, 0.1]), np.array([True, False, True, False]))
    0.75
    """
    ranks = _scipy_stats.rankdata(scores)
    n_pos = int(positive.sum())
    n_neg = len(scores) - n_pos
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


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
        return auc(x[i], y[i] == 1.0) if binary else spearman(x[i], y[i])

    value = stat(np.arange(len(pairs)))
    if math.isnan(value):
        return Association(metric, measure, None, None, None, len(pairs),
                           "the metric or the feedback does not vary")
    rng = np.random.default_rng(seed)
    draws: list[float] = []
    for _ in range(10 * n_resamples):  # a resample of one class, or constant, is redrawn
        if len(draws) == n_resamples:
            break
        i = rng.integers(0, len(pairs), len(pairs))
        if binary and (y[i].all() or not y[i].any()):
            continue
        s = stat(i)
        if not math.isnan(s):
            draws.append(s)
    if not draws:
        return Association(metric, measure, value, None, None, len(pairs))
    low, high = np.percentile(draws, [2.5, 97.5])
    return Association(metric, measure, value, float(low), float(high), len(pairs))


def associations(values: Mapping[str, Sequence[float | None]], feedback: Sequence[float | None],
                 seed: int = 0) -> list[Association]:
    """Every metric's association with the feedback (the feedback itself, and metrics
    without a value, left out)."""
    return [association(m, v, feedback, seed) for m, v in values.items()
            if m != "feedback" and any(x is not None for x in v)]
