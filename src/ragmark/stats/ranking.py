"""How well two rankings of the same systems agree: Kendall's tau, as TREC reports the
agreement of an automatic evaluation with people's at the run level (Pradeep et al.,
arXiv 2411.09607; Voorhees 2000 for the practice).

``tau`` is Kendall's tau-b over the systems both score (scipy's ``kendalltau``: ties
counted as Kendall 1945 does), with its two-sided p-value and an interval from Fieller,
Hartley and Pearson's (1957) variance of the Fisher z of tau, ``0.437 / (n - 4)``:
``tanh(atanh(tau) +- z * sqrt(0.437 / (n - 4)))``. That interval needs five systems or
more; below that it is missing with the reason.

Worked example (in the tests): scores (A 0.9, B 0.8, C 0.7, D 0.6) against (A 0.7,
B 0.9, C 0.6, D 0.5): 5 of the 6 pairs in the same order, 1 swapped -> tau = (5 - 1) / 6
= 2/3.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from scipy import stats as _scipy_stats

FIELLER = 0.437
"""Fieller, Hartley and Pearson's (1957) constant: var(atanh(tau)) ~ 0.437 / (n - 4)."""


@dataclass(frozen=True, slots=True)
class RankAgreement:
    """Kendall's tau of two rankings over ``n`` systems both score, with its p-value and
    interval (``low``, ``high``; None with ``reason`` when it cannot be given)."""

    tau: float | None
    p_value: float | None
    low: float | None
    high: float | None
    n: int
    confidence: float = 0.95
    reason: str | None = None
    only_in_first: tuple[str, ...] = ()
    only_in_second: tuple[str, ...] = ()


def kendall_tau(first: Mapping[str, float], second: Mapping[str, float],
                confidence: float = 0.95) -> RankAgreement:
    """Kendall's tau-b between the rankings that ``first`` and ``second`` (system ->
    score, higher ranks first) give the systems both score; the systems only one scores
    are named, not ranked."""
    both = [s for s in first if s in second]
    apart = (tuple(s for s in first if s not in second),
             tuple(s for s in second if s not in first))
    n = len(both)
    if n < 2:
        return RankAgreement(None, None, None, None, n, confidence,
                             "fewer than 2 systems scored by both", *apart)
    x = [float(first[s]) for s in both]
    y = [float(second[s]) for s in both]
    if len(set(x)) == 1 or len(set(y)) == 1:
        return RankAgreement(None, None, None, None, n, confidence,
                             "one ranking gives every system the same score", *apart)
    got = _scipy_stats.kendalltau(x, y)
    tau, p = float(got.statistic), float(got.pvalue)
    if n < 5:
        return RankAgreement(tau, p, None, None, n, confidence,
                             "an interval needs 5 systems or more", *apart)
    z = float(_scipy_stats.norm.ppf((1 + confidence) / 2))
    half = z * math.sqrt(FIELLER / (n - 4))
    centre = math.atanh(max(min(tau, 1 - 1e-12), -1 + 1e-12))
    return RankAgreement(tau, p, math.tanh(centre - half), math.tanh(centre + half), n,
                         confidence, None, *apart)
