"""ROC AUC in its Mann-Whitney form: the probability that a positive item scores above
a negative one, ties counting one half (scikit-learn's ``roc_auc_score(positive,
score)``), over the last axis, so a block of bootstrap resamples is one call."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray


def midranks(values: NDArray[np.float64]) -> NDArray[np.float64]:
    """1-based ranks of each row's values, ties given their mean rank."""
    out = np.empty(np.shape(np.atleast_2d(values)), dtype=np.float64)
    for i, row in enumerate(np.atleast_2d(values)):
        order = np.sort(row)
        out[i] = (np.searchsorted(order, row, "left") + np.searchsorted(order, row, "right")
                  + 1) / 2
    return out


def auc(score: NDArray[np.float64], positive: NDArray[np.bool_]) -> NDArray[np.float64]:
    """ROC AUC of ``score`` for the ``positive`` items over the last axis, NaN where one
    class is absent; one sample (1-D: a 0-d array) or a block of resamples (2-D).

    >>> float(auc(np.array([0.0, 1.0, 0.5, 0.5]), np.array([False, True, False, True])))
    0.875
    """
    p = np.atleast_2d(np.asarray(positive, dtype=bool))
    s = np.atleast_2d(np.asarray(score, dtype=np.float64))
    ranks = midranks(s)
    pos = p.sum(axis=-1).astype(np.float64)
    neg = (~p).sum(axis=-1).astype(np.float64)
    r_pos = np.where(p, ranks, 0.0).sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        got = np.where((pos > 0) & (neg > 0),
                       (r_pos - pos * (pos + 1) / 2) / np.where(pos * neg > 0, pos * neg, 1),
                       np.nan)
    return got if np.ndim(positive) > 1 else got[0]
