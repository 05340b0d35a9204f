"""The Retriever protocol: index chunks once, then retrieve for a batch of queries."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from ragmark.types import Chunk

Progress = Callable[[int], None]
"""Called with the number of items just finished (drives a progress bar)."""


class Retriever(Protocol):
    """Batch retrieval in the style of bm25s.

    ``index`` calls ``progress`` with the number of chunks just indexed, when it can tell.
    ``retrieve`` returns two (queries x k) arrays: chunk indices into the indexed list
    (``-1`` where fewer than k were found) and float32 scores, best first.
    """

    name: str

    def index(self, chunks: Sequence[Chunk], progress: Progress | None = None) -> None: ...

    def retrieve(
        self, queries: Sequence[str], k: int, progress: Progress | None = None
    ) -> tuple[NDArray[np.int64], NDArray[np.float32]]: ...
