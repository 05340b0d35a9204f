"""The few questions that rank systems as the whole set does (issue 65, item 4): anchor
points (Vivek, Ethayarajh and Kiela, "Anchor Points: Benchmarking Models with Much
Fewer Examples", EACL 2024) chosen from the configs the run history already ran.

Each question is a point: its values over the configs. The questions are cut into
``budget`` clusters (k-means, Euclidean, k-means++ seeding with a fixed seed); each
cluster's anchor is its member nearest the centre, weighted by the cluster's share of
the questions. A config's mean over the whole set is estimated as the weighted mean of
its values at the anchors. A random subset of the same size, equally weighted, is the
baseline; a stratified choice (one question a stratum of difficulty, the strata of
equal size) is the one whose plain mean estimates the whole set's, so it can be run as
a set of its own.

How good a selection is, is measured by leaving configs out: for each config, the
anchors are chosen from the *other* configs' values only, and that config's whole-set
mean is estimated from its values at them; the error is |estimate - mean| and the rank
agreement is Kendall's tau between the estimates and the true means over all configs.
Kendall's tau counts every pair of configs, also those the whole set itself cannot tell
apart; so beside it, of the pairs whose whole-set means differ (the paired t-test,
``compare --test t``, Holm-adjusted over all pairs), the share whose estimates are in
the same order: the conclusions the whole set supports that the chosen questions keep.
Not the permutation test ``compare`` uses by default: over many pairs Holm asks for
p-values below what 10,000 sign flips can give (1/10,001: 0.05 / 500 pairs is 1e-4),
so it would separate nothing; on SciFact's eleven configs both tests separate the same
14 pairs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ragmark.stats.paired import holm, paired_t_test
from ragmark.stats.ranking import kendall_tau


@dataclass(frozen=True)
class Selection:
    """The chosen questions (column indices) and each one's weight (summing to 1)."""

    indices: tuple[int, ...]
    weights: tuple[float, ...]

    def estimate(self, row: NDArray[np.float64]) -> float:
        """A config's whole-set mean estimated from its values at the chosen questions."""
        return float(np.dot(row[list(self.indices)], self.weights))


def anchors(matrix: NDArray[np.float64], budget: int, seed: int = 0, rounds: int = 100
            ) -> Selection:
    """``budget`` anchor questions of ``matrix`` (configs x questions, no missing
    value): the medoid of each k-means cluster of the questions' columns, weighted by
    its cluster's size."""
    points = matrix.T
    n = len(points)
    k = max(1, min(budget, n))
    rng = np.random.default_rng(seed)
    centres = [points[int(rng.choice(n))]]
    for _ in range(1, k):  # k-means++
        d2 = np.min(((points[:, None, :] - np.array(centres)[None]) ** 2).sum(-1), axis=1)
        total = float(d2.sum())
        centres.append(points[int(rng.choice(n))] if total == 0
                       else points[int(rng.choice(n, p=d2 / total))])
    c = np.array(centres, dtype=np.float64)
    labels = np.full(n, -1)
    for _ in range(rounds):
        new = np.argmin(((points[:, None, :] - c[None]) ** 2).sum(-1), axis=1)
        if np.array_equal(new, labels):
            break
        labels = new
        for j in range(k):
            if np.any(labels == j):
                c[j] = points[labels == j].mean(axis=0)
    chosen, weights = [], []
    for j in range(k):
        members = np.flatnonzero(labels == j)
        if not len(members):
            continue
        near = members[np.argmin(((points[members] - c[j]) ** 2).sum(-1))]
        chosen.append(int(near))
        weights.append(len(members) / n)
    return Selection(tuple(chosen), tuple(weights))


