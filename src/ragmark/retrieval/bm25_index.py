"""BM25 scoring at a million chunks, in numpy, with the exact scores of bm25s.

bm25s indexes the corpus into a sparse term x document matrix of precomputed BM25
scores (idf times the saturated term frequency). A query's score for a document is the
sum of its terms' entries, added in query-term order in float32, as bm25s adds them;
``BM25Index`` computes exactly those floats, faster:

- *Dense rows for common terms.* A term in at least ``dense_share`` of the documents
  (default 1/8) is kept as a dense float32 row of the document count: adding it is one
  contiguous vector add instead of a scattered gather; its postings are dropped (a term
  in more than half the documents takes less memory dense than sparse).
- *The other terms* add their postings with one fancy-indexed add each (a term's
  postings name each document once, so this is the same sequential sum).
- *Top-k with a threshold.* The k-th largest score of a strided sample of the
  documents is a lower bound of the k-th largest overall; only the documents at or
  above it are sorted, by score descending then document index ascending (ties are
  ordered deterministically).

No compiled code: nothing to compile on a first call. Scores are bit-identical to
bm25s's (tested against it), so rankings differ only in the order of exact ties.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

DENSE_SHARE = 0.125
_SAMPLE_STEP = 64
_SMALL = 4096  # documents: below this, every score is sorted


@dataclass
class BM25Index:
    """Postings of the sparse terms (``indptr`` per term id, ``indices`` document,
    ``data`` score) and dense score rows of the common terms (``row_of``: term id ->
    row, or -1). ``nonoccurrence``: per-term scores of documents without the term
    (bm25l, bm25+), added as bm25s adds them; None for lucene."""

    n_docs: int
    indptr: NDArray[np.int64]
    indices: NDArray[Any]
    data: NDArray[np.float32]
    row_of: NDArray[np.int64]
    dense: NDArray[np.float32]
    nonoccurrence: NDArray[np.float32] | None = None

    @classmethod
    def from_bm25s(cls, scores: Mapping[str, Any], nonoccurrence: Any = None,
                   dense_share: float = DENSE_SHARE) -> BM25Index:
        """From bm25s's ``model.scores`` (its arrays are compacted in place and taken
        over: the model must not be used for retrieval afterwards)."""
        data = np.asarray(scores["data"])
        indices = np.asarray(scores["indices"])
        indptr = np.asarray(scores["indptr"]).astype(np.int64, copy=False)
        n_docs = int(scores["num_docs"])
        df = np.diff(indptr)
        common = np.flatnonzero(df >= max(dense_share * n_docs, 1)) if n_docs > _SMALL else (
            np.zeros(0, dtype=np.int64))
        row_of = np.full(len(df), -1, dtype=np.int64)
        row_of[common] = np.arange(len(common))
        dense = np.zeros((len(common), n_docs), dtype=np.float32)
        for r, t in enumerate(common):
            dense[r, indices[indptr[t] : indptr[t + 1]]] = data[indptr[t] : indptr[t + 1]]
        if len(common):  # drop the common terms' postings, moving the rest down in place
            keep = row_of < 0
            new_ptr = np.zeros_like(indptr)
            np.cumsum(np.where(keep, df, 0), out=new_ptr[1:])
            write = 0
            for t in np.flatnonzero(keep):
                a, b = indptr[t], indptr[t + 1]
                if a != write:
                    data[write : write + b - a] = data[a:b]
                    indices[write : write + b - a] = indices[a:b]
                write += b - a
            data, indices = _shrink(data, write), _shrink(indices, write)
            indptr = new_ptr
        non = None if nonoccurrence is None else np.asarray(nonoccurrence)
        return cls(n_docs, indptr, indices, data.astype(np.float32, copy=False), row_of,
                   dense, non)

    def scores(self, term_ids: Sequence[int]) -> NDArray[np.float32]:
        """Every document's score for a query given as term ids in query order (a term
        repeated counts again, as in bm25s)."""
        s = np.zeros(self.n_docs, dtype=np.float32)
        for t in term_ids:
            r = self.row_of[t]
            if r >= 0:
                np.add(s, self.dense[r], out=s)
            else:
                a, b = self.indptr[t], self.indptr[t + 1]
                if b > a:
                    idx = self.indices[a:b]
                    s[idx] += self.data[a:b]
        if self.nonoccurrence is not None and len(term_ids):
            s += self.nonoccurrence[np.asarray(term_ids)].sum()
        return s

    def top_k(self, term_ids: Sequence[int], k: int) -> tuple[NDArray[np.int64],
                                                              NDArray[np.float32]]:
        """The (at most) k documents with a positive score, best first (ties by
        document index), with their scores."""
        s = self.scores(term_ids)
        if self.n_docs > _SMALL:
            sample = s[::_SAMPLE_STEP]
            kk = min(k, len(sample))
            thr = np.partition(sample, len(sample) - kk)[len(sample) - kk]
            cand = np.flatnonzero(s >= thr) if thr > 0 else np.flatnonzero(s > 0)
        else:
            cand = np.flatnonzero(s > 0)
        vals = s[cand]
        if len(cand) > k:  # keep the k best and whatever ties the k-th
            kth = np.partition(vals, len(vals) - k)[len(vals) - k]
            best = vals >= kth
            cand, vals = cand[best], vals[best]
        order = np.lexsort((cand, -vals))[:k]
        return cand[order].astype(np.int64), vals[order]

    def save(self, folder: Path) -> None:
        """Plain ``.npy`` arrays in ``folder``."""
        for name in ("indptr", "indices", "data", "row_of", "dense"):
            np.save(folder / f"{name}.npy", getattr(self, name), allow_pickle=False)
        if self.nonoccurrence is not None:
            np.save(folder / "nonoccurrence.npy", self.nonoccurrence, allow_pickle=False)

    @classmethod
    def load(cls, folder: Path, n_docs: int) -> BM25Index:
        arrays = {name: np.load(folder / f"{name}.npy", allow_pickle=False)
                  for name in ("indptr", "indices", "data", "row_of", "dense")}
        non = folder / "nonoccurrence.npy"
        return cls(n_docs, arrays["indptr"], arrays["indices"], arrays["data"],
                   arrays["row_of"], arrays["dense"],
                   np.load(non, allow_pickle=False) if non.is_file() else None)


def _shrink(a: NDArray[Any], n: int) -> NDArray[Any]:
    """The first n items of ``a``, releasing the rest in place when ``a`` owns its
    memory (else a copy)."""
    if a.flags.owndata and a.base is None:
        try:
            a.resize(n, refcheck=False)
            return a
        except (ValueError, SystemError):
            pass
    return a[:n].copy()
