"""Retrieval metrics over :class:`~ragmark.metrics.graded.Graded` arrays (pure, numpy).

Conventions follow trec_eval (checked against pytrec_eval to 1e-9 in the tests):
relevant means grade > 0; gains are linear (the grade); discounts are log2(rank + 1);
the ideal ranking of nDCG is built from every judged target; precision@k divides by k
even when fewer than k items were retrieved. A query with no relevant target has no
value (NaN here; the runner records it as skipped).

Worked example: one query, targets a (grade 2) and b (grade 1), ranking [x, a, y, b]:
precision@2 = 1/2; recall@2 = 1/2; hit@1 = 0; mrr = 1/2; map = (1/2 + 2/4) / 2 = 0.5;
ndcg@4 = (2/log2(3) + 1/log2(5)) / (2 + 1/log2(3)) = 0.6806...; r_precision = 1/2.

A metric without a cutoff covers the whole ranking it is given. ragmark's own pipeline
retrieves ``top_k`` items, so there such a metric is named with that depth (``map@10``:
trec_eval's ``map_cut.10``; ``bpref@10``: trec_eval's bpref of the run cut at 10).
"""

from __future__ import annotations

import numpy as np

from ragmark.metrics.graded import FloatArray, Graded
from ragmark.types import MetricSpec, spec


def _per_query_sum(j: Graded, weights: FloatArray, mask: np.ndarray | None = None) -> FloatArray:
    q = j.hit_q if mask is None else j.hit_q[mask]
    w = weights if mask is None else weights[mask]
    return np.bincount(q, weights=w, minlength=j.n_queries).astype(np.float64)


def _with_skips(j: Graded, values: FloatArray) -> FloatArray:
    out = values.astype(np.float64, copy=True)
    out[j.n_rel == 0] = np.nan
    return out


def _safe_div(a: FloatArray, b: np.ndarray) -> FloatArray:
    b = np.asarray(b, dtype=np.float64)
    out = np.zeros_like(a, dtype=np.float64)
    np.divide(a, b, out=out, where=b > 0)
    return out


def precision(j: Graded, k: int) -> FloatArray:
    """precision@k = |relevant items in the top k| / k (trec_eval ``P_k``)."""
    hits = _per_query_sum(j, np.ones(len(j.hit_q)), j.hit_rank <= k)
    return _with_skips(j, hits / k)


def recall(j: Graded, k: int) -> FloatArray:
    """recall@k = |distinct targets reached in the top k| / |targets| (``recall_k``)."""
    found = _per_query_sum(j, j.hit_new.astype(np.float64), j.hit_rank <= k)
    return _with_skips(j, _safe_div(found, j.n_rel))


def hit(j: Graded, k: int) -> FloatArray:
    """hit@k = 1 if any relevant item is in the top k, else 0 (``success_k``)."""
    hits = _per_query_sum(j, np.ones(len(j.hit_q)), j.hit_rank <= k)
    return _with_skips(j, (hits > 0).astype(np.float64))


def mrr(j: Graded, k: int | None = None) -> FloatArray:
    """mrr[@k] = 1 / rank of the first relevant item (0 if none in the top k; ``recip_rank``)."""
    out = np.zeros(j.n_queries)
    if len(j.hit_q):
        first = np.flatnonzero(np.r_[True, j.hit_q[1:] != j.hit_q[:-1]])
        q, r = j.hit_q[first], j.hit_rank[first]
        keep = r <= k if k is not None else np.ones(len(r), bool)
        out[q[keep]] = 1.0 / r[keep]
    return _with_skips(j, out)


def _ideal_dcg(j: Graded, k: int | None) -> FloatArray:
    if len(j.ideal_q) == 0:
        return np.zeros(j.n_queries)
    starts = np.searchsorted(j.ideal_q, j.ideal_q, side="left")
    pos = np.arange(len(j.ideal_q)) - starts + 1
    w = j.ideal_gain / np.log2(pos + 1.0)
    if k is not None:
        w = np.where(pos <= k, w, 0.0)
    return np.bincount(j.ideal_q, weights=w, minlength=j.n_queries).astype(np.float64)


def ndcg(j: Graded, k: int | None = None) -> FloatArray:
    """ndcg[@k] = DCG@k / ideal DCG@k with DCG = sum of grade / log2(rank + 1)
    (``ndcg_cut_k``; without k, ``ndcg`` over the whole ranking). Capped at 1 for the rare
    chunk that reaches several targets at once."""
    w = j.hit_gain / np.log2(j.hit_rank + 1.0)
    dcg = _per_query_sum(j, w, None if k is None else j.hit_rank <= k)
    return _with_skips(j, np.minimum(_safe_div(dcg, _ideal_dcg(j, k)), 1.0))


