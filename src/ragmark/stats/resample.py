"""The bootstrap: ``n`` items resampled with replacement, seeded, drawn as blocks of
index rows so a statistic is computed on a whole block at once (vectorised). Every
interval of ragmark that resamples items (a metric's mean, a judge's agreement with
people, a score's ROC AUC, a metric's association with user feedback) draws here."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from numpy.typing import ArrayLike, NDArray


def resample_rows(n: int, n_resamples: int, seed: int, block: int
                  ) -> Iterator[NDArray[np.int64]]:
    """``n_resamples`` resamples of ``n`` items as blocks of at most ``block`` rows of
    item indices (``Generator.integers`` from ``default_rng(seed)``: the same seed and
    block give the same rows)."""
    rng = np.random.default_rng(seed)
    for start in range(0, n_resamples, block):
        yield rng.integers(0, n, size=(min(block, n_resamples - start), n))


def percentile_interval(values: ArrayLike, confidence: float) -> tuple[float, float] | None:
    """The (1 - confidence)/2 and (1 + confidence)/2 percentiles of the resampled values
    that are not NaN (Efron and Tibshirani 1993, ch. 13); None when none is."""
    got = np.asarray(values, dtype=np.float64)
    got = got[~np.isnan(got)]
    if not got.size:
        return None
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(got, [tail, 100 - tail])
    return float(low), float(high)
