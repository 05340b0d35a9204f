"""The statistics of pairwise verdicts (issue 36, step 1): the win rate (ties half) with
its interval, the exact sign test, and Bradley–Terry strengths, against hand-worked
values and `choix` (its maximum-likelihood MM algorithm)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ragmark.stats.agreement import mcnemar
from ragmark.stats.win_rates import bradley_terry, sign_test, strengths, win_matrix, win_rate


def test_sign_test_hand_worked():
    # 9 wins, 1 loss: P(X <= 1) for Binomial(10, 1/2) = 11/1024, two-sided 22/1024
    assert sign_test(9, 1) == pytest.approx(22 / 1024)
    assert sign_test(3, 3) == 1.0 and sign_test(0, 0) == 1.0
    assert sign_test(5, 0) == pytest.approx(2 / 32)
    # McNemar's exact test is the sign test on the discordant items
    assert mcnemar([True, True, True, False], [False, False, True, False])["p_value"] == 0.5


def test_win_rate_counts_a_tie_as_half_and_says_its_interval():
    got = win_rate(["A", "A", "tie", "B"], n_resamples=500)
    assert (got["wins"], got["ties"], got["losses"], got["n"]) == (2, 1, 1, 4)
    assert got["value"] == pytest.approx((2 + 0.5) / 4)
    assert got["ci_low"] <= got["value"] <= got["ci_high"]
    assert got["p_value"] == pytest.approx(sign_test(2, 1))  # the tie left out
    every = win_rate(["A"] * 12, n_resamples=200)
    assert (every["value"], every["ci_low"], every["ci_high"]) == (1.0, 1.0, 1.0)
    assert win_rate([])["reason"] == "no question has a verdict"
    with pytest.raises(ValueError, match="a verdict is A, B or tie, got 'C'"):
        win_rate(["C"])


def test_bradley_terry_hand_worked_and_undefined():
    # A beats B 3 times, B beats A once: p_A / p_B = 3, centred: +-ln(3)/2
    w = win_matrix(2, [(0, 1, "A")] * 3 + [(0, 1, "B")])
    assert bradley_terry(w) == pytest.approx([math.log(3) / 2, -math.log(3) / 2], abs=1e-9)
    # a tie is half a win each: 2 wins + 2 ties vs 0 wins + 2 ties -> 3 : 1 again
    w = win_matrix(2, [(0, 1, "A"), (0, 1, "A"), (0, 1, "tie"), (1, 0, "tie")])
    assert bradley_terry(w) == pytest.approx([math.log(3) / 2, -math.log(3) / 2], abs=1e-9)
    assert bradley_terry(win_matrix(2, [(0, 1, "A")])) is None  # B never won
    assert bradley_terry(win_matrix(4, [(0, 1, "A"), (1, 0, "A"), (2, 3, "A"),
                                        (3, 2, "A")])) is None  # two separate groups


def test_bradley_terry_equals_choix():
    choix = pytest.importorskip("choix", reason="needs choix (ragmark-eval[dev])")
    rng = np.random.default_rng(3)
    compared = 0
    for _ in range(120):
        n, m = int(rng.integers(2, 6)), int(rng.integers(6, 60))
        data = [tuple(int(x) for x in rng.choice(n, 2, replace=False)) for _ in range(m)]
        ours = bradley_terry(win_matrix(n, [(i, j, "A") for i, j in data]))
        if ours is None:
            continue
        with np.errstate(all="ignore"):
            theirs = choix.mm_pairwise(n, data, max_iter=100_000, tol=1e-12)
        assert ours == pytest.approx(theirs, abs=1e-6)
        compared += 1
    assert compared > 60


def test_strengths_have_intervals_over_questions():
    rng = np.random.default_rng(1)
    # system 0 is better than 1, which is better than 2
    qs = [[(0, 1, rng.choice(["A", "A", "B"])), (1, 2, rng.choice(["A", "A", "B"])),
           (0, 2, rng.choice(["A", "A", "A", "B"]))] for _ in range(60)]
    got = strengths(3, qs, n_resamples=400)
    theta = got["value"]
    assert theta[0] > theta[1] > theta[2] and abs(sum(theta)) < 1e-9
    assert all(lo <= t <= hi for lo, t, hi in zip(got["ci_low"], theta, got["ci_high"],
                                                   strict=True))
    assert got["questions"] == 60 and got["resamples_undefined"] == 0
    assert np.array(got["win_matrix"]).sum() == 180