def _cum_new(j: Graded) -> np.ndarray:
    """Per hit, the number of targets reached up to and including it, in its query."""
    c = np.cumsum(j.hit_new)
    if len(c) == 0:
        return c
    starts = np.searchsorted(j.hit_q, j.hit_q, side="left")
    before = np.r_[0, c][starts]
    return c - before


def average_precision(j: Graded, k: int | None = None) -> FloatArray:
    """map[@k] = (1/|targets|) * sum over reached targets of (targets reached so far / rank)
    (``map``; with k, ``map_cut_k``)."""
    w = j.hit_new * _cum_new(j) / j.hit_rank
    s = _per_query_sum(j, w.astype(np.float64), None if k is None else j.hit_rank <= k)
    return _with_skips(j, _safe_div(s, j.n_rel))


def r_precision(j: Graded, k: int | None = None) -> FloatArray:
    """r_precision = targets reached in the top R / R, R = number of targets (``Rprec``);
    with k, on the ranking cut at k (targets in the top min(R, k) / R)."""
    r_of_hit = j.n_rel[j.hit_q]
    if k is not None:
        r_of_hit = np.minimum(r_of_hit, k)
    found = _per_query_sum(j, j.hit_new.astype(np.float64), j.hit_rank <= r_of_hit)
    return _with_skips(j, _safe_div(found, j.n_rel))


def judged(j: Graded, k: int) -> FloatArray:
    """judged@k = items in the top k that have a judgment (relevant, or judged not
    relevant: a qrels grade of 0) / k: how much of a ranking the qrels can score."""
    n = _per_query_sum(j, np.ones(len(j.hit_q)), j.hit_rank <= k)
    keep = j.nonrel_rank <= k
    n += np.bincount(j.nonrel_q[keep], minlength=j.n_queries).astype(np.float64)
    return _with_skips(j, n / k)


def bpref(j: Graded, k: int | None = None) -> FloatArray:
    """bpref (trec_eval): (1/R) * sum over the relevant retrieved of
    (1 - min(judged non-relevant ranked above it, R) / min(R, N)), a term of 1 when none
    is above; R, N = judged relevant and non-relevant documents of the query. Unjudged
    documents are ignored, so it holds up when judgments are incomplete. With k, on the
    ranking cut at k (trec_eval's bpref of a run holding the top k only)."""
    new = j.hit_new > 0
    if k is not None:
        new &= j.hit_rank <= k
    q, rank = j.hit_q[new], j.hit_rank[new]
    width = int(max(j.hit_rank.max(initial=0), j.nonrel_rank.max(initial=0))) + 1
    keys = j.nonrel_q * width + j.nonrel_rank  # sorted: nonrel is in (query, rank) order
    above = (np.searchsorted(keys, q * width + rank, side="left")
             - np.searchsorted(keys, q * width, side="left"))
    r = j.n_rel[q].astype(np.float64)
    denom = np.minimum(r, j.n_nonrel[q].astype(np.float64))
    with np.errstate(divide="ignore", invalid="ignore"):
        term = np.where(above > 0, 1 - np.minimum(above, r) / np.where(denom > 0, denom, 1),
                        1.0)
    total = np.bincount(q, weights=term * j.hit_new[new], minlength=j.n_queries)
    return _with_skips(j, _safe_div(total.astype(np.float64), j.n_rel))


_TRUTH = ("ground_truth",)

SPECS: tuple[MetricSpec, ...] = (
    spec("recall", "retrieval", "required", "distinct targets found in the top k / all",
         "Recall", _TRUTH, (3, 5, 10), compute=recall),
    spec("precision", "retrieval", "required", "relevant items in the top k / k",
         "Precision", _TRUTH, (5,), compute=precision),
    spec("hit", "retrieval", "required", "1 if any relevant item is in the top k", "Hit",
         _TRUTH, (5,), compute=hit),
    spec("mrr", "retrieval", "optional", "1 / rank of the first relevant item", "MRR", _TRUTH,
         (None,), compute=mrr),
    spec("ndcg", "retrieval", "optional", "normalised DCG, linear gain (trec_eval)", "nDCG",
         _TRUTH, (10,), compute=ndcg),
    spec("map", "retrieval", "optional", "average precision over all targets", "MAP", _TRUTH,
         (None,), compute=average_precision),
    spec("r_precision", "retrieval", "optional", "precision at R = number of targets",
         "R-Precision", _TRUTH, compute=r_precision),
    spec("bpref", "retrieval", "optional",
         "relevant ranked above judged non-relevant (trec_eval bpref)", "", ("qrels",),
         compute=bpref),
    spec("judged", "retrieval", "required", "items in the top k with a qrels judgment / k",
         "", ("qrels",), (10,), compute=judged),
)
"""The retrieval metrics of the catalogue, in the order they are reported: a new one is
its function above and its line here."""
