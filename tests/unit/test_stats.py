"""Statistics against scipy and hand-worked values."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from ragmark.errors import ConfigError
from ragmark.stats import (
    ComparisonRow,
    bootstrap_ci,
    compare_to_baseline,
    holm,
    paired_permutation_test,
    paired_t_test,
    relative_change,
)


def _scipy_paired(a: np.ndarray, b: np.ndarray, n_resamples: float) -> float:
    def mean_diff(x: np.ndarray, y: np.ndarray, axis: int) -> np.ndarray:
        return np.mean(y - x, axis=axis)

    res = sps.permutation_test(
        (a, b),
        mean_diff,
        permutation_type="samples",
        vectorized=True,
        n_resamples=n_resamples,
        alternative="two-sided",
        random_state=1,
    )
    return float(res.pvalue)


# --- permutation test -------------------------------------------------------------------


@pytest.mark.parametrize("n", [5, 8, 12])
def test_exact_permutation_equals_scipy(n: int) -> None:
    rng = np.random.default_rng(n)
    a = rng.random(n)
    b = a + rng.normal(0.1, 0.2, n)
    ours = paired_permutation_test(a, b)
    assert ours.exact and ours.n == n and ours.method == "permutation"
    assert ours.statistic == pytest.approx(np.mean(b - a))
    assert ours.p_value == pytest.approx(_scipy_paired(a, b, np.inf), abs=1e-12)


def test_exact_permutation_with_tied_differences_equals_scipy() -> None:
    a = np.array([0, 1, 0, 0, 1, 0, 0, 1, 0, 0], dtype=float)  # hit@k-like 0/1 values
    b = np.array([1, 1, 1, 0, 1, 1, 0, 0, 1, 0], dtype=float)
    assert paired_permutation_test(a, b).p_value == pytest.approx(
        _scipy_paired(a, b, np.inf), abs=1e-12
    )


def test_hand_worked_exact_p() -> None:
    # d = (1, 1, 1): only all-plus and all-minus reach |mean| >= 1 -> 2 / 8
    assert paired_permutation_test([0, 0, 0], [1, 1, 1]).p_value == 0.25


def test_sampled_permutation_close_to_scipy_and_seeded() -> None:
    rng = np.random.default_rng(7)
    a = rng.random(40)
    b = a + rng.normal(0.03, 0.2, 40)
    ours = paired_permutation_test(a, b, n_resamples=5000, seed=3)
    assert not ours.exact and ours.n == 40
    assert ours.p_value == pytest.approx(_scipy_paired(a, b, 5000), abs=0.03)
    assert paired_permutation_test(a, b, n_resamples=5000, seed=3) == ours
    assert 1 / 5001 <= ours.p_value <= 1


def test_sampled_p_counts_observed_assignment() -> None:
    a = np.zeros(30)
    b = np.full(30, 0.5)  # no random flip reaches the observed mean (2 of 2^30 do)
    assert paired_permutation_test(a, b, n_resamples=999).p_value == pytest.approx(1 / 1000)


@pytest.mark.parametrize("n", [6, 50])
def test_all_differences_zero_gives_p_one(n: int) -> None:
    a = np.linspace(0, 1, n)
    assert paired_permutation_test(a, a.copy()).p_value == 1.0
    assert paired_t_test(a, a.copy()).p_value == 1.0


def test_nan_pairs_are_dropped_and_counted() -> None:
    a = np.array([0.1, np.nan, 0.3, 0.4, 0.5, 0.6])
    b = np.array([0.2, 0.3, np.nan, np.nan, 0.9, 0.8])
    for result in (paired_permutation_test(a, b), paired_t_test(a, b)):
        assert result.n == 3
        assert result.statistic == pytest.approx((0.1 + 0.4 + 0.2) / 3)
    empty = paired_permutation_test([np.nan], [1.0])
    assert (empty.n, empty.p_value) == (0, 1.0) and empty.note


def test_paired_arrays_must_align() -> None:
    with pytest.raises(ValueError, match="align"):
        paired_permutation_test([1.0, 2.0], [1.0])


# --- t-test -----------------------------------------------------------------------------


def test_t_test_equals_scipy() -> None:
    rng = np.random.default_rng(0)
    a = rng.random(25)
    b = a + rng.normal(0.05, 0.1, 25)
    ours = paired_t_test(a, b)
    assert ours.method == "t" and ours.n == 25
    assert ours.p_value == pytest.approx(sps.ttest_rel(b, a).pvalue, rel=1e-12)
    assert paired_t_test([1.0], [2.0]).p_value == 1.0


# --- Holm -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "adjusted"),
    [
        ([0.01, 0.04, 0.03], [0.03, 0.06, 0.06]),
        ([0.01, 0.02, 0.03, 0.04], [0.04, 0.06, 0.06, 0.06]),
        ([0.04, 0.01], [0.04, 0.02]),
        ([0.5, 0.6], [1.0, 1.0]),
        ([0.2], [0.2]),
        ([], []),
    ],
)
def test_holm_hand_worked(raw: list[float], adjusted: list[float]) -> None:
    assert holm(raw) == pytest.approx(adjusted, abs=1e-12)


def test_holm_rejects_bad_p() -> None:
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        holm([0.1, float("nan")])


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(0, 1), max_size=12))
def test_holm_laws(p: list[float]) -> None:
    adj = holm(p)
    assert len(adj) == len(p)
    for raw, a in zip(p, adj, strict=True):
        assert raw <= a <= 1.0
        assert a <= min(1.0, raw * len(p)) + 1e-15
    for i in range(len(p)):
        for j in range(len(p)):
            if p[i] <= p[j]:
                assert adj[i] <= adj[j]


# --- bootstrap --------------------------------------------------------------------------


def test_bootstrap_is_seeded_and_brackets_the_mean() -> None:
    x = np.random.default_rng(1).random(60)
    ci = bootstrap_ci(x, seed=5)
    assert ci is not None and ci.n == 60
    assert ci.low < ci.mean < ci.high
    assert ci.mean == pytest.approx(x.mean())
    assert bootstrap_ci(x, seed=5) == ci
    assert bootstrap_ci(x, seed=6) != ci
    wide = bootstrap_ci(x, confidence=0.99, seed=5)
    assert wide is not None and wide.low < ci.low and wide.high > ci.high


def test_bootstrap_close_to_scipy_percentile_interval() -> None:
    x = np.random.default_rng(2).random(50)
    ci = bootstrap_ci(x, n_resamples=5000)
    ref = sps.bootstrap((x,), np.mean, method="percentile", n_resamples=5000, random_state=0)
    half = (ref.confidence_interval.high - ref.confidence_interval.low) / 2
    assert ci is not None
    assert ci.low == pytest.approx(ref.confidence_interval.low, abs=0.1 * half)
    assert ci.high == pytest.approx(ref.confidence_interval.high, abs=0.1 * half)


def test_bootstrap_coverage_is_about_nominal() -> None:
    rng = np.random.default_rng(3)
    hits = 0
    trials = 200
    for t in range(trials):
        ci = bootstrap_ci(rng.normal(0.5, 0.2, 40), n_resamples=1000, seed=t)
        assert ci is not None
        hits += ci.low <= 0.5 <= ci.high
    assert 0.88 <= hits / trials <= 0.99


def test_bootstrap_small_and_missing() -> None:
    assert bootstrap_ci([np.nan, np.nan]) is None
    one = bootstrap_ci([np.nan, 0.4])
    assert one is not None and (one.low, one.high, one.mean, one.n) == (0.4, 0.4, 0.4, 1)
    assert one.note
    const = bootstrap_ci([0.7] * 5)
    assert const is not None and const.low == const.high == pytest.approx(0.7)
    with pytest.raises(ConfigError, match="confidence"):
        bootstrap_ci([1.0, 2.0], confidence=95)
    with pytest.raises(ConfigError, match="n_resamples"):
        bootstrap_ci([1.0, 2.0], n_resamples=0)


# --- relative change and comparisons ----------------------------------------------------


def test_relative_change() -> None:
    assert relative_change(0.75, 0.5) == 0.5
    assert relative_change(0.25, 0.5) == -0.5
    assert relative_change(0.3, 0.0) is None
    assert relative_change(float("nan"), 0.5) is None


def _per_query(seed: int = 0, n: int = 50) -> dict[str, dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    base = {"mrr": rng.uniform(0.2, 0.6, n), "recall@5": rng.uniform(0.2, 0.6, n)}
    better = {m: v + 0.2 + rng.normal(0, 0.05, n) for m, v in base.items()}
    same = {m: v.copy() for m, v in base.items()}
    return {"dense": base, "same": same, "hybrid": better}


@pytest.mark.parametrize("test", ["permutation", "t"])
def test_compare_identical_and_clearly_better(test: str) -> None:
    rows = compare_to_baseline(_per_query(), "dense", ["mrr", "recall@5"], test=test)
    assert [(r.config, r.metric) for r in rows] == [
        ("same", "mrr"),
        ("same", "recall@5"),
        ("hybrid", "mrr"),
        ("hybrid", "recall@5"),
    ]
    for r in rows[:2]:
        assert (r.p_value, r.p_adjusted, r.significant, r.relative_change) == (1.0, 1.0, False, 0)
    for r in rows[2:]:
        assert r.significant and r.p_adjusted is not None and r.p_adjusted < 0.05
        assert r.n == 50 and r.method == test
        assert r.value_mean is not None and r.baseline_mean is not None
        assert r.value_mean - r.baseline_mean == pytest.approx(0.2, abs=0.03)
        assert r.relative_change == pytest.approx(r.value_mean / r.baseline_mean - 1)
    # one Holm family per metric (the default), or one of all four rows
    for metric in ("mrr", "recall@5"):
        family = [r for r in rows if r.metric == metric]
        assert [r.p_adjusted for r in family] == pytest.approx(
            holm([r.p_value for r in family if r.p_value is not None]))
        assert {(r.family, r.family_size) for r in family} == {(metric, 2)}
    everything = compare_to_baseline(_per_query(), "dense", ["mrr", "recall@5"], test=test,
                                     correction="all")
    assert [r.p_adjusted for r in everything] == pytest.approx(
        holm([r.p_value for r in everything if r.p_value is not None])
    )


def test_compare_is_seeded_and_uses_paired_queries_only() -> None:
    data = _per_query(n=30)
    data["hybrid"]["mrr"][:5] = np.nan
    rows = compare_to_baseline(data, "dense", ["mrr"], seed=4)
    assert rows == compare_to_baseline(data, "dense", ["mrr"], seed=4)
    hybrid = rows[1]
    assert hybrid.n == 25
    assert hybrid.baseline_mean == pytest.approx(data["dense"]["mrr"][5:].mean())
    with pytest.raises(dataclasses.FrozenInstanceError):
        hybrid.n = 3  # type: ignore[misc]


def test_compare_row_without_pairs_is_left_out_of_holm() -> None:
    data = {"a": {"m": np.array([0.1, 0.2])}, "b": {"m": np.array([np.nan, np.nan])}}
    (row,) = compare_to_baseline(data, "a", ["m"])
    assert row == ComparisonRow("b", "m", None, None, None, None, None, False, 0, "permutation",
                                "m", 0)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"baseline": "bm25"}, "baseline 'bm25' is not a config"),
        ({"test": "wilcoxon"}, "unknown test"),
        ({"metrics": ["ndcg@10"]}, "no per-query values for metric 'ndcg@10'"),
        ({"alpha": 5}, "alpha"),
    ],
)
def test_compare_bad_arguments(kwargs: dict, match: str) -> None:
    args = {"baseline": "dense", "metrics": ["mrr"], **kwargs}
    with pytest.raises(ConfigError, match=match):
        compare_to_baseline(_per_query(), **args)


def test_compare_misaligned_values() -> None:
    data = {"a": {"m": np.zeros(3)}, "b": {"m": np.zeros(4)}}
    with pytest.raises(ConfigError, match="aligned by query"):
        compare_to_baseline(data, "a", ["m"])


def test_correction_families_per_metric_all_and_none():
    rng = np.random.default_rng(3)
    base = rng.random(30)
    per_query = {
        "base": {"m1": base, "m2": base, "m3": base},
        "a": {"m1": base + 0.05, "m2": base + 0.01 * rng.standard_normal(30),
              "m3": base - 0.002},
        "b": {"m1": base + 0.02 * rng.standard_normal(30), "m2": base, "m3": base + 0.03},
    }
    rows = {c: {(r.config, r.metric): r for r in compare_to_baseline(
        per_query, "base", ["m1", "m2", "m3"], "t", 0.05, correction=c)}
        for c in ("per-metric", "all", "none")}
    for key, r in rows["none"].items():
        assert r.p_adjusted == r.p_value and r.family == "none" and r.family_size == 6
        # per metric: Holm over the two configs on that metric only
        pm = rows["per-metric"][key]
        assert pm.family == key[1] and pm.family_size == 2
        same = [rows["none"][(c, key[1])].p_value for c in ("a", "b")]
        assert pm.p_adjusted == pytest.approx(holm(same)[("a", "b").index(key[0])])
        assert rows["all"][key].family_size == 6
        assert pm.p_adjusted <= rows["all"][key].p_adjusted
    with pytest.raises(ConfigError, match="unknown correction 'some'"):
        compare_to_baseline(per_query, "base", ["m1"], correction="some")


def test_comparisons_no_change_could_make_significant_are_named():
    """Two configs against a baseline over 4 questions, one metric: a family of 2; the
    sign-flip test over 4 never gives p below 2 / 2^4 = 0.125, so Holm's smallest is at
    least 0.25: neither can be significant, however large the change, and a family of 2
    needs 7 questions (2 / 2^7 x 2 = 0.031). Over 8 questions (0.0078 x 2) both could;
    the t-test has no such floor."""
    from ragmark.stats.baseline import out_of_reach

    def rows(n: int) -> list:
        per = {"base": {"m": [0.0] * n}, "a": {"m": [1.0] * n}, "b": {"m": [1.0] * n}}
        return compare_to_baseline(per, "base", ["m"])

    four = rows(4)
    assert [r.p_adjusted for r in four] == [pytest.approx(0.25)] * 2
    assert out_of_reach(four, "permutation", 0.05, 10_000) == (
        "2 of 2 comparisons could not be significant however large the change: over 4 "
        "questions the test's p is never below 0.125, and Holm multiplies the smallest of "
        "a family by its size (2); a family of 2 needs at least 7 questions.")
    assert out_of_reach(rows(8), "permutation", 0.05, 10_000) is None
    assert out_of_reach(four, "t", 0.05, 10_000) is None
