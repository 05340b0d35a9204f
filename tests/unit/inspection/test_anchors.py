"""Anchor points (Vivek et al., EACL 2024): the questions chosen to stand for the set,
weighted by the share of questions like them, estimate each config's whole-set mean.

Hand-worked: six questions of three kinds over three configs — A (1, 1, 0) three times,
B (1, 0, 0) twice, C (0, 0, 0) once. Three anchors are one question of each kind,
weighted 3/6, 2/6 and 1/6: config 1's estimate 1/2 + 1/3 = 5/6, its mean over the six
(5/6); config 2's 1/2 (3/6); config 3's 0. A random subset of three, equally weighted,
gets them right only by luck."""

from __future__ import annotations

import numpy as np
import pytest

from ragmark.analysis.anchors import anchors, left_out, random_subset

KINDS = {"A": [1, 1, 0], "B": [1, 0, 0], "C": [0, 0, 0]}
COLUMNS = ["A", "B", "A", "C", "B", "A"]
MATRIX = np.array([KINDS[k] for k in COLUMNS], dtype=np.float64).T  # configs x questions


def test_three_anchors_weighted_by_their_kind_recover_every_mean():
    pick = anchors(MATRIX, 3, seed=0)
    kinds = sorted((COLUMNS[i], round(w, 4)) for i, w in zip(pick.indices, pick.weights,
                                                              strict=True))
    assert kinds == [("A", 0.5), ("B", 0.3333), ("C", 0.1667)]
    assert [pick.estimate(row) for row in MATRIX] == pytest.approx([5 / 6, 1 / 2, 0.0])
    assert MATRIX.mean(axis=1).tolist() == pytest.approx([5 / 6, 1 / 2, 0.0])


def test_a_random_subset_is_seeded_and_equally_weighted():
    a, b = random_subset(6, 3, seed=4), random_subset(6, 3, seed=4)
    assert a == b and len(set(a.indices)) == 3 and a.weights == (1 / 3,) * 3


def test_leaving_configs_out_on_a_set_of_many_questions():
    """40 questions over 8 configs whose strength rises from 0.2 to 0.9: question j is
    passed by config c when c's strength exceeds j's difficulty (a 2-level ladder of
    difficulties 0.1 ... 0.95); 8 anchors chosen without the config they estimate rank
    the 8 configs as their means do (4 do not: 5 levels cannot order 8 configs), with a
    smaller error than 8 random questions (averaged over 10 seeds). The error is large
    here (about 0.1): without a config, the questions it alone tells apart look alike."""
    strength = np.linspace(0.2, 0.9, 8)
    difficulty = np.repeat(np.linspace(0.1, 0.95, 20), 2)
    m = (strength[:, None] > difficulty[None, :]).astype(np.float64)
    names = [f"c{i}" for i in range(8)]
    got = left_out(m, names, 8, "anchors")
    base = np.mean([left_out(m, names, 8, "random", seed=s)["mean_abs_error"]
                    for s in range(10)])
    truth = m.mean(axis=1)
    assert got["mean_abs_error"] == pytest.approx(
        np.mean([abs(got["estimates"][n] - truth[i]) for i, n in enumerate(names)]))
    assert got["kendall_tau"] == pytest.approx(1.0)
    assert got["mean_abs_error"] < base
