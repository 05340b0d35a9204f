"""Rank ``{qid: {docid: score}}`` runs the way trec_eval does, without sorting them.

trec_eval holds scores as float32 and orders a ranking by score descending, then by
document id descending. Every retrieval metric needs only the ranks of the *relevant*
documents, and the rank of a document is 1 + the number of documents that beat it under
that order. So instead of sorting every ranking, this counts, for each relevant retrieved
document, the scores above it in its ranking: one flat, batched numpy pass over the run.
Ties in float32 are settled by comparing document ids, only where a tie exists.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from itertools import chain

import numpy as np

from ragmark.errors import DataError, RagmarkWarning
from ragmark.metrics.graded import Graded

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


def _warn_nan(qids: list[str], runs: list[Mapping[str, float]], n: int) -> None:

    q, d = next((q, d) for q, r in zip(qids, runs, strict=True) for d, s in r.items()
                if s != s)
    warnings.warn(f"{n} run score{'s are' if n != 1 else ' is'} NaN (the first: query {q!r}, "
                  f"document {d!r}): ranked last in their query, as pytrec_eval ranks them",
                  RagmarkWarning, stacklevel=4)


def grade_run(qrels: Qrels, run: Run) -> Graded:
    """Reduce a run to :class:`Graded` arrays, ranking as trec_eval does.

    A NaN score ranks last in its query (as -inf; pytrec_eval ranks it so too), with a
    :class:`~ragmark.errors.RagmarkWarning` that counts them; +inf and -inf rank as the
    values they are.

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
    nan = np.isnan(scores)
    if nan.any():  # NaN compares false with everything: it would rank first
        scores[nan] = -np.inf
        _warn_nan(qids, runs, int(nan.sum()))

    grades: list[list[int]] = []
    n_nonrel: list[int] = []
    found: dict[bool, tuple[list[int], list[str], list[float], list[int]]] = {
        True: ([], [], [], []), False: ([], [], [], [])}
    for qi, (q, r) in enumerate(zip(qids, runs, strict=True)):
        g_q = []
        nonrel = 0
        for d, g in qrels[q].items():
            if g > 0:
                g_q.append(g)
            elif g == 0:  # judged not relevant (a negative grade: not judged, as trec_eval)
                nonrel += 1
            else:
                continue
            s = r.get(d)
            if s is not None and s != s:  # NaN: ranked last, as above
                s = -np.inf
            if s is not None:  # a judged document retrieved: relevant or not
                part = found[g > 0]
                part[0].append(qi)
                part[1].append(d)
                part[2].append(s)
                part[3].append(g)
        grades.append(g_q)
        n_nonrel.append(nonrel)

    def ranks(rel: bool) -> tuple[np.ndarray, np.ndarray]:
        q_of, docs, values, _ = found[rel]
        rq = np.asarray(q_of, dtype=np.int64)
        thr = np.asarray(values, dtype=np.float32)
        gt, eq = _count_beating(scores, starts[rq], lens[rq], thr)
        out = gt + 1
        keys: dict[int, list[str]] = {}
        for i in np.flatnonzero(eq > 1):  # float32 ties: higher document id ranks first
            qn = int(rq[i])
            ids = keys.get(qn)
            if ids is None:
                ids = keys[qn] = list(runs[qn])
            start = int(starts[qn])
            tied = np.flatnonzero(scores[start : start + int(lens[qn])] == thr[i])
            d = docs[i]
            out[i] += sum(1 for p in tied.tolist() if ids[p] > d)
        return rq, out

    rq, rel_ranks = ranks(True)
    nq, nonrel_ranks = ranks(False)
    return Graded.build(qids, grades, rq, rel_ranks, np.ones(len(rq), np.int64),
                        found[True][3], nq, nonrel_ranks, n_nonrel)
