"""Drift between two windows of production records: different questions, so an unpaired
test. Welch's t-test (unequal variances; ``scipy.stats.ttest_ind(equal_var=False)``)
compares each metric's mean in the newest window with the reference's; Holm's
correction holds the family-wise error over the gated metrics; a change counts as drift
only when it goes the worse way (down for a quality metric, up for latency, cost, refusals)
by more than the ``margin``, and its adjusted p is under ``alpha``. Each row also says
the minimum detectable change at 80 % power for the two windows' sizes, so "no drift"
over small windows is read for what it is.

The test needs of each side only its count, mean and sum of squared deviations
(:class:`Moments`), which pool exactly over windows (Chan et al.'s update): a reference
of windows whose per-question values were pruned is tested on the moments each window
recorded, with the same result as on its values.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as _scipy_stats

from ragmark.stats import holm

POWER = 0.8


@dataclass(frozen=True, slots=True)
class Drift:
    """One metric's newest window against its reference."""

    metric: str
    reference: float | None
    newest: float | None
    n_reference: int
    n_newest: int
    change: float | None
    """newest - reference."""
    p: float
    p_adjusted: float
    mde: float | None
    """The smallest change this test would detect with 80 % power at ``alpha``."""
    worse: bool
    """The change goes the bad way for this metric."""
    drifted: bool
    note: str = ""

    def line(self, margin: float, alpha: float) -> str:
        """The sentence that says it (a gate failure reads ``metric drifted: ...``)."""
        if self.newest is None or self.reference is None:
            return f"{self.metric}: {self.note}"
        mde = f"; the test detects changes of {self.mde:.4g} or more" if self.mde else ""
        verdict = ("drifted" if self.drifted else "held")
        if f"{self.reference:.4g}" == f"{self.newest:.4g}":  # "fell from 1 to 1" says nothing
            moved = (f"unchanged at {self.newest:.4g} (n={self.n_reference} before, "
                     f"n={self.n_newest} now)")
        else:
            way = "rose" if (self.change or 0.0) > 0 else "fell"
            moved = (f"{way} from {self.reference:.4g} (n={self.n_reference}) to "
                     f"{self.newest:.4g} (n={self.n_newest})")
        return (f"{self.metric} {verdict}: {moved}, change {self.change:+.4g}, "
                f"Welch p={self.p:.3g}, Holm-adjusted {self.p_adjusted:.3g} (alpha {alpha}, "
                f"margin {margin}){mde}")


def _clean(values: Sequence[float | None]) -> np.ndarray:
    a = np.asarray([v for v in values if v is not None], dtype=np.float64)
    return a[~np.isnan(a)]


@dataclass(frozen=True, slots=True)
class Moments:
    """A sample's count, mean and sum of squared deviations from it (``m2``)."""

    n: int
    mean: float
    m2: float

    @classmethod
    def of(cls, values: Sequence[float | None]) -> Moments:
        """The moments of the values that are numbers (None and NaN left out)."""
        a = _clean(values)
        if a.size == 0:
            return cls(0, 0.0, 0.0)
        mean = float(a.mean())
        return cls(int(a.size), mean, float(((a - mean) ** 2).sum()))

    @classmethod
    def pooled(cls, parts: Sequence[Moments]) -> Moments:
        """The moments of the parts' samples taken together (exact)."""
        n, mean, m2 = 0, 0.0, 0.0
        for p in parts:
            if p.n == 0:
                continue
            total = n + p.n
            delta = p.mean - mean
            mean += delta * p.n / total
            m2 += p.m2 + delta * delta * n * p.n / total
            n = total
        return cls(n, mean, m2)

    @property
    def var(self) -> float:
        """The sample variance (n - 1)."""
        return self.m2 / (self.n - 1) if self.n > 1 else 0.0

    def to_json(self) -> list[float]:
        return [self.n, self.mean, self.m2]

    @classmethod
    def from_json(cls, v: Sequence[float]) -> Moments:
        return cls(int(v[0]), float(v[1]), float(v[2]))


def welch(reference: Moments, newest: Moments) -> float:
    """Two-sided p of Welch's t-test; 1 when either side has under 2 values or neither
    varies and their means are equal (0 when neither varies and they differ)."""
    if reference.n < 2 or newest.n < 2:
        return 1.0
    if reference.m2 == 0 and newest.m2 == 0:
        return 1.0 if reference.mean == newest.mean else 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        p = float(_scipy_stats.ttest_ind_from_stats(
            newest.mean, math.sqrt(newest.var), newest.n, reference.mean,
            math.sqrt(reference.var), reference.n, equal_var=False).pvalue)
    return 1.0 if math.isnan(p) else p


def detectable(reference: Moments, newest: Moments, alpha: float) -> float | None:
    """(z(1 - alpha/2) + z(power)) * sqrt(s_r^2/n_r + s_n^2/n_n); None under 2 values."""
    if reference.n < 2 or newest.n < 2:
        return None
    se = math.sqrt(reference.var / reference.n + newest.var / newest.n)
    z = _scipy_stats.norm.ppf(1 - alpha / 2) + _scipy_stats.norm.ppf(POWER)
    return float(z * se)


def drift(reference: Mapping[str, Sequence[float | None] | Moments],
          newest: Mapping[str, Sequence[float | None]], metrics: Sequence[str], *,
          lower_is_better: frozenset[str] = frozenset(), alpha: float = 0.05,
          margin: float = 0.0) -> list[Drift]:
    """Each gated metric's verdict, Holm-corrected over ``metrics``; a rise is the bad
    direction for ``lower_is_better`` (the catalogue says which), a fall for the others.
    The reference of a metric is its values or their :class:`Moments`. A metric without
    values on either side has no test (p = 1), with the reason in ``note``."""
    rows = []
    for m in metrics:
        given = reference.get(m, ())
        r = given if isinstance(given, Moments) else Moments.of(given)
        n = Moments.of(newest.get(m, ()))
        if r.n == 0 or n.n == 0:
            side = "the reference windows" if r.n == 0 else "the newest window"
            rows.append((m, r, n, 1.0, f"no value in {side}: not tested"))
            continue
        rows.append((m, r, n, welch(r, n), ""))
    adjusted = holm([p for *_, p, _ in rows]) if rows else []
    out = []
    for (m, r, n, p, note), pa in zip(rows, adjusted, strict=True):
        if note:
            out.append(Drift(m, None if r.n == 0 else r.mean, None if n.n == 0 else n.mean,
                             r.n, n.n, None, p, pa, None, False, False, note))
            continue
        change = n.mean - r.mean
        worse = change > 0 if m in lower_is_better else change < 0
        drifted = worse and pa < alpha and abs(change) > margin
        out.append(Drift(m, r.mean, n.mean, r.n, n.n, change, p, pa,
                         detectable(r, n, alpha), worse, drifted))
    return out