def stratified(matrix: NDArray[np.float64], budget: int, seed: int = 0) -> Selection:
    """``budget`` questions of ``matrix``, one a stratum: the questions sorted by their
    mean over the configs (their difficulty) and cut into ``budget`` strata of equal
    size (within one), each stratum's question nearest its centre over the configs
    (ties: the first). Weighted by the strata's sizes, which are equal within one, so
    the plain mean over the chosen questions estimates the whole set's (``seed``
    unused: the choice is deterministic)."""
    n = matrix.shape[1]
    k = max(1, min(budget, n))
    order = np.argsort(matrix.mean(axis=0), kind="stable")
    chosen, weights = [], []
    for stratum in np.array_split(order, k):
        cols = matrix[:, stratum]
        centre = cols.mean(axis=1, keepdims=True)
        chosen.append(int(stratum[int(np.argmin(((cols - centre) ** 2).sum(axis=0)))]))
        weights.append(len(stratum) / n)
    return Selection(tuple(chosen), tuple(weights))


def random_subset(n: int, budget: int, seed: int) -> Selection:
    """``budget`` questions of ``n`` drawn without replacement, equally weighted."""
    k = max(1, min(budget, n))
    picked = np.random.default_rng(seed).choice(n, size=k, replace=False)
    return Selection(tuple(int(i) for i in sorted(picked)), tuple([1.0 / k] * k))


METHODS = ("stratified", "anchors", "random")


def choose(matrix: NDArray[np.float64], budget: int, method: str, seed: int = 0
           ) -> Selection:
    """The questions ``method`` chooses from ``matrix`` (configs x questions)."""
    if method == "anchors":
        return anchors(matrix, budget, seed)
    if method == "stratified":
        return stratified(matrix, budget)
    return random_subset(matrix.shape[1], budget, seed)


def separated_pairs(matrix: NDArray[np.float64], alpha: float = 0.05
                    ) -> list[tuple[int, int]]:
    """The pairs of configs (row indices ``i < j``) whose means over all the questions
    differ: the paired t-test (:func:`ragmark.stats.paired_t_test`) of each pair, the
    p-values Holm-adjusted over all pairs, kept below ``alpha``."""
    pairs = [(i, j) for i in range(len(matrix)) for j in range(i + 1, len(matrix))]
    ps = [paired_t_test(matrix[i], matrix[j]).p_value for i, j in pairs]
    return [pair for pair, p in zip(pairs, holm(ps), strict=True) if p < alpha]


def pairs_kept(estimates: Sequence[float], truth: Sequence[float],
               pairs: Sequence[tuple[int, int]]) -> int:
    """How many of ``pairs`` the estimates order as the truth does (a tie in the
    estimates keeps no order)."""
    return sum(1 for i, j in pairs
               if (estimates[i] - estimates[j]) * (truth[i] - truth[j]) > 0)


def left_out(matrix: NDArray[np.float64], configs: Sequence[str], budget: int,
             method: str, seed: int = 0,
             pairs: Sequence[tuple[int, int]] | None = None) -> dict[str, Any]:
    """Each config's whole-set mean estimated with the questions chosen (by ``method``:
    ``anchors``, ``stratified`` or ``random``) from the other configs' values; the mean
    and largest absolute error, Kendall's tau of the estimates against the true means,
    and the share of ``pairs`` (the configs the whole set separates,
    :func:`separated_pairs`; None: not measured) the estimates keep in order (None
    when no pair is separated)."""
    truth = matrix.mean(axis=1)
    est = {}
    for i, name in enumerate(configs):
        others = np.delete(matrix, i, axis=0)
        pick = choose(others, budget, method, seed)
        est[name] = pick.estimate(matrix[i])
    errors = [abs(est[c] - float(truth[i])) for i, c in enumerate(configs)]
    tau = kendall_tau(est, {c: float(truth[i]) for i, c in enumerate(configs)})
    got: dict[str, Any] = {
        "method": method, "budget": budget, "estimates": est,
        "mean_abs_error": float(np.mean(errors)), "max_abs_error": float(max(errors)),
        "kendall_tau": tau.tau}
    if pairs is not None:
        kept = pairs_kept([est[c] for c in configs], truth.tolist(), pairs)
        got["pairs_separated"] = len(pairs)
        got["pairs_kept"] = kept / len(pairs) if pairs else None
    return got
