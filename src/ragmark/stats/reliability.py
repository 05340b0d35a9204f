"""Krippendorff's alpha: how far several people (or people and a judge) agree on the
same items, beyond chance, with any number of coders, missing labels, and a metric for
the labels' level (nominal, ordinal, interval, ratio).

As Krippendorff defines it ("Computing Krippendorff's Alpha-Reliability", 2011): only
units with at least two values count; each unit's ``m_u`` values give the coincidence
matrix ``o_ck = sum_u (pairs c-k in u) / (m_u - 1)``, with marginals ``n_c`` and total
``n``; then ``alpha = 1 - (n - 1) * sum o_ck d2_ck / sum n_c n_k d2_ck``, where ``d2`` is
the level's squared difference: nominal 0 for equal values, else 1; interval
``(c - k)^2``; ratio ``((c - k) / (c + k))^2``; ordinal ``(sum_{g=c..k} n_g - (n_c +
n_k) / 2)^2``. Equal to the ``krippendorff`` package (tests/unit/test_reliability.py).
The interval resamples the units (items) with replacement, as every interval of
ragmark does (:mod:`ragmark.stats.resample`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ragmark.stats.resample import percentile_interval, resample_rows

LEVELS = ("nominal", "ordinal", "interval", "ratio")


def _matrix(data: Sequence[Sequence[float | None]]) -> tuple[NDArray[np.float64],
                                                              NDArray[np.float64]]:
    """The units x values count matrix of the units with two values or more, and the
    distinct values, sorted."""
    rows = np.array([[np.nan if v is None else float(v) for v in unit] for unit in data],
                    dtype=np.float64).reshape(len(data), -1)
    values = np.unique(rows[~np.isnan(rows)])
    counts = np.stack([(rows == v).sum(axis=1) for v in values], axis=1).astype(np.float64) \
        if values.size else np.zeros((len(data), 0))
    return counts[counts.sum(axis=1) >= 2], values


def _delta(level: str, values: NDArray[np.float64], n_c: NDArray[np.float64]
           ) -> NDArray[np.float64]:
    """The squared differences of the values at ``level`` (``n_c``: the marginals, for
    ordinal; one row per resample when 2-D)."""
    c, k = values[:, None], values[None, :]
    if level == "nominal":
        return (c != k).astype(np.float64)
    if level == "interval":
        return (c - k) ** 2
    if level == "ratio":
        total = c + k
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(total == 0, 0.0, ((c - k) / np.where(total == 0, 1, total)) ** 2)
    cum = np.cumsum(n_c, axis=-1)
    i = np.arange(values.size)
    lo, hi = np.minimum(i[:, None], i[None, :]), np.maximum(i[:, None], i[None, :])
    between = cum[..., hi] - cum[..., lo] + n_c[..., lo]  # sum of n_g, g from lo to hi
    return (between - (n_c[..., :, None] + n_c[..., None, :]) / 2) ** 2


def _alphas(counts: NDArray[np.float64], values: NDArray[np.float64], level: str
            ) -> NDArray[np.float64]:
    """Alpha of each resample: ``counts`` is resamples x units x values (NaN where the
    expected disagreement is 0)."""
    m = counts.sum(axis=-1, keepdims=True)
    weighted = counts / (m - 1)
    o = np.einsum("buv,buw->bvw", weighted, counts)
    o -= np.einsum("buv,vw->bvw", weighted, np.eye(values.size))
    n_c = o.sum(axis=-1)
    n = n_c.sum(axis=-1)
    d2 = _delta(level, values, n_c)
    observed = (o * d2).sum(axis=(-2, -1))
    expected = (n_c[:, :, None] * n_c[:, None, :] * d2).sum(axis=(-2, -1))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(expected > 0, 1 - (n - 1) * observed / np.where(
            expected > 0, expected, 1), np.nan)


def krippendorff_alpha(data: Sequence[Sequence[float | None]], level: str = "nominal", *,
                       n_resamples: int = 2000, seed: int = 0, confidence: float = 0.95
                       ) -> dict[str, Any]:
    """Alpha of ``data`` (one row per unit, one column per coder, None where a coder gave
    no value) at ``level``, with a bootstrap interval over the units: ``value``,
    ``ci_low``, ``ci_high``, ``units`` (those with two values or more), ``values`` (the
    pairable values), ``level``; ``value`` None with a ``reason`` when alpha is not
    defined (no such unit, or a single value throughout); no interval from one unit."""
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}, got {level!r}")
    counts, values = _matrix(data)
    out: dict[str, Any] = {"level": level, "units": int(counts.shape[0]),
                           "values": int(counts.sum()), "value": None, "ci_low": None,
                           "ci_high": None}
    if counts.shape[0] == 0:
        return {**out, "reason": "no item has labels from two coders or more"}
    value = float(_alphas(counts[None], values, level)[0])
    if np.isnan(value):
        return {**out, "reason": "every label is the same value: no disagreement is "
                "expected by chance, so alpha is not defined"}
    if counts.shape[0] < 2:
        return {**out, "value": value, "note": "one item labelled by two coders or more: "
                "no interval"}
    draws = [_alphas(counts[rows], values, level)
             for rows in resample_rows(counts.shape[0], n_resamples, seed, 200)]
    ci = percentile_interval(np.concatenate(draws), confidence)
    low, high = ci if ci is not None else (None, None)
    return {**out, "value": value, "ci_low": low, "ci_high": high,
            "n_resamples": n_resamples, "confidence": confidence}
