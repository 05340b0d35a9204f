"""Statistics over per-query metric values: bootstrap intervals, paired tests, Holm. Pure.

Per-query values are numpy arrays aligned by query; NaN marks a missing value. Paired
functions use only the queries that have a value in both arrays and report how many.
Everything random takes a seed, so the same call gives the same numbers.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats as _scipy_stats

from ragmark.errors import ConfigError
from ragmark.stats.resample import percentile_interval, resample_rows
from ragmark.types import Score

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


@dataclass(frozen=True, slots=True)
class ComparisonRow:
    """One config against the baseline on one metric, over the ``n`` queries both have.

    ``p_value`` and ``p_adjusted`` are None when no query has both values; such rows are
    left out of the Holm family.
    """

    config: str
    metric: str
    baseline_mean: float | None
    value_mean: float | None
    relative_change: float | None
    p_value: float | None
    p_adjusted: float | None
    significant: bool
    n: int
    method: str
    family: str = "all"
    """The Holm family the row was corrected in: a metric's name (per-metric), ``all``
    or ``none``."""
    family_size: int = 0
    """Comparisons in that family (those with at least one query in common)."""


CORRECTIONS = ("per-metric", "all", "none")


def _family(metric: str, correction: str) -> str:
    return metric if correction == "per-metric" else correction


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


def relative_change(new: float, base: float) -> float | None:
    """(new - base) / |base|; None when base is 0 or either value is missing (NaN).

    >>> relative_change(0.75, 0.5)
    0.5
    """
    if base == 0 or math.isnan(base) or math.isnan(new):
        return None
    return (new - base) / abs(base)


def compare_to_baseline(
    per_query: Mapping[str, Mapping[str, ArrayLike]],
    baseline: str,
    metrics: Sequence[str],
    test: str = "permutation",
    alpha: float = 0.05,
    seed: int = 0,
    n_resamples: int = 10_000,
    correction: str = "per-metric",
) -> list[ComparisonRow]:
    """Every other config against ``baseline`` on every metric, Holm-corrected within
    each family of comparisons.

    ``per_query[config][metric]`` holds the per-query values, aligned by query across
    configs (NaN = missing). Means, change and test use the queries both configs have.
    Rows come config by config (in ``per_query`` order, baseline left out), metric by
    metric; ``significant`` is p_adjusted < alpha. ``correction``: ``per-metric`` (one
    family per metric: every config against the baseline on it, as IR practice does),
    ``all`` (one family of every row) or ``none`` (p_adjusted = p_value). Each row
    records its family and the number of comparisons in it.
    """
    if correction not in CORRECTIONS:
        raise ConfigError(f"unknown correction {correction!r}; known: {', '.join(CORRECTIONS)}")
    if test not in TESTS:
        raise ConfigError(f"unknown test {test!r}; known: {', '.join(TESTS)}")
    if not 0 < alpha < 1:
        raise ConfigError(f"alpha must be between 0 and 1, got {alpha}")
    if baseline not in per_query:
        raise ConfigError(f"baseline {baseline!r} is not a config; known: {', '.join(per_query)}")
    pending: list[tuple[str, str, float | None, float | None, TestResult]] = []
    for config in per_query:
        if config == baseline:
            continue
        for metric in metrics:
            base_v = _metric_values(per_query, baseline, metric)
            new_v = _metric_values(per_query, config, metric)
            if base_v.shape != new_v.shape:
                raise ConfigError(
                    f"metric {metric!r}: {config!r} has {new_v.size} per-query values but "
                    f"baseline {baseline!r} has {base_v.size}; they must be aligned by query"
                )
            if test == "t":
                result = paired_t_test(base_v, new_v)
            else:
                result = paired_permutation_test(base_v, new_v, n_resamples, seed)
            x, y = _pairs(base_v, new_v)
            means = (float(x.mean()), float(y.mean())) if result.n else (None, None)
            pending.append((config, metric, means[0], means[1], result))
    tested = [i for i, row in enumerate(pending) if row[4].n > 0]
    families: dict[str, list[int]] = {}
    for i in tested:
        families.setdefault(_family(pending[i][1], correction), []).append(i)
    adjusted: dict[int, float] = {}
    for members in families.values():
        ps = [pending[i][4].p_value for i in members]
        adjusted.update(zip(members, ps if correction == "none" else holm(ps), strict=True))
    rows = []
    for i, (config, metric, base_mean, new_mean, result) in enumerate(pending):
        p_adj = adjusted.get(i)
        change = None
        if base_mean is not None and new_mean is not None:
            change = relative_change(new_mean, base_mean)
        rows.append(
            ComparisonRow(
                config=config,
                metric=metric,
                baseline_mean=base_mean,
                value_mean=new_mean,
                relative_change=change,
                p_value=result.p_value if result.n else None,
                p_adjusted=p_adj,
                significant=p_adj is not None and p_adj < alpha,
                n=result.n,
                method=result.method,
                family=_family(metric, correction),
                family_size=len(families.get(_family(metric, correction), [])),
            )
        )
    return rows


# --- helpers ---------------------------------------------------------------------------


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


def _metric_values(
    per_query: Mapping[str, Mapping[str, ArrayLike]], config: str, metric: str
) -> NDArray[np.float64]:
    if metric not in per_query[config]:
        raise ConfigError(
            f"config {config!r} has no per-query values for metric {metric!r}; "
            f"it has: {', '.join(per_query[config]) or 'none'}"
        )
    return _as_1d(per_query[config][metric], f"{config} {metric}")


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> Score:
    """Cohen's kappa of two raters' labels of the same items.

    kappa = (p_o - p_e) / (1 - p_e), p_o the share of items on which they agree, p_e the
    agreement expected by chance from each rater's label frequencies (Cohen 1960). When
    both raters give every item one and the same label, p_e = 1 and kappa is undefined:
    missing with the reason (not NaN, not 0). Example: ``[1, 1, 0, 0]`` against
    ``[1, 0, 0, 0]``: p_o = 0.75, p_e = 0.5, kappa 0.5.
    """
    if len(a) != len(b):
        raise ValueError(f"two raters must label the same items: {len(a)} != {len(b)}")
    index = {label: i for i, label in enumerate(dict.fromkeys([*a, *b]))}
    table = np.zeros((len(index), len(index)), dtype=np.int64)
    np.add.at(table, ([index[x] for x in a], [index[x] for x in b]), 1)
    only = f" ({next(iter(index))!r})" if len(index) == 1 else ""
    return kappa_of_table(table, only)


def kappa_of_table(table: NDArray[np.int64] | Sequence[Sequence[int]], label: str = "") -> Score:
    """Cohen's kappa from a square table of counts (rows: rater A's label, columns: rater
    B's); see :func:`cohen_kappa`. Computed on integer counts, so it is exact."""
    t = np.asarray(table, dtype=np.int64)
    n = int(t.sum())
    if n == 0:
        return Score.missing("no item has both labels")
    agree = int(np.trace(t))
    chance = int(t.sum(axis=1) @ t.sum(axis=0))  # n^2 * p_e
    details = {"observed": agree / n, "expected": chance / (n * n)}
    if chance == n * n:
        return Score.missing(
            f"kappa is undefined: both raters gave all {n} items the same label{label}, "
            "so chance agreement is 1", **details)
    return Score((n * agree - chance) / (n * n - chance), details=details)
