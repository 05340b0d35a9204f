"""Paired statistics over per-query values: bootstrap intervals of a mean, the paired
permutation (sign-flip) and t tests, Holm's correction. Pure; NaN marks a missing value,
paired functions use only the queries with a value in both and say how many."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats as _scipy_stats

from ragmark.errors import ConfigError
from ragmark.stats.resample import percentile_interval, resample_rows

TESTS = ("permutation", "t")
EXACT_MAX_N = 16
"""Up to this many paired queries the permutation test enumerates all 2^n sign flips."""

_BLOCK_ELEMENTS = 1 << 20  # resample matrices are drawn in blocks of about this size
_TIE_RTOL = 1e-9  # resampled statistics this close to the observed one count as ties


@dataclass(frozen=True, slots=True)
class Interval:
    """A bootstrap confidence interval of a mean over ``n`` queries."""

    low: float
    high: float
    mean: float
    n: int
    confidence: float = 0.95
    note: str = ""


@dataclass(frozen=True, slots=True)
class TestResult:
    """A paired test of b against a. ``statistic`` is mean(b - a) over the ``n`` pairs."""

    __test__ = False  # not a pytest test class

    statistic: float
    p_value: float
    n: int
    method: str
    exact: bool = False
    note: str = ""


def bootstrap_ci(
    values: ArrayLike,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> Interval | None:
    """Percentile bootstrap interval of the mean over queries (NaN values dropped).

    Resamples queries with replacement ``n_resamples`` times and takes the
    (1 - confidence)/2 and (1 + confidence)/2 percentiles of the resampled means
    (Efron and Tibshirani 1993, ch. 13). None when no value is present; with one value
    the interval is that value (zero width, noted).

    >>> bootstrap_ci([1.0, 1.0, 1.0])
    Interval(low=1.0, high=1.0, mean=1.0, n=3, confidence=0.95, note='')
    """
    if not 0 < confidence < 1:
        raise ConfigError(f"confidence must be between 0 and 1, got {confidence}")
    _check_resamples(n_resamples)
    x = _present(values)
    n = x.size
    if n == 0:
        return None
    mean = float(x.mean())
    if n == 1:
        return Interval(mean, mean, mean, 1, confidence, "one query: no spread to resample")
    if np.all(x == x[0]):
        return Interval(mean, mean, mean, n, confidence)
    means = np.concatenate([x[rows].mean(axis=1) for rows in resample_rows(
        n, n_resamples, seed, max(1, _BLOCK_ELEMENTS // n))])
    low, high = percentile_interval(means, confidence) or (mean, mean)
    return Interval(low, high, mean, n, confidence)


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> Interval | None:
    """Wilson's score interval of a proportion (Wilson 1927; Brown, Cai and DasGupta
    2001 recommend it for small n): ``successes`` of ``n``. Never a point at 0 or 1:
    0 of 8 is [0, 0.324], 3 of 3 [0.439, 1]. None when ``n`` is 0.

    >>> iv = wilson_interval(0, 8)
    >>> (iv.low, round(iv.high, 3), iv.mean, iv.n)
    (0.0, 0.324, 0.0, 8)
    """
    if not 0 < confidence < 1:
        raise ConfigError(f"confidence must be between 0 and 1, got {confidence}")
    if n <= 0:
        return None
    z = float(_scipy_stats.norm.ppf((1 + confidence) / 2))
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return Interval(max(0.0, centre - half), min(1.0, centre + half), p, n, confidence,
                    "Wilson score interval (0/1 values)")


def mean_ci(values: ArrayLike, confidence: float = 0.95, n_resamples: int = 10_000,
            seed: int = 0) -> Interval | None:
    """The interval of a mean over queries: a proportion's (:func:`wilson_interval`)
    when every value is 0 or 1 (a hit rate, an exact match, an attack's success), where
    a percentile bootstrap of all-equal values would be a point; else
    :func:`bootstrap_ci`. For a mean only: a difference of means is bootstrapped.

    >>> mean_ci([1.0, 1.0, 1.0]).low > 0.4
    True
    >>> mean_ci([0.5, 0.5]).low
    0.5
    """
    x = _present(values)
    if x.size and bool(np.all((x == 0.0) | (x == 1.0))):
        return wilson_interval(int(x.sum()), int(x.size), confidence)
    return bootstrap_ci(x, confidence, n_resamples, seed)


def paired_permutation_test(
    a: ArrayLike, b: ArrayLike, n_resamples: int = 10_000, seed: int = 0
) -> TestResult:
    """Two-sided paired randomisation test of mean(b - a) = 0, by flipping signs.

    Under the null hypothesis each query's difference d_i = b_i - a_i is as likely to
    be -d_i. p = share of sign assignments s with |mean(s * d)| >= |mean(d)|. With
    n <= 16 pairs all 2^n assignments are enumerated (exact); otherwise p =
    (count + 1) / (n_resamples + 1) over random assignments, the observed one included
    (Smucker, Allan and Carterette, CIKM 2007). All differences zero gives p = 1.

    >>> paired_permutation_test([0.0, 0.0, 0.0], [1.0, 1.0, 1.0]).p_value
    0.25
    """
    _check_resamples(n_resamples)
    d, n = _differences(a, b)
    if n == 0:
        return TestResult(0.0, 1.0, 0, "permutation", note="no query has both values")
    observed = float(d.mean())
    if not np.any(d):
        return TestResult(observed, 1.0, n, "permutation", exact=n <= EXACT_MAX_N)
    threshold = abs(observed) - _TIE_RTOL * float(np.abs(d).mean())
    total = float(d.sum())
    if n <= EXACT_MAX_N:
        bits = (np.arange(1 << n, dtype=np.int64)[:, None] >> np.arange(n)) & 1
        means = (2.0 * (bits @ d) - total) / n
        count = int(np.count_nonzero(np.abs(means) >= threshold))
        return TestResult(observed, count / (1 << n), n, "permutation", exact=True)
    rng = np.random.default_rng(seed)
    count = 0
    block = max(1, _BLOCK_ELEMENTS // n)
    for start in range(0, n_resamples, block):
        rows = min(block, n_resamples - start)
        flips = rng.integers(0, 2, size=(rows, n), dtype=np.int8).astype(np.float64)
        means = (2.0 * (flips @ d) - total) / n
        count += int(np.count_nonzero(np.abs(means) >= threshold))
    return TestResult(observed, (count + 1) / (n_resamples + 1), n, "permutation")


def smallest_p(n: int, n_resamples: int = 10_000) -> float:
    """The smallest p-value :func:`paired_permutation_test` can give over ``n`` pairs,
    whatever their values: 2 / 2^n when it enumerates (``n`` <= 16: only the observed
    signs and their mirror image reach the observed mean), else 1 / (n_resamples + 1)
    (the observed assignment counted once) or 2 / 2^n if larger (the rate at which
    random signs hit those two). A test over 5 questions never gives p below 0.0625: it
    cannot be significant at 0.05.

    >>> smallest_p(5)
    0.0625
    >>> round(smallest_p(300), 6)
    0.0001
    """
    floor = 2.0 / 2.0 ** min(n, 1000)
    return floor if n <= EXACT_MAX_N else max(floor, 1.0 / (n_resamples + 1))


def least_questions(comparisons: int, alpha: float = 0.05, n_resamples: int = 10_000
                    ) -> int | None:
    """The fewest questions over which one of ``comparisons`` Holm-corrected paired
    permutation tests can be significant at ``alpha``: the smallest n whose least p
    (:func:`smallest_p`) times ``comparisons`` is below ``alpha``; None when none is
    (too many comparisons for the resamples).

    >>> least_questions(1), least_questions(2), least_questions(5)
    (6, 7, 8)
    """
    for n in range(2, 64):
        if smallest_p(n, n_resamples) * max(1, comparisons) < alpha:
            return n
    return None


def paired_t_test(a: ArrayLike, b: ArrayLike) -> TestResult:
    """Two-sided paired t-test of mean(b - a) = 0 (``scipy.stats.ttest_rel``).

    ``statistic`` is mean(b - a), as for the permutation test, not t. All differences
    zero, or fewer than 2 pairs, gives p = 1 (scipy would give NaN).
    """
    d, n = _differences(a, b)
    if n == 0:
        return TestResult(0.0, 1.0, 0, "t", note="no query has both values")
    observed = float(d.mean())
    if n < 2:
        return TestResult(observed, 1.0, n, "t", note="one pair: no test possible")
    if not np.any(d):
        return TestResult(observed, 1.0, n, "t")
    x, y = _pairs(a, b)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # constant non-zero d: t = inf
        p = float(_scipy_stats.ttest_rel(y, x).pvalue)
    return TestResult(observed, 1.0 if math.isnan(p) else p, n, "t")


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values, in the input order (Holm 1979).

    Sorted ascending, the i-th smallest (1-based) of m becomes
    max over j <= i of min(1, (m - j + 1) * p_(j)).

    >>> [round(p, 12) for p in holm([0.01, 0.04, 0.03])]
    [0.03, 0.06, 0.06]
    """
    p = np.asarray(p_values, dtype=np.float64)
    if p.ndim != 1:
        raise ValueError(f"p-values must be a flat sequence, got shape {p.shape}")
    if p.size and not ((p >= 0) & (p <= 1)).all():
        raise ValueError(f"p-values must lie in [0, 1], got {p.tolist()}")
    m = p.size
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted = np.empty(m, dtype=np.float64)
    adjusted[order] = np.maximum.accumulate(scaled)
    return adjusted.tolist()


def _check_resamples(n_resamples: int) -> None:
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int) or n_resamples < 1:
        raise ConfigError(f"n_resamples must be a positive integer, got {n_resamples!r}")


def _as_1d(values: ArrayLike, name: str = "values") -> NDArray[np.float64]:
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 1:
        raise ValueError(f"{name} must be one value per query (1-D), got shape {x.shape}")
    return x


def _present(values: ArrayLike) -> NDArray[np.float64]:
    x = _as_1d(values)
    return x[~np.isnan(x)]


def _pairs(a: ArrayLike, b: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    x, y = _as_1d(a, "a"), _as_1d(b, "b")
    if x.shape != y.shape:
        raise ValueError(f"paired values must align by query: {x.size} values vs {y.size}")
    both = ~(np.isnan(x) | np.isnan(y))
    return x[both], y[both]


def _differences(a: ArrayLike, b: ArrayLike) -> tuple[NDArray[np.float64], int]:
    x, y = _pairs(a, b)
    return y - x, int(x.size)


