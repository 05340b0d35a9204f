"""Rank ``{qid: {docid: score}}`` runs the way trec_eval does, without sorting them.

trec_eval holds scores as float32 and orders a ranking by score descending, then by
document id descending. Every retrieval metric needs only the ranks of the *relevant*
documents, and the rank of a document is 1 + the number of documents that beat it under
that order. So instead of sorting every ranking, this counts, for each relevant retrieved
document, the scores above it in its ranking: one flat, batched numpy pass over the run.
Ties in float32 are settled by comparing document ids, only where a tie exists.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import chain

import numpy as np

from ragmark.errors import DataError
from ragmark.metrics.judged import Judged

Qrels = Mapping[str, Mapping[str, int]]
Run = Mapping[str, Mapping[str, float]]

_BLOCK = 1 << 22  # compared elements per block: bounds memory at ~50 MB


def _count_beating(
    scores: np.ndarray, starts: np.ndarray, lens: np.ndarray, thr: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """For each item i, count scores > thr[i] and == thr[i] in scores[starts[i]:+lens[i]].

    Items are taken in order of ranking length and compared in 2-D blocks of about
    ``_BLOCK`` elements (rows padded to the longest ranking of the block).
    """
    n = len(thr)
    gt = np.zeros(n, dtype=np.int64)
    eq = np.zeros(n, dtype=np.int64)
    order = np.argsort(lens, kind="stable")
    lens_sorted = lens[order]
    i = 0
    while i < n:
        # the largest block whose rows x longest-row stays within _BLOCK (at least one row)
        cost = np.arange(1, n - i + 1) * lens_sorted[i:]
        j = i + max(1, int(np.searchsorted(cost, _BLOCK, side="right")))
        rows = order[i:j]
        width = int(lens_sorted[j - 1])
        cols = np.arange(width)
        valid = cols < lens[rows, None]
        idx = np.where(valid, starts[rows, None] + cols, 0)
        vals = scores[idx]
        t = thr[rows, None]
        gt[rows] = np.count_nonzero((vals > t) & valid, axis=1)
        eq[rows] = np.count_nonzero((vals == t) & valid, axis=1)
        i = j
    return gt, eq


def judge_run(qrels: Qrels, run: Run) -> Judged:
    """Reduce a run to :class:`Judged` arrays, ranking as trec_eval does.

    The queries are those of ``qrels`` (in its order). A query of the qrels that the run
    lacks counts as an empty ranking (its metrics are 0, as ``trec_eval -c`` reports);
    queries of the run absent from the qrels are ignored, as trec_eval ignores them.
    """
    qids = list(qrels)
    runs = [run.get(q) or {} for q in qids]
    lens = np.fromiter((len(r) for r in runs), dtype=np.int64, count=len(runs))
    starts = np.r_[0, np.cumsum(lens)[:-1]].astype(np.int64)
    total = int(lens.sum())
    try:
        scores = np.fromiter(
            chain.from_iterable(r.values() for r in runs), dtype=np.float32, count=total
        )
    except (TypeError, ValueError) as e:
        raise DataError(f"run scores must be numbers ({e})") from None

    grades: list[list[int]] = []
    rel_q: list[int] = []
    rel_doc: list[str] = []
    rel_score: list[float] = []
    rel_grade: list[int] = []
    for qi, (q, r) in enumerate(zip(qids, runs, strict=True)):
        g_q = []
        for d, g in qrels[q].items():
            if g > 0:
                g_q.append(g)
                s = r.get(d)
                if s is not None:
                    rel_q.append(qi)
                    rel_doc.append(d)
                    rel_score.append(s)
                    rel_grade.append(g)
        grades.append(g_q)

    rq = np.asarray(rel_q, dtype=np.int64)
    thr = np.asarray(rel_score, dtype=np.float32)
    gt, eq = _count_beating(scores, starts[rq], lens[rq], thr)
    ranks = gt + 1
    keys: dict[int, list[str]] = {}
    for i in np.flatnonzero(eq > 1):  # float32 ties: higher document id ranks first
        qn = int(rq[i])
        ids = keys.get(qn)
        if ids is None:
            ids = keys[qn] = list(runs[qn])
        start = int(starts[qn])
        tied = np.flatnonzero(scores[start : start + int(lens[qn])] == thr[i])
        d = rel_doc[i]
        ranks[i] += sum(1 for p in tied.tolist() if ids[p] > d)
    n = len(rq)
    return Judged.build(qids, grades, rq, ranks, np.ones(n, np.int64), rel_grade)
