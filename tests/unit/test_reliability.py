"""Krippendorff's alpha (issue 35): Krippendorff's own example (2011, the reliability
data of his section C: nominal 0.691, interval 0.811), a hand-worked value, and equal to
the `krippendorff` package on random data with missing labels at every level."""

from __future__ import annotations

import numpy as np
import pytest

from ragmark.stats.reliability import krippendorff_alpha

NAN = None
# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: three
# observers, 12 pairable units of 15 (one row per observer here, transposed below)
OBSERVERS = [[NAN, NAN, NAN, NAN, NAN, 3, 4, 1, 2, 1, 1, 3, 3, NAN, 3],
             [1, NAN, 2, 1, 3, 3, 4, 3, NAN, NAN, NAN, NAN, NAN, NAN, NAN],
             [NAN, NAN, 2, 1, 3, 4, 4, NAN, 2, 1, 1, 3, 3, NAN, 4]]
UNITS = [list(col) for col in zip(*OBSERVERS, strict=True)]


def test_krippendorffs_own_example():
    nominal = krippendorff_alpha(UNITS, "nominal", n_resamples=500)
    assert nominal["value"] == pytest.approx(0.691, abs=5e-4)  # his 0.691
    assert (nominal["units"], nominal["values"]) == (12, 26)
    assert krippendorff_alpha(UNITS, "interval")["value"] == pytest.approx(0.811, abs=5e-4)
    assert nominal["ci_low"] < nominal["value"] <= nominal["ci_high"] <= 1


def test_a_hand_worked_value():
    # two coders, units (1, 1), (1, 2), (2, 2): o = [[2, 1], [1, 2]], n_1 = n_2 = 3,
    # n = 6; alpha = 1 - (n - 1) * (o_12 + o_21) / (2 n_1 n_2) = 1 - 5 * 2 / 18 = 4/9
    got = krippendorff_alpha([[1, 1], [1, 2], [2, 2]])
    assert got["value"] == pytest.approx(4 / 9, abs=1e-12)
    # interval: d2(1, 2) = 1, so the same 4/9; a unit with one value does not count
    assert krippendorff_alpha([[1, 1], [1, 2], [2, 2], [1, None]], "interval")[
        "value"] == pytest.approx(4 / 9, abs=1e-12)


def test_undefined_alpha_says_why():
    assert krippendorff_alpha([[1, None], [None, 2]])["reason"] == (
        "no item has labels from two coders or more")
    same = krippendorff_alpha([[1, 1], [1, 1]])
    assert same["value"] is None and "every label is the same value" in same["reason"]
    one = krippendorff_alpha([[1, 2]])
    assert one["value"] == 0.0 and one["ci_low"] is None and "no interval" in one["note"]
    with pytest.raises(ValueError, match="level must be one of nominal"):
        krippendorff_alpha(UNITS, "cardinal")


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_equal_to_the_krippendorff_package(level):
    krippendorff = pytest.importorskip("krippendorff", reason="needs krippendorff "
                                       "(ragmark-eval[dev])")
    rng = np.random.default_rng(7)
    compared = 0
    for _ in range(150):
        coders, units = int(rng.integers(2, 6)), int(rng.integers(2, 30))
        x = rng.integers(0, int(rng.integers(2, 6)), size=(coders, units)).astype(float)
        x[rng.random((coders, units)) < 0.3] = np.nan
        ours = krippendorff_alpha([[None if np.isnan(v) else float(v) for v in col]
                                   for col in x.T], level, n_resamples=50)
        if ours["value"] is None:
            continue
        assert ours["value"] == pytest.approx(
            krippendorff.alpha(reliability_data=x, level_of_measurement=level), abs=1e-9)
        compared += 1
    assert compared > 100
