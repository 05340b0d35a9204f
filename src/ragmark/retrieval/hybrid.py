"""Hybrid retrieval: two or more retrievers over the same chunks, their rankings fused.

Each retriever returns its ``candidates`` best chunks per query; reciprocal-rank fusion
(``fusion = "rrf"``, k = 60) or a weighted sum of per-query normalised scores
(``fusion = "weighted"``) merges them, and the ``k`` best fused chunks come back.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ragmark.errors import ConfigError
from ragmark.progress import Advance
from ragmark.registry import registry
from ragmark.retrieval.base import Retriever, prepare, retrieve_prepared
from ragmark.retrieval.fusion import DEFAULT_K, NORMS, rrf_arrays, weighted_sum_arrays
from ragmark.types import Chunk

FUSIONS = ("rrf", "weighted")


class HybridRetriever:
    """Fuse the rankings of several retrievers (built by name from the registry)."""

    name = "hybrid"

    def __init__(
        self,
        retrievers: Sequence[Mapping[str, Any] | Retriever] = ({"name": "bm25"},
                                                                {"name": "dense"}),
        fusion: str = "rrf",
        k: float = DEFAULT_K,
        weights: Sequence[float] | None = None,
        norm: str = "minmax",
        candidates: int = 100,
    ) -> None:
        if fusion not in FUSIONS:
            raise ConfigError(f"hybrid: unknown fusion {fusion!r}; known: {', '.join(FUSIONS)}")
        if norm not in NORMS:
            raise ConfigError(f"hybrid: unknown norm {norm!r}; known: {', '.join(NORMS)}")
        if len(retrievers) < 2:
            raise ConfigError(
                f"hybrid: 'retrievers' needs at least 2 retrievers, got {len(retrievers)}"
            )
        if weights is not None and len(weights) != len(retrievers):
            raise ConfigError(
                f"hybrid: {len(weights)} weights for {len(retrievers)} retrievers; "
                "give one weight per retriever"
            )
        if isinstance(k, bool) or not k > 0:
            raise ConfigError(f"hybrid: RRF k must be > 0 (usually 60), got {k!r}")
        if isinstance(candidates, bool) or not isinstance(candidates, int) or candidates < 1:
            raise ConfigError(f"hybrid: candidates must be a positive integer, got {candidates!r}")
        reg = registry("retriever")
        self.retrievers: list[Retriever] = []
        for spec in retrievers:
            if isinstance(spec, Mapping):
                params = dict(spec)
                name = params.pop("name", None)
                if not isinstance(name, str):
                    raise ConfigError("hybrid: each entry of 'retrievers' needs a 'name'")
                self.retrievers.append(reg.create(name, **params))
            else:
                self.retrievers.append(spec)
        self.fusion, self.k, self.norm = fusion, float(k), norm
        self.weights = list(weights) if weights is not None else None
        self.candidates = candidates
        self.index_passes = len(self.retrievers)
        """How many times ``index`` reports each chunk to ``progress``."""
        self._n = 0

    def index(self, chunks: Sequence[Chunk], progress: Advance | None = None) -> None:
        for r in self.retrievers:
            r.index(chunks, progress=progress)
        self._n = len(chunks)

    @property
    def _cacheable(self) -> bool:
        return all(hasattr(r, m) for r in self.retrievers
                   for m in ("index_state", "save", "load"))

    def index_state(self) -> dict[str, Any] | None:
        """The parts' index states (fusion settings do not change the indexes); None
        when a part cannot save its index."""
        if not self._cacheable:
            return None
        return {"parts": [{"name": r.name, "state": r.index_state()}  # type: ignore[attr-defined]
                          for r in self.retrievers]}

    def save(self, folder: Path) -> None:
        for i, r in enumerate(self.retrievers):
            (folder / str(i)).mkdir()
            r.save(folder / str(i))  # type: ignore[attr-defined]
        (folder / "hybrid.json").write_text(json.dumps({"n": self._n}), encoding="utf-8")

    def load(self, folder: Path) -> None:
        for i, r in enumerate(self.retrievers):
            r.load(folder / str(i))  # type: ignore[attr-defined]
        self._n = int(json.loads((folder / "hybrid.json").read_text("utf-8"))["n"])

    def prepare(self, queries: Sequence[str]) -> list[object]:
        """Each part's prepared queries (:func:`ragmark.retrieval.base.prepare`)."""
        return [prepare(r, queries) for r in self.retrievers]

    def retrieve(
        self, queries: Sequence[str], k: int, progress: Advance | None = None
    ) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
        return self.retrieve_prepared(queries, self.prepare(queries), k, progress)

    def retrieve_prepared(
        self, queries: Sequence[str], prepared: Sequence[object], k: int,
        progress: Advance | None = None,
    ) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
        depth = max(k, self.candidates)
        indices, scores = [], []
        for r, p in zip(self.retrievers, prepared, strict=True):
            i, s = retrieve_prepared(r, queries, p, depth)
            indices.append(i)
            scores.append(np.where(i >= 0, s, 0.0).astype(np.float64))
        if self.fusion == "rrf":
            ids, fused = rrf_arrays(indices, scores, k=self.k, weights=self.weights, depth=k)
        else:
            ids, fused = weighted_sum_arrays(
                indices, scores, weights=self.weights, norm=self.norm, depth=k
            )
        if progress is not None:
            progress(len(queries))
        return ids, fused.astype(np.float32)
