"""Inner-product top-k search over unit vectors: exact in numpy, or FAISS IndexFlatIP.

Both return two ``(queries x k)`` arrays, chunk indices (int64, ``-1`` padded when the
corpus has fewer than k rows) and float32 scores (``-inf`` padded), best first, ties
ordered by chunk index ascending.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from ragmark.errors import MissingExtraError

QUERY_BLOCK = 256
"""Queries scored together; with ``block_size`` this bounds the working memory to
about ``QUERY_BLOCK * block_size * 24`` bytes (25 MB at the default 4096)."""

_LOW31 = np.int32(0x7FFFFFFF)
_LOW32 = np.uint64(0xFFFFFFFF)


def _padded(nq: int, k: int) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
    return np.full((nq, k), -1, dtype=np.int64), np.full((nq, k), -np.inf, dtype=np.float32)


def _rank_keys(scores: NDArray[np.float32], first: int) -> NDArray[np.uint64]:
    """One uint64 per score whose ascending order is (score descending, column index
    ascending): the high 32 bits hold the float's bits mapped to a reversed unsigned
    order, the low 32 bits ``first + column``. Consumes ``scores`` (modified in place).
    """
    scores += np.float32(0.0)  # -0.0 becomes +0.0, so equal scores get equal keys
    bits = scores.view(np.int32)
    # float order -> reversed unsigned order: x >= 0 flips its 31 low bits, x < 0 keeps
    # them (its set sign bit puts it after every x >= 0)
    bits ^= ~(bits >> 31) & _LOW31
    keys = bits.view(np.uint32).astype(np.uint64) << np.uint64(32)
    keys |= np.arange(first, first + scores.shape[1], dtype=np.uint64)
    return keys


def _decode(keys: NDArray[np.uint64]) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
    ids = (keys & _LOW32).astype(np.int64)
    bits = (keys >> np.uint64(32)).astype(np.uint32).view(np.int32)
    bits ^= ~(bits >> 31) & _LOW31  # the mapping is its own inverse
    return ids, bits.view(np.float32)


def exact_top_k(
    queries: NDArray[np.float32],
    corpus: NDArray[np.float32],
    k: int,
    block_size: int = 4096,
) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
    """The ``k`` corpus rows with the largest inner product for each query row.

    The corpus is scanned in blocks of ``block_size`` rows: each block's scores
    (``Q @ D_block.T``) are reduced to their k best per query and merged with the
    running k best, so memory stays bounded whatever the corpus size. Ties are broken
    by row index, ascending; the order is exact and deterministic (scores and indices
    are packed into one sortable integer key).
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if block_size < 1:
        raise ValueError(f"block_size must be >= 1, got {block_size}")
    nq, n = len(queries), len(corpus)
    if n >= 1 << 32:
        raise ValueError("exact search handles at most 2**32 - 1 corpus rows")
    ids, scores = _padded(nq, k)
    k_eff = min(k, n)
    if nq == 0 or k_eff == 0:
        return ids, scores
    q_all = np.ascontiguousarray(queries, dtype=np.float32)
    d_all = np.ascontiguousarray(corpus, dtype=np.float32)
    for qs in range(0, nq, QUERY_BLOCK):
        q = q_all[qs : qs + QUERY_BLOCK]
        best = np.empty((len(q), 0), dtype=np.uint64)
        for start in range(0, n, block_size):
            keys = _rank_keys(q @ d_all[start : start + block_size].T, start)
            if keys.shape[1] > k_eff:
                keys = np.partition(keys, k_eff - 1, axis=1)[:, :k_eff]
            best = np.concatenate([best, keys], axis=1)
            if best.shape[1] > k_eff:
                best = np.partition(best, k_eff - 1, axis=1)[:, :k_eff]
        best.sort(axis=1)
        ids[qs : qs + len(q), :k_eff], scores[qs : qs + len(q), :k_eff] = _decode(best)
    return ids, scores


def faiss_index(corpus: NDArray[np.float32]) -> Any:
    """A FAISS ``IndexFlatIP`` holding ``corpus`` (exact inner product, FAISS kernels)."""
    try:
        import faiss
    except ImportError:
        raise MissingExtraError("faiss-cpu", "faiss") from None
    vectors = np.ascontiguousarray(corpus, dtype=np.float32)
    index = faiss.IndexFlatIP(vectors.shape[1])
    index.add(vectors)
    return index


def faiss_top_k(
    index: Any, queries: NDArray[np.float32], k: int
) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
    """:func:`exact_top_k` through a FAISS index. The k found are re-ordered by (score
    descending, index ascending); which of several chunks tied at the k-th place is
    kept is FAISS's choice."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    nq, n = len(queries), int(index.ntotal)
    ids, scores = _padded(nq, k)
    k_eff = min(k, n)
    if nq == 0 or k_eff == 0:
        return ids, scores
    s, i = index.search(np.ascontiguousarray(queries, dtype=np.float32), k_eff)
    s = np.asarray(s, dtype=np.float32) + np.float32(0.0)
    i = np.asarray(i, dtype=np.int64)
    order = np.lexsort((i, -s), axis=-1)
    ids[:, :k_eff] = np.take_along_axis(i, order, axis=1)
    scores[:, :k_eff] = np.take_along_axis(s, order, axis=1)
    return ids, scores
