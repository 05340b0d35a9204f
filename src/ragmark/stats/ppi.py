"""Corrected estimates of a judge metric: prediction-powered inference (PPI++).

A judge scores every question; people label a random subset. The judge's mean is biased
by whatever the judge gets wrong, the people's mean alone is noisy (few labels).
Prediction-powered inference (Angelopoulos et al., 2023) combines them: the judge's mean
over the unlabelled questions, corrected by the judge's average error on the labelled
ones. PPI++ (Angelopoulos, Duchi and Zrnic, 2023) weighs the judge by a tuned
``lam`` in [0, 1] so the estimate is never worse than the labels alone:

    estimate = lam * mean(f over the N unlabelled) + mean(y - lam * f over the n labelled)
    variance = lam^2 * var(f unlabelled) / N + var(y - lam * f labelled) / n
    lam = cov(y, f) / ((1 + n / N) * var(f)), clipped to [0, 1]

with ``f`` the judge's value and ``y`` the person's label (yes = 1, no = 0, or a score in
[0, 1]); the interval is estimate +- z * sqrt(variance), and the estimate and the
interval are clipped to [0, 1], the range of every judge metric (``clipped`` says when).
It is valid when the labelled questions are a random sample of the questions (``ragmark
review export`` samples them so); below :data:`FEW_LABELS` labels the normal
approximation behind it is rough, and ``note`` says so.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

Z95 = 1.959963984540054
FEW_LABELS = 30
"""Below this many human labels the interval's normal approximation is a rough guide."""


@dataclass(frozen=True, slots=True)
class Corrected:
    """A PPI++ estimate of a judge metric's true mean, with its 95% interval."""

    estimate: float
    low: float
    high: float
    lam: float
    n_labelled: int
    n_unlabelled: int
    judge_mean: float
    human_mean: float
    clipped: bool = False

    @property
    def note(self) -> str | None:
        """Why the interval should be read with care, if it should."""
        parts = []
        if self.n_labelled < FEW_LABELS:
            parts.append(f"only {self.n_labelled} human labels: below {FEW_LABELS} the "
                         "interval is a rough guide (label more questions to trust it)")
        if self.clipped:
            parts.append("clipped to [0, 1], the metric's range")
        return "; ".join(parts) or None

    def to_json(self) -> dict[str, Any]:
        out = {"estimate": self.estimate, "ci_low": self.low, "ci_high": self.high,
               "lambda": self.lam, "n_labelled": self.n_labelled,
               "n_unlabelled": self.n_unlabelled, "judge_mean": self.judge_mean,
               "human_mean": self.human_mean, "method": "PPI++"}
        if self.note:
            out["note"] = self.note
        return out


def _in_range(c: Corrected) -> Corrected:
    """``c`` with its estimate and interval clipped to [0, 1]."""
    lo, est, hi = (min(1.0, max(0.0, v)) for v in (c.low, c.estimate, c.high))
    if (lo, est, hi) == (c.low, c.estimate, c.high):
        return c
    return Corrected(est, lo, hi, c.lam, c.n_labelled, c.n_unlabelled, c.judge_mean,
                     c.human_mean, clipped=True)


def ppi_mean(f_unlabelled: Sequence[float], f_labelled: Sequence[float],
             y_labelled: Sequence[float], *, tune: bool = True, z: float = Z95) -> Corrected:
    """The PPI++ estimate of E[y] (see the module docstring). ``tune=False`` is classical
    PPI (``lam = 1``). Needs at least two labelled items; with no unlabelled item it is
    the labels' own mean and interval.

    >>> c = ppi_mean([0.9, 0.8, 1.0, 0.7], [0.9, 0.6], [1.0, 0.0], tune=False)
    >>> round(c.estimate, 3), c.n_labelled, c.n_unlabelled
    (0.6, 2, 4)
    """
    fu = np.asarray(f_unlabelled, dtype=np.float64)
    fl = np.asarray(f_labelled, dtype=np.float64)
    y = np.asarray(y_labelled, dtype=np.float64)
    n, big_n = len(y), len(fu)
    if n < 2 or len(fl) != n:
        raise ValueError(f"PPI needs at least two labelled items with judge values, got {n}")
    judge_mean = float(np.mean(np.concatenate([fu, fl])))
    if big_n == 0:
        se = float(np.std(y, ddof=1)) / math.sqrt(n)
        m = float(np.mean(y))
        return _in_range(Corrected(m, m - z * se, m + z * se, 0.0, n, 0, judge_mean, m))
    lam = 1.0
    if tune:
        f_all = np.concatenate([fu, fl])
        var_f = float(np.var(f_all, ddof=1))
        cov = float(np.cov(y, fl, ddof=1)[0, 1]) if n > 1 else 0.0
        lam = 0.0 if var_f <= 0 else min(1.0, max(0.0, cov / ((1 + n / big_n) * var_f)))
    resid = y - lam * fl
    est = lam * float(np.mean(fu)) + float(np.mean(resid))
    var_u = float(np.var(fu, ddof=1)) if big_n > 1 else 0.0
    var = lam * lam * var_u / big_n + float(np.var(resid, ddof=1)) / n
    se = math.sqrt(max(var, 0.0))
    return _in_range(Corrected(est, est - z * se, est + z * se, lam, n, big_n, judge_mean,
                               float(np.mean(y))))
