"""How well a judge's binary verdicts agree with people's labels, with intervals.

The class of interest is *unsupported* (a hallucination, an unfaithful answer): that is
what a judge is asked to catch. For people's labels ``truth`` and the judge's verdicts
``pred`` (True = unsupported):

- balanced accuracy = (recall of unsupported + recall of supported) / 2
- precision, recall, F1 of the unsupported class
- Cohen's kappa = (p_o - p_e) / (1 - p_e)
- the confusion table (people x judge)

Each with a percentile bootstrap 95% interval over items (resampled with replacement,
seeded); a statistic undefined on a resample (no predicted unsupported item, say) is
left out of that resample's percentiles, and undefined on the data itself is None with
the reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ragmark.stats.resample import percentile_interval, resample_rows
from ragmark.stats.win_rates import sign_test

STATS = ("balanced_accuracy", "precision", "recall", "f1", "kappa")
_BLOCK = 500


def _counts(truth: NDArray[np.bool_], pred: NDArray[np.bool_]
            ) -> tuple[NDArray[np.float64], ...]:
    """tp, fp, fn, tn over the last axis (unsupported = positive)."""
    tp = (truth & pred).sum(axis=-1).astype(np.float64)
    fp = (~truth & pred).sum(axis=-1).astype(np.float64)
    fn = (truth & ~pred).sum(axis=-1).astype(np.float64)
    tn = (~truth & ~pred).sum(axis=-1).astype(np.float64)
    return tp, fp, fn, tn


def _div(a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(b > 0, a / np.where(b > 0, b, 1), np.nan)


def statistics(truth: NDArray[np.bool_], pred: NDArray[np.bool_]
               ) -> dict[str, NDArray[np.float64]]:
    """Each statistic over the last axis (NaN where undefined); works on one sample
    (1-D) or a block of bootstrap resamples (2-D)."""
    tp, fp, fn, tn = _counts(truth, pred)
    n = tp + fp + fn + tn
    recall = _div(tp, tp + fn)
    specificity = _div(tn, tn + fp)
    precision = _div(tp, tp + fp)
    f1 = _div(2 * tp, 2 * tp + fp + fn)
    p_o = _div(tp + tn, n)
    p_e = _div((tp + fp) * (tp + fn) + (tn + fn) * (tn + fp), n * n)
    kappa = _div(p_o - p_e, 1 - p_e)
    return {"balanced_accuracy": (recall + specificity) / 2, "precision": precision,
            "recall": recall, "f1": f1, "kappa": kappa}


def _undefined(name: str) -> str:
    return {"precision": "the judge called no item unsupported",
            "recall": "no item is unsupported by the labels",
            "f1": "no item is unsupported, by the labels or the judge",
            "kappa": "chance agreement is 1 (one label throughout)",
            "balanced_accuracy": "the labels hold only one class"}[name]


def evaluate(truth: Sequence[bool], pred: Sequence[bool], *, n_resamples: int = 2000,
             seed: int = 0, confidence: float = 0.95) -> dict[str, Any]:
    """The statistics of the module docstring, each ``{"value", "ci_low", "ci_high"}``
    (or ``{"value": None, "reason"}``), and the confusion table."""
    t = np.asarray(truth, dtype=bool)
    p = np.asarray(pred, dtype=bool)
    if t.shape != p.shape or t.ndim != 1:
        raise ValueError("truth and pred must be two lists of the same length")
    n = len(t)
    point = statistics(t, p)
    boots = {k: [] for k in STATS}  # type: dict[str, list[NDArray[np.float64]]]
    if n > 1:
        for rows in resample_rows(n, n_resamples, seed, _BLOCK):
            for k, v in statistics(t[rows], p[rows]).items():
                boots[k].append(v)
    out: dict[str, Any] = {"n": n}
    for k in STATS:
        value = float(point[k])
        if np.isnan(value):
            out[k] = {"value": None, "reason": _undefined(k)}
            continue
        got = np.concatenate(boots[k]) if boots[k] else np.array([value])
        low, high = percentile_interval(got, confidence) or (value, value)
        out[k] = {"value": value, "ci_low": low, "ci_high": high}
    tp, fp, fn, tn = (int(x) for x in _counts(t, p))
    out["confusion"] = {"labels unsupported": {"judge unsupported": tp, "judge supported": fn},
                        "labels supported": {"judge unsupported": fp, "judge supported": tn}}
    return out


def mcnemar(a_right: Sequence[bool], b_right: Sequence[bool]) -> dict[str, Any]:
    """McNemar's exact test of two judges on the same items: ``b`` items only judge A
    got right, ``c`` only judge B; two-sided p = P(Binomial(b + c, 1/2) as or more
    uneven), 1 when they never differ.

    >>> mcnemar([True, True, True, False], [False, False, True, False])["p_value"]
    0.5
    """
    b = sum(1 for x, y in zip(a_right, b_right, strict=True) if x and not y)
    c = sum(1 for x, y in zip(a_right, b_right, strict=True) if y and not x)
    return {"test": "McNemar exact (two-sided)", "only_first_right": b,
            "only_second_right": c, "p_value": sign_test(b, c)}
