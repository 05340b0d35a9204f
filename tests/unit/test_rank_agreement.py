"""Kendall's tau between two rankings of systems (issue 38: run-level agreement, as TREC
RAG reports its automatic evaluation against people's): hand-worked values, scipy as
the oracle of tau-b with ties, Fieller's interval."""

from __future__ import annotations

import math

import pytest
from scipy import stats

from ragmark.stats.ranking import FIELLER, kendall_tau


def test_one_swapped_pair_of_six_hand_worked():
    got = kendall_tau({"A": 0.9, "B": 0.8, "C": 0.7, "D": 0.6},
                      {"A": 0.7, "B": 0.9, "C": 0.6, "D": 0.5})
    assert got.tau == pytest.approx(2 / 3) and got.n == 4
    assert got.low is None and got.reason == "an interval needs 5 systems or more"


def test_ties_are_counted_as_scipy_counts_them():
    a = {"r1": 0.5, "r2": 0.5, "r3": 0.2, "r4": 0.9, "r5": 0.1, "r6": 0.4}
    b = {"r1": 0.3, "r2": 0.6, "r3": 0.3, "r4": 0.8, "r5": 0.2, "r6": 0.2}
    got = kendall_tau(a, b)
    want = stats.kendalltau(list(a.values()), [b[k] for k in a])
    assert got.tau == pytest.approx(want.statistic) and got.p_value == pytest.approx(
        want.pvalue)
    # Fieller, Hartley and Pearson (1957): atanh(tau) +- 1.96 sqrt(0.437 / (n - 4))
    half = stats.norm.ppf(0.975) * math.sqrt(FIELLER / 2)
    assert got.low == pytest.approx(math.tanh(math.atanh(want.statistic) - half))
    assert got.high == pytest.approx(math.tanh(math.atanh(want.statistic) + half))
    assert got.low < got.tau < got.high


def test_systems_only_one_side_scores_are_named_not_ranked():
    got = kendall_tau({"a": 1, "b": 2, "c": 3, "x": 9}, {"c": 1, "b": 2, "a": 3, "y": 0})
    assert got.tau == pytest.approx(-1.0) and got.n == 3
    assert got.only_in_first == ("x",) and got.only_in_second == ("y",)
    assert kendall_tau({"a": 1}, {"a": 2}).reason == "fewer than 2 systems scored by both"
    flat = kendall_tau({"a": 1, "b": 1}, {"a": 1, "b": 2})
    assert flat.tau is None and flat.reason == ("one ranking gives every system the same "
                                                "score")
