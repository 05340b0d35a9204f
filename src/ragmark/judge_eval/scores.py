"""What a judge's score (not only its verdict) says about people's labels.

A judge metric gives a score in [0, 1]; judge-eval turns it into a verdict with a rule
("unsupported below 1.0"). One rule can hide a useful score: a judge that calls nearly
everything unsupported at 1.0 may separate the classes well at 0.5. For the items with a
score and a label (``truth``: True = unsupported):

- **ROC AUC** of the score against the labels, with a low score taken as *unsupported*:
  the probability that a supported item scores above an unsupported one, ties counting
  one half (the Mann-Whitney form; scikit-learn's ``roc_auc_score(~truth, score)``);
  percentile bootstrap 95% interval over items.
- **Balanced accuracy at each threshold** ``t`` among the scores seen (verdict:
  unsupported when score < t).
- **A threshold chosen by cross-validation**: stratified k folds (seeded); in each fold
  the threshold with the best balanced accuracy on the other folds is applied to it, so
  the reported balanced accuracy is of verdicts made with thresholds never tuned on the
  items they judge. The threshold to use on new items is the one the same search picks
  on all items (its accuracy is the cross-validated one, not its own).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ragmark.stats.agreement import evaluate, statistics
from ragmark.stats.auc import auc
from ragmark.stats.resample import percentile_interval, resample_rows

FOLDS = 5
_BLOCK = 500


def _interval(truth: NDArray[np.bool_], score: NDArray[np.float64], n_resamples: int,
              seed: int, confidence: float) -> tuple[float, float]:
    got = [auc(score[rows], ~truth[rows])
           for rows in resample_rows(len(truth), n_resamples, seed, _BLOCK)]
    return percentile_interval(np.concatenate(got), confidence) or (math.nan, math.nan)


def balanced_accuracy(truth: NDArray[np.bool_], pred: NDArray[np.bool_]) -> float:
    return float(statistics(truth, pred)["balanced_accuracy"])


def by_threshold(truth: NDArray[np.bool_], score: NDArray[np.float64]
                 ) -> list[dict[str, Any]]:
    """Balanced accuracy and the share called unsupported at each threshold ``t`` among
    the distinct scores (unsupported when score < t) and just above the highest (every
    item unsupported is then t = inf, left out: it says nothing). With labels of one
    class the balanced accuracy is undefined: None, with the reason."""
    out: list[dict[str, Any]] = []
    for t in np.unique(score)[1:]:
        pred = score < t
        ba = balanced_accuracy(truth, pred)
        out.append({"threshold": float(t), "balanced_accuracy": None if math.isnan(ba) else ba,
                    "called_unsupported": int(pred.sum())}
                   | ({"reason": "the labels hold only one class"} if math.isnan(ba) else {}))
    return out


def best_threshold(truth: NDArray[np.bool_], score: NDArray[np.float64]) -> float | None:
    """The threshold among the distinct scores with the best balanced accuracy (ties:
    the lowest); None when every item has the same score, or the labels one class."""
    rows = [r for r in by_threshold(truth, score) if r["balanced_accuracy"] is not None]
    if not rows:
        return None
    best = max(r["balanced_accuracy"] for r in rows)
    return min(r["threshold"] for r in rows if r["balanced_accuracy"] == best)


def folds_of(truth: NDArray[np.bool_], k: int, seed: int) -> list[NDArray[np.int64]]:
    """Stratified folds: each class shuffled (seeded) and dealt round-robin."""
    rng = np.random.default_rng(seed)
    parts: list[list[int]] = [[] for _ in range(k)]
    for cls in (True, False):
        idx = np.flatnonzero(truth == cls)
        rng.shuffle(idx)
        for j, i in enumerate(idx):
            parts[j % k].append(int(i))
    return [np.array(sorted(p), dtype=np.int64) for p in parts if p]


def cross_validated(truth: NDArray[np.bool_], score: NDArray[np.float64], *,
                    folds: int = FOLDS, seed: int = 0, n_resamples: int = 2000,
                    confidence: float = 0.95) -> dict[str, Any]:
    """The threshold search of the module docstring, judged on held-out folds."""
    k = min(folds, int(truth.sum()), int((~truth).sum()))
    if k < 2:
        return {"value": None, "reason": "each class needs at least 2 items for 2 folds"}
    pred = np.zeros_like(truth)
    chosen: list[float | None] = []
    for test in folds_of(truth, k, seed):
        train = np.setdiff1d(np.arange(len(truth)), test)
        t = best_threshold(truth[train], score[train])
        chosen.append(t)
        pred[test] = score[test] < t if t is not None else False
    held = evaluate(truth.tolist(), pred.tolist(), n_resamples=n_resamples, seed=seed,
                    confidence=confidence)["balanced_accuracy"]
    return {"folds": k, "balanced_accuracy": held, "fold_thresholds": chosen,
            "threshold": best_threshold(truth, score)}


def score_report(truth: Sequence[bool], score: Sequence[float], *, n_resamples: int = 2000,
                 seed: int = 0, confidence: float = 0.95) -> dict[str, Any]:
    """ROC AUC with its interval, balanced accuracy by threshold, and the cross-validated
    threshold, for the items' labels ``truth`` (True = unsupported) and scores."""
    t = np.asarray(truth, dtype=bool)
    s = np.asarray(score, dtype=np.float64)
    out: dict[str, Any] = {"items": len(t), "distinct_scores": int(len(np.unique(s)))}
    value = float(auc(s, ~t)) if len(t) else float("nan")
    if np.isnan(value):
        out["roc_auc"] = {"value": None, "reason": "the labels hold only one class"}
    else:
        low, high = _interval(t, s, n_resamples, seed, confidence)
        out["roc_auc"] = {"value": value, "ci_low": low, "ci_high": high}
    out["by_threshold"] = by_threshold(t, s)
    out["cross_validated"] = cross_validated(t, s, seed=seed, n_resamples=n_resamples,
                                             confidence=confidence)
    return out
