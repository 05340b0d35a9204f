"""Each config against the baseline on each metric: the relative change, the paired test
and its Holm-adjusted p within the chosen family of comparisons."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ragmark.errors import ConfigError
from ragmark.stats.paired import (
    TESTS,
    TestResult,
    _as_1d,
    _pairs,
    holm,
    least_questions,
    paired_permutation_test,
    paired_t_test,
    smallest_p,
)


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
    judge_noise: float | None = None
    """Set when the difference, significant by the test, is within the judges' own noise
    (``--judge-repeats``): the half-width of that noise's 95% band; the row is then not
    called significant."""


CORRECTIONS = ("per-metric", "all", "none")


def _family(metric: str, correction: str) -> str:
    return metric if correction == "per-metric" else correction


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


def out_of_reach(rows: Sequence[ComparisonRow], test: str, alpha: float,
                 n_resamples: int) -> str | None:
    """What to say of the comparisons no change could make significant, however large:
    under the permutation test a family of F comparisons over at most n questions can
    reject nothing when the least p over n (:func:`~ragmark.stats.paired.smallest_p`)
    times F is not below ``alpha`` (Holm rejects nothing if it cannot reject the
    smallest). None when every comparison could be significant (and under the t-test,
    whose p has no floor)."""
    if test != "permutation":
        return None
    families: dict[str, list[ComparisonRow]] = {}
    for r in rows:
        if r.p_adjusted is not None:
            families.setdefault(r.family if r.family != "none" else r.config + r.metric,
                                []).append(r)
    stuck = [(max(r.n for r in rs), 1 if rs[0].family == "none" else len(rs), rs)
             for rs in families.values()]
    stuck = [(n, size, rs) for n, size, rs in stuck
             if smallest_p(n, n_resamples) * size >= alpha]
    if not stuck:
        return None
    n, size, _ = min(stuck, key=lambda t: t[0])
    count = sum(len(rs) for *_, rs in stuck)
    least = least_questions(size, alpha, n_resamples)
    return (f"{count} of {sum(len(rs) for rs in families.values())} comparisons could not "
            f"be significant however large the change: over {n} questions the test's p "
            f"is never below {smallest_p(n, n_resamples):.4g}"
            + (f", and Holm multiplies the smallest of a family by its size ({size})"
               if size > 1 else "")
            + (f"; {'a family of ' + str(size) if size > 1 else 'one comparison'} needs "
               f"at least {least} questions" if least is not None
               else "; no number of questions is enough for that many comparisons "
                    "(--test t, or fewer comparisons)") + ".")


def _metric_values(
    per_query: Mapping[str, Mapping[str, ArrayLike]], config: str, metric: str
) -> NDArray[np.float64]:
    if metric not in per_query[config]:
        raise ConfigError(
            f"config {config!r} has no per-query values for metric {metric!r}; "
            f"it has: {', '.join(per_query[config]) or 'none'}"
        )
    return _as_1d(per_query[config][metric], f"{config} {metric}")

