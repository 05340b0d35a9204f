"""``Graded``: a ranked run reduced to what retrieval metrics need.

Every retrieval metric depends only on (a) where the relevant items sit in each ranking
and (b) the grades of all relevant targets. So a run of any depth is held as flat arrays
over its *relevant* retrieved items plus the ideal grades per query: no per-query Python
objects, and metrics become a few vectorised numpy passes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]


@dataclass(frozen=True, slots=True)
class Graded:
    """Relevant retrieved items of a set of rankings, as flat arrays sorted by (query, rank).

    - ``qids``: the queries, in order; arrays below index them by position.
    - ``n_rel``: per query, the number of relevant targets (grade > 0).
    - ``ideal_q``, ``ideal_gain``: the grades (> 0) of every target, grouped by query and
      sorted descending within a query: the ideal ranking of nDCG.
    - ``hit_q``, ``hit_rank``: query index and 1-based rank of each retrieved item that
      matches at least one target (counted by precision).
    - ``hit_new``: how many targets that item reaches for the first time in its ranking
      (1 or 0 when items are documents; a chunk may reach a target already found).
    - ``hit_gain``: the summed grades of those newly reached targets.
    - ``nonrel_q``, ``nonrel_rank``: the retrieved items judged *not* relevant (a qrels
      grade of 0; a negative grade is not a judgment, as in trec_eval), for bpref and
      judged@k; ``n_nonrel``: per query, the judged
      non-relevant documents of its qrels.
    """

    qids: tuple[str, ...]
    n_rel: IntArray
    ideal_q: IntArray
    ideal_gain: FloatArray
    hit_q: IntArray
    hit_rank: IntArray
    hit_new: IntArray
    hit_gain: FloatArray
    nonrel_q: IntArray = field(default_factory=lambda: np.zeros(0, np.int64))
    nonrel_rank: IntArray = field(default_factory=lambda: np.zeros(0, np.int64))
    n_nonrel: IntArray = field(default_factory=lambda: np.zeros(0, np.int64))

    @property
    def n_queries(self) -> int:
        return len(self.qids)

    @classmethod
    def build(
        cls,
        qids: Sequence[str],
        target_grades: Sequence[Sequence[float]],
        hit_q: Sequence[int] | IntArray,
        hit_rank: Sequence[int] | IntArray,
        hit_new: Sequence[int] | IntArray,
        hit_gain: Sequence[float] | FloatArray,
        nonrel_q: Sequence[int] | IntArray = (),
        nonrel_rank: Sequence[int] | IntArray = (),
        n_nonrel: Sequence[int] | IntArray | None = None,
    ) -> Graded:
        """Build from per-query target grades and the hit arrays (in any order), and
        the judged non-relevant retrieved items with each query's count of them."""
        n_q = len(qids)
        grades = [np.asarray(g, dtype=np.float64) for g in target_grades]
        grades = [np.sort(g[g > 0])[::-1] for g in grades]
        n_rel = np.fromiter((len(g) for g in grades), dtype=np.int64, count=n_q)
        ideal_q = np.repeat(np.arange(n_q, dtype=np.int64), n_rel)
        ideal_gain = np.concatenate(grades) if grades else np.zeros(0)
        hq = np.asarray(hit_q, dtype=np.int64)
        hr = np.asarray(hit_rank, dtype=np.int64)
        order = np.lexsort((hr, hq))
        nq = np.asarray(nonrel_q, dtype=np.int64)
        nr = np.asarray(nonrel_rank, dtype=np.int64)
        n_order = np.lexsort((nr, nq))
        return cls(
            qids=tuple(qids),
            n_rel=n_rel,
            ideal_q=ideal_q,
            ideal_gain=ideal_gain.astype(np.float64),
            hit_q=hq[order],
            hit_rank=hr[order],
            hit_new=np.asarray(hit_new, dtype=np.int64)[order],
            hit_gain=np.asarray(hit_gain, dtype=np.float64)[order],
            nonrel_q=nq[n_order],
            nonrel_rank=nr[n_order],
            n_nonrel=(np.zeros(n_q, np.int64) if n_nonrel is None
                      else np.asarray(n_nonrel, dtype=np.int64)),
        )

