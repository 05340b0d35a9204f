"""PPI++ by simulation: with a biased judge, the corrected 95% intervals cover the true
mean in about 95% of draws, the judge's plain mean almost never; the tuned weight makes
the interval no wider than the labels' own; a hand-worked case."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ragmark.stats.ppi import Z95, ppi_mean


def draw(rng, n_all: int, n_lab: int):
    """Questions whose true label is 1 with probability 0.6; a judge that says 1 for 90%
    of the true 1s and for 40% of the true 0s (so its mean, 0.70, is biased upwards)."""
    y = (rng.random(n_all) < 0.6).astype(float)
    f = np.where(y == 1, rng.random(n_all) < 0.9, rng.random(n_all) < 0.4).astype(float)
    lab = rng.choice(n_all, size=n_lab, replace=False)
    mask = np.zeros(n_all, bool)
    mask[lab] = True
    return f[~mask], f[mask], y[mask]


@pytest.mark.parametrize("tune", [True, False])
def test_corrected_intervals_cover_the_true_mean(tune):
    rng = np.random.default_rng(7)
    truth, draws = 0.6, 2000
    covered = plain_covered = 0
    for _ in range(draws):
        fu, fl, y = draw(rng, 1000, 100)
        c = ppi_mean(fu, fl, y, tune=tune)
        covered += c.low <= truth <= c.high
        f = np.concatenate([fu, fl])
        se = f.std(ddof=1) / math.sqrt(len(f))
        plain_covered += abs(f.mean() - truth) <= Z95 * se
    # 95% +- about 3 binomial standard errors of 2,000 draws
    assert 0.935 <= covered / draws <= 0.965
    assert plain_covered / draws < 0.05


def test_tuning_is_never_wider_than_the_labels_alone():
    rng = np.random.default_rng(3)
    widths = []
    for _ in range(300):
        fu, fl, y = draw(rng, 2000, 80)
        tuned = ppi_mean(fu, fl, y)
        alone = 2 * Z95 * y.std(ddof=1) / math.sqrt(len(y))
        widths.append((tuned.high - tuned.low) / alone)
        assert 0.0 <= tuned.lam <= 1.0
    assert np.mean(widths) < 0.85  # a useful judge narrows the interval


def test_a_hand_worked_case():
    # unlabelled judge values mean 0.85; labelled residuals y - f = 0.1, -0.6 (mean -0.25)
    c = ppi_mean([0.9, 0.8, 1.0, 0.7], [0.9, 0.6], [1.0, 0.0], tune=False)
    assert c.estimate == pytest.approx(0.6)
    var = np.var([0.9, 0.8, 1.0, 0.7], ddof=1) / 4 + np.var([0.1, -0.6], ddof=1) / 2
    half = Z95 * math.sqrt(var)  # 1.02: the interval is clipped to [0, 1]
    assert (c.low, c.high) == (pytest.approx(max(0.0, 0.6 - half)), min(1.0, 0.6 + half))
    assert c.clipped
    assert (c.n_labelled, c.n_unlabelled, c.lam) == (2, 4, 1.0)
    assert c.judge_mean == pytest.approx(np.mean([0.9, 0.8, 1.0, 0.7, 0.9, 0.6]))
    assert c.human_mean == 0.5


def test_everything_labelled_is_the_labels_mean_and_too_few_labels_is_an_error():
    c = ppi_mean([], [0.2, 0.9, 0.4], [0.0, 1.0, 1.0])
    assert c.estimate == pytest.approx(2 / 3) and c.n_unlabelled == 0
    with pytest.raises(ValueError, match="at least two labelled"):
        ppi_mean([0.5], [0.5], [1.0])


def test_the_interval_stays_in_the_metrics_range_and_says_when_labels_are_few():
    """Issue 25 item 5: five labels gave "0.600 [0.166, 1.034]"."""
    from ragmark.stats.ppi import ppi_mean

    c = ppi_mean([0.9] * 20, [0.9, 0.9, 0.2, 0.9, 0.9], [1, 1, 0, 1, 0])
    assert c.lam == 1.0 and c.estimate == pytest.approx(0.74)  # 0.9 + mean(y - f) = 0.9 - 0.16
    assert c.high == 1.0 and 0.0 < c.low < c.estimate and c.clipped
    assert c.to_json()["note"] == ("only 5 human labels: below 30 the interval is a rough "
                                   "guide (label more questions to trust it); clipped to "
                                   "[0, 1], the metric's range")
    many = ppi_mean([0.5] * 200, [0.5] * 40, [0, 1] * 20)
    assert not many.clipped and "note" not in many.to_json()
