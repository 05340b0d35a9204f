"""Dense retrieval: chunk and query embeddings, inner-product (cosine) top-k.

Embeddings come from a local sentence-transformers model (the packaged
all-MiniLM-L6-v2 by default) through the on-disk cache under ``RAGMARK_HOME``, so a
second run over the same chunks and questions encodes nothing. The search is exact:
blocked numpy (``index = "exact"``, the default, faster than FAISS at SciFact size) or
FAISS ``IndexFlatIP`` (``index = "faiss"``, the ``ragmark-eval[faiss]`` extra).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ragmark.embeddings.api import EmbeddingModel
from ragmark.embeddings.base import Embedder
from ragmark.embeddings.cache import CachedEmbedder
from ragmark.errors import ConfigError, MissingExtraError, RagmarkError
from ragmark.progress import Advance
from ragmark.registry import Table
from ragmark.retrieval.topk import QUERY_BLOCK, exact_top_k, faiss_index, faiss_top_k
from ragmark.types import Chunk

INDEXES = ("exact", "faiss")


def _positive_int(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"dense: {name} must be a positive integer, got {value!r}")


class DenseRetriever:
    """Embeds chunks and queries; returns the chunks with the highest cosine similarity.

    ``embedder``: an :class:`Embedder`, or the :class:`EmbeddingModel` to make one from
    (None: the packaged all-MiniLM-L6-v2 on ``threads`` threads; a config's ``[retriever]``
    table names it, see :class:`DenseTable`). ``threads``: CPU threads for encoding
    (torch, see :class:`~ragmark.embeddings.SentenceTransformerEmbedder`) and for the
    search (BLAS and OpenMP, through threadpoolctl when it is installed); both settings
    are global to the process, so they are set for the duration of each call and then
    restored (``None`` leaves them alone). On a shared 2-core machine, two BLAS threads
    made a one-query search 25x slower whenever another process was busy. ``index``:
    ``"exact"`` (numpy, ``block_size`` corpus rows at a time) or ``"faiss"``.
    ``cache``: keep the vectors in ``$RAGMARK_HOME/embeddings``.

    Results are ordered by score descending, then chunk index ascending (the position in
    the indexed list), so equal scores come back in a deterministic order.
    """

    name = "dense"

    def __init__(self, embedder: Embedder | EmbeddingModel | None = None, *,
                 index: str = "exact", block_size: int = 4096, threads: int | None = 1,
                 cache: bool = True) -> None:
        if index not in INDEXES:
            raise ConfigError(f"dense: unknown index {index!r}; choices: {', '.join(INDEXES)}")
        if isinstance(embedder, EmbeddingModel):
            _positive_int("batch_size", embedder.batch_size)
        _positive_int("block_size", block_size)
        if threads is not None:
            _positive_int("threads", threads)
        if index == "faiss" and importlib.util.find_spec("faiss") is None:
            raise MissingExtraError("faiss-cpu", "faiss")
        made: Embedder = (embedder if embedder is not None
                          and not isinstance(embedder, EmbeddingModel)
                          else (embedder or EmbeddingModel(threads=threads)).make())
        self.embedder: Embedder = CachedEmbedder(made) if cache else made
        self.index_kind = index
        self.block_size = block_size
        self.threads = threads
        self._pools: Any = None  # threadpoolctl controller, found at the first search
        self._vectors: NDArray[np.float32] | None = None
        self._faiss: Any = None

    def index(self, chunks: Sequence[Chunk], progress: Advance | None = None) -> None:
        """Embed every chunk's text (``progress`` counts chunks)."""
        if not chunks:
            raise ConfigError("dense: nothing to index (no chunks)")
        vectors = self._embed([c.text for c in chunks], progress)
        self._vectors = vectors
        self._faiss = faiss_index(vectors) if self.index_kind == "faiss" else None

    def index_state(self) -> dict[str, Any]:
        """What shapes the index: the embedding model's identity and the index kind."""
        return {"model": self.embedder.model_id, "index": self.index_kind}

    def save(self, folder: Path) -> None:
        """The chunk vectors as one ``.npy`` array (a FAISS index is rebuilt from it)."""
        if self._vectors is None:
            raise RuntimeError("index() must be called before save()")
        np.save(folder / "vectors.npy", self._vectors, allow_pickle=False)

    def load(self, folder: Path) -> None:
        vectors = np.load(folder / "vectors.npy", allow_pickle=False)
        self._vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        self._faiss = faiss_index(self._vectors) if self.index_kind == "faiss" else None

    def _embed(self, texts: list[str], progress: Advance | None = None) -> NDArray[np.float32]:
        vectors = np.ascontiguousarray(self.embedder.encode(texts, progress), dtype=np.float32)
        if vectors.ndim != 2 or len(vectors) != len(texts) or not np.isfinite(vectors).all():
            raise RagmarkError(
                f"dense: the embedder {self.embedder.model_id!r} returned "
                f"{'non-finite values' if vectors.ndim == 2 else f'shape {vectors.shape}'} "
                f"for {len(texts)} texts"
            )
        return vectors

    def __getstate__(self) -> dict[str, Any]:
        """Pickled (for an executor's workers) without the thread controller and the
        FAISS index, which is rebuilt from the vectors."""
        return {**self.__dict__, "_pools": None, "_faiss": None}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        if self.index_kind == "faiss" and self._vectors is not None:
            self._faiss = faiss_index(self._vectors)

    def prepare(self, queries: Sequence[str]) -> NDArray[np.float32]:
        """The query vectors (through the embedding cache)."""
        return self._embed(list(queries))

    def retrieve(
        self, queries: Sequence[str], k: int, progress: Advance | None = None
    ) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
        """Top ``k`` chunk indices and cosine scores per query (``-1``/``-inf`` padded
        when fewer than k chunks are indexed); ``progress`` counts queries."""
        if self._vectors is None:
            raise RuntimeError("index() must be called before retrieve()")
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ConfigError(f"dense: k must be a positive integer, got {k!r}")
        if not queries:
            return (np.zeros((0, k), dtype=np.int64), np.zeros((0, k), dtype=np.float32))
        return self.retrieve_prepared(queries, self.prepare(queries), k, progress)

    def retrieve_prepared(
        self, queries: Sequence[str], q: NDArray[np.float32], k: int,
        progress: Advance | None = None,
    ) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
        """:meth:`retrieve` from the query vectors ``q`` (what :meth:`prepare` gave)."""
        if self._vectors is None:
            raise RuntimeError("index() must be called before retrieve()")
        if q.shape[1] != self._vectors.shape[1]:
            raise RagmarkError(
                f"dense: query vectors have {q.shape[1]} dimensions, chunk vectors "
                f"{self._vectors.shape[1]}"
            )
        ids = np.empty((len(q), k), dtype=np.int64)
        scores = np.empty((len(q), k), dtype=np.float32)
        with self._limit_threads():
            for start in range(0, len(q), QUERY_BLOCK):
                part = q[start : start + QUERY_BLOCK]
                if self._faiss is not None:
                    got = faiss_top_k(self._faiss, part, k)
                else:
                    got = exact_top_k(part, self._vectors, k, self.block_size)
                ids[start : start + len(part)], scores[start : start + len(part)] = got
                if progress is not None:
                    progress(len(part))
        return ids, scores

    def _limit_threads(self) -> AbstractContextManager[Any]:
        """BLAS/OpenMP limited to ``threads`` for a block (restored after it)."""
        if self.threads is None:
            return nullcontext()
        if self._pools is None:
            try:
                from threadpoolctl import ThreadpoolController
            except ImportError:
                self._pools = False
            else:
                self._pools = ThreadpoolController()  # after faiss/numpy are loaded
        if self._pools is False:
            return nullcontext()
        return self._pools.limit(limits=self.threads)  # type: ignore[no-any-return]


@dataclass(frozen=True, kw_only=True)
class DenseTable(EmbeddingModel, Table):
    """The ``[retriever]`` table of ``name = "dense"``: the embedding model's keys
    (:class:`~ragmark.embeddings.api.EmbeddingModel`), ``index``, ``block_size`` and
    ``cache`` (see :class:`DenseRetriever`)."""

    index: str = "exact"
    block_size: int = 4096
    cache: bool = True

    def build(self) -> DenseRetriever:
        return DenseRetriever(self.embedding_model(), index=self.index,
                              block_size=self.block_size, threads=self.threads,
                              cache=self.cache)

