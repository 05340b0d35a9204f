"""Fusion of several retrievers' rankings: reciprocal-rank fusion and weighted sums. Pure.

Two shapes of input, same maths:
- runs as dicts, like ranx/trec runs: ``{query id: {item id: score}}``;
- retriever output arrays (the ``Retriever`` protocol): per run a (queries x k) array of
  item indices (``-1`` = empty slot) and one of scores.

Every input run is ranked the way trec_eval ranks (float32 score descending, then id
descending), and fused results come back in that same order, so a fused run keeps its
order when the metrics re-rank it. Inputs are never mutated.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ragmark.errors import ConfigError
from ragmark.matching import trec_order

Run = dict[str, dict[str, float]]
"""query id -> {item id -> score}."""

RunLike = Mapping[str, Mapping[str, float]]

NORMS = ("minmax", "zscore", "max", "none")
DEFAULT_K = 60


def normalise_scores(scores: ArrayLike, method: str = "minmax") -> NDArray[np.float64]:
    """Normalise one query's scores of one run.

    - ``minmax``: (s - min) / (max - min); a constant run gives all 1.0. ranx gives 0.0
      there, which makes a retriever that found a single item (or tied all it found)
      count the same as one that found nothing; 1.0 keeps "retrieved" above "missing".
    - ``zscore``: (s - mean) / std (population std); a constant run gives all 0.0.
    - ``max``: s / max|s| (= s / max for the usual non-negative scores; dividing by a
      positive number never flips the order); all zeros stay 0.0.
    - ``none``: the scores unchanged.

    >>> normalise_scores([2.0, 4.0, 3.0]).tolist()
    [0.0, 1.0, 0.5]
    """
    s = np.asarray(scores, dtype=np.float64)
    if s.ndim != 1:
        raise ValueError(f"scores must be one-dimensional, got shape {s.shape}")
    return _normalise_rows(s[None, :], np.ones((1, s.size), dtype=bool), method)[0]


def rrf(
    runs: Sequence[RunLike],
    k: float = DEFAULT_K,
    weights: Sequence[float] | None = None,
    depth: int | None = None,
) -> Run:
    """Reciprocal-rank fusion (Cormack, Clarke and Buettcher, SIGIR 2009).

    score(d) = sum over runs r of w_r / (k + rank_r(d)), with rank_r 1-based in run r's
    trec_eval order; a run that lacks d adds nothing. Weights default to 1. The result is
    in trec_eval order, cut to the ``depth`` best when given.

    >>> rrf([{"q": {"a": 2.0, "b": 1.0}}, {"q": {"b": 5.0}}], k=60)
    {'q': {'b': 0.03252247488101534, 'a': 0.01639344262295082}}

    (b: 1/62 + 1/61; a: 1/61.)
    """
    w = _check(runs, weights, depth)
    _check_k(k)

    def reciprocal_ranks(ids: list[str], scores: list[float]) -> NDArray[np.float64]:
        ranks = np.empty(len(ids), dtype=np.float64)
        ranks[trec_order(ids, scores)] = np.arange(1, len(ids) + 1)
        return 1.0 / (k + ranks)

    return _fuse_runs(runs, w, depth, reciprocal_ranks)


def weighted_sum(
    runs: Sequence[RunLike],
    weights: Sequence[float] | None = None,
    norm: str = "minmax",
    depth: int | None = None,
) -> Run:
    """Weighted sum of normalised scores (ranx's ``comb_sum`` on normalised runs).

    score(d) = sum over runs r of w_r * norm_r(s_r(d)), each run normalised per query
    (see ``normalise_scores``); a run that lacks d adds 0, the common convention (with
    ``zscore`` that is the run's mean). The result is in trec_eval order, cut to the
    ``depth`` best when given.

    >>> weighted_sum([{"q": {"a": 2.0, "b": 1.0}}, {"q": {"b": 5.0, "c": 3.0}}], [0.7, 0.3])
    {'q': {'a': 0.7, 'b': 0.3, 'c': 0.0}}
    """
    w = _check(runs, weights, depth)
    _check_norm(norm)
    return _fuse_runs(runs, w, depth, lambda ids, scores: normalise_scores(scores, norm))


def rrf_arrays(
    indices: Sequence[ArrayLike],
    scores: Sequence[ArrayLike],
    k: float = DEFAULT_K,
    weights: Sequence[float] | None = None,
    depth: int | None = None,
    tie_key: ArrayLike | None = None,
) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """``rrf`` on retriever outputs: per run (queries x k_r) item indices and scores.

    Each run is re-ranked by (float32 score desc, tie key desc); ``-1`` slots are empty.
    ``tie_key[i]`` orders item i among equal scores (larger first); pass each item's
    position in the sorted list of ids to reproduce trec_eval exactly. Default: the
    item index. Returns (queries x depth) indices (``-1`` padded) and fused scores
    (``-inf`` padded) in the same order; depth defaults to the widest fused row.
    """
    w = _check(indices, weights, depth, same_as=scores)
    _check_k(k)
    idx, sc, tie = _arrays(indices, scores, tie_key)
    contrib = []
    for ir, sr, wr in zip(idx, sc, w, strict=True):
        ranks = _row_ranks(ir, sr, tie)
        contrib.append(np.where(ir >= 0, wr / (k + ranks), 0.0))
    return _fuse(idx, contrib, tie, depth)


def weighted_sum_arrays(
    indices: Sequence[ArrayLike],
    scores: Sequence[ArrayLike],
    weights: Sequence[float] | None = None,
    norm: str = "minmax",
    depth: int | None = None,
    tie_key: ArrayLike | None = None,
) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """``weighted_sum`` on retriever outputs; shapes and order as in ``rrf_arrays``."""
    w = _check(indices, weights, depth, same_as=scores)
    _check_norm(norm)
    idx, sc, tie = _arrays(indices, scores, tie_key)
    contrib = [
        wr * _normalise_rows(sr, ir >= 0, norm) for ir, sr, wr in zip(idx, sc, w, strict=True)
    ]
    return _fuse(idx, contrib, tie, depth)


# --- helpers ---------------------------------------------------------------------------


def _check(
    runs: Sequence[object],
    weights: Sequence[float] | None,
    depth: int | None,
    same_as: Sequence[object] | None = None,
) -> list[float]:
    if len(runs) < 2:
        raise ConfigError(f"fusion needs at least 2 runs, got {len(runs)}")
    if same_as is not None and len(same_as) != len(runs):
        raise ConfigError(f"got {len(runs)} index arrays but {len(same_as)} score arrays")
    if weights is None:
        w = [1.0] * len(runs)
    else:
        w = [float(x) for x in weights]
        if len(w) != len(runs):
            raise ConfigError(
                f"fusion weights: got {len(w)} weights for {len(runs)} runs; "
                "give one weight per run"
            )
        if not all(np.isfinite(x) and x >= 0 for x in w) or sum(w) == 0:
            raise ConfigError(f"fusion weights must be finite, >= 0 and not all 0, got {w}")
    if depth is not None and (
        isinstance(depth, bool) or not isinstance(depth, int | np.integer) or depth < 1
    ):
        raise ConfigError(f"fusion depth must be a positive integer or None, got {depth!r}")
    return w


def _check_k(k: float) -> None:
    if isinstance(k, bool) or not np.isfinite(k) or k <= 0:
        raise ConfigError(f"RRF k must be a number > 0 (usually 60), got {k!r}")


def _check_norm(method: str) -> None:
    if method not in NORMS:
        raise ConfigError(f"unknown score normalisation {method!r}; known: {', '.join(NORMS)}")


def _query_ids(runs: Sequence[RunLike]) -> list[str]:
    """Union of query ids, in first-seen order."""
    return list(dict.fromkeys(q for run in runs for q in run))


def _fuse_runs(
    runs: Sequence[RunLike],
    w: list[float],
    depth: int | None,
    value: Callable[[list[str], list[float]], NDArray[np.float64]],
) -> Run:
    """Per query, sum over runs of weight x ``value(ids, scores)`` of each item; a run
    that lacks an item adds nothing. Results in trec_eval order, cut to ``depth``."""
    fused: Run = {}
    for qid in _query_ids(runs):
        acc: dict[str, float] = {}
        for run, wr in zip(runs, w, strict=True):
            items = run.get(qid)
            if not items:
                continue
            ids = list(items)
            values = value(ids, [items[i] for i in ids]).tolist()
            for i, v in zip(ids, values, strict=True):
                acc[i] = acc.get(i, 0.0) + wr * v
        fused[qid] = _ranked(acc, depth)
    return fused


def _ranked(acc: dict[str, float], depth: int | None) -> dict[str, float]:
    ids = list(acc)
    order = trec_order(ids, [acc[i] for i in ids])
    if depth is not None:
        order = order[:depth]
    return {ids[p]: acc[ids[p]] for p in order.tolist()}


def _normalise_rows(s: NDArray[np.float64], mask: NDArray[np.bool_], method: str) -> NDArray:
    """Normalise each row over its ``mask``ed entries; entries outside the mask become 0."""
    _check_norm(method)
    s = np.asarray(s, dtype=np.float64)
    if not np.isfinite(s[mask]).all():
        raise ValueError("retrieved scores must be finite to be normalised")
    if method == "none":
        return np.where(mask, s, 0.0)
    count = mask.sum(axis=1, keepdims=True)
    has = count > 0
    lo = np.min(np.where(mask, s, np.inf), axis=1, keepdims=True, initial=np.inf)
    hi = np.max(np.where(mask, s, -np.inf), axis=1, keepdims=True, initial=-np.inf)
    span = np.where(has, hi - lo, 0.0)
    constant = span == 0
    with np.errstate(divide="ignore", invalid="ignore"):
        if method == "minmax":
            out = np.where(constant, 1.0, (s - lo) / np.where(constant, 1.0, span))
        elif method == "zscore":
            mean = np.where(mask, s, 0.0).sum(axis=1, keepdims=True) / np.maximum(count, 1)
            var = (np.where(mask, s - mean, 0.0) ** 2).sum(axis=1, keepdims=True)
            std = np.sqrt(var / np.maximum(count, 1))
            out = np.where(constant, 0.0, (s - mean) / np.where(constant, 1.0, std))
        else:  # max
            top = np.max(np.where(mask, np.abs(s), 0.0), axis=1, keepdims=True, initial=0.0)
            out = np.where(top == 0, 0.0, s / np.where(top == 0, 1.0, top))
    return np.where(mask, out, 0.0)


def _arrays(
    indices: Sequence[ArrayLike], scores: Sequence[ArrayLike], tie_key: ArrayLike | None
) -> tuple[list[NDArray[np.int64]], list[NDArray[np.float64]], NDArray[np.int64]]:
    idx = [np.asarray(a, dtype=np.int64) for a in indices]
    sc = [np.asarray(a, dtype=np.float64) for a in scores]
    rows = idx[0].shape[0] if idx[0].ndim == 2 else -1
    top = -1
    for r, (ir, sr) in enumerate(zip(idx, sc, strict=True)):
        if ir.ndim != 2 or ir.shape[0] != rows or ir.shape != sr.shape:
            raise ValueError(
                f"run {r}: indices {ir.shape} and scores {sr.shape} must be "
                f"(queries x k) arrays of the same shape, with {rows} queries in every run"
            )
        srt = np.sort(ir, axis=1)
        if ((srt[:, 1:] == srt[:, :-1]) & (srt[:, 1:] >= 0)).any():
            raise ValueError(f"run {r}: an item index occurs twice for one query")
        if ir.size:
            top = max(top, int(ir.max()))
    if tie_key is None:
        tie = np.arange(max(top + 1, 1), dtype=np.int64)
    else:
        tie = np.asarray(tie_key, dtype=np.int64)
        if tie.ndim != 1 or tie.size <= top:
            raise ValueError(f"tie_key must be 1-D with an entry for every index 0..{top}")
        if tie.size == 0:
            tie = np.zeros(1, dtype=np.int64)
    return idx, sc, tie


def _row_ranks(
    ir: NDArray[np.int64], sr: NDArray[np.float64], tie: NDArray[np.int64]
) -> NDArray[np.float64]:
    """1-based rank of each slot within its row, in (float32 score desc, tie desc) order."""
    valid = ir >= 0
    s32 = np.where(valid, -sr.astype(np.float32), np.float32(np.inf))
    t = np.where(valid, -tie[np.where(valid, ir, 0)], 0)
    order = np.lexsort((t, s32), axis=-1)
    ranks = np.empty(ir.shape, dtype=np.float64)
    np.put_along_axis(ranks, order, np.arange(1, ir.shape[1] + 1, dtype=np.float64)[None, :], 1)
    return ranks


def _fuse(
    idx: list[NDArray[np.int64]],
    contrib: list[NDArray[np.float64]],
    tie: NDArray[np.int64],
    depth: int | None,
) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Sum contributions per (query, item) and rank each query's items."""
    nq = idx[0].shape[0]
    all_i = np.concatenate(idx, axis=1)
    all_c = np.concatenate(contrib, axis=1)
    mask = all_i >= 0
    q = np.broadcast_to(np.arange(nq, dtype=np.int64)[:, None], all_i.shape)[mask]
    items = all_i[mask]
    width = np.int64(tie.size + 1)
    keys, inverse = np.unique(q * width + items, return_inverse=True)
    sums = np.bincount(inverse.ravel(), weights=all_c[mask], minlength=keys.size)
    uq, ui = keys // width, keys % width
    order = np.lexsort((-tie[ui], -sums.astype(np.float32), uq))
    uq, ui, sums = uq[order], ui[order], sums[order]
    counts = np.bincount(uq, minlength=nq)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    pos = np.arange(uq.size) - starts[uq]
    cols = int(counts.max(initial=0)) if depth is None else int(depth)
    keep = pos < cols
    out_i = np.full((nq, cols), -1, dtype=np.int64)
    out_s = np.full((nq, cols), -np.inf, dtype=np.float64)
    out_i[uq[keep], pos[keep]] = ui[keep]
    out_s[uq[keep], pos[keep]] = sums[keep]
    return out_i, out_s
