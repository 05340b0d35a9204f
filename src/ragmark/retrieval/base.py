"""The Retriever protocol: index chunks once, then retrieve for a batch of queries."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from ragmark.progress import Advance
from ragmark.types import Chunk

"""Called with the number of items just finished (drives a progress bar)."""


class Retriever(Protocol):
    """Batch retrieval in the style of bm25s.

    ``index`` calls ``progress`` with the number of chunks just indexed, when it can tell.
    ``retrieve`` returns two (queries x k) arrays: chunk indices into the indexed list
    (``-1`` where fewer than k were found) and float32 scores, best first.
    """

    name: str

    def index(self, chunks: Sequence[Chunk], progress: Advance | None = None) -> None: ...

    def retrieve(
        self, queries: Sequence[str], k: int, progress: Advance | None = None
    ) -> tuple[NDArray[np.int64], NDArray[np.float32]]: ...


def prepare(retriever: Retriever, queries: Sequence[str]) -> object:
    """What a retriever computes from the query texts before searching (a dense
    retriever's query vectors, from the embedding cache), or None. Done on the driver,
    so a worker searching a shard of queries needs no model and every vector lands in
    the driver's cache."""
    fn = getattr(retriever, "prepare", None)
    return None if fn is None else fn(queries)


def retrieve_prepared(retriever: Retriever, queries: Sequence[str], prepared: object,
                      k: int) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
    """``retriever.retrieve(queries, k)`` from what :func:`prepare` returned for the same
    queries (rows sliced alike): the same rankings, whatever the slicing."""
    fn = getattr(retriever, "retrieve_prepared", None)
    if prepared is None or fn is None:
        return retriever.retrieve(queries, k)
    return fn(queries, prepared, k)  # type: ignore[no-any-return]


def slice_prepared(prepared: object, start: int, stop: int) -> object:
    """The rows ``start:stop`` of what :func:`prepare` returned (arrays, lists of them,
    None)."""
    if prepared is None:
        return None
    if isinstance(prepared, list):
        return [slice_prepared(p, start, stop) for p in prepared]
    return prepared[start:stop]  # type: ignore[index]
