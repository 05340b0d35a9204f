"""Rerankers: re-score the top_k retrieved chunks of a query; the best top_n go on.

A reranker scores (query, passage) pairs; higher is more relevant. The cross-encoder
uses ``sentence_transformers.CrossEncoder`` on a model folder the user names (no
reranker model ships in a package, so ragmark has no default one). An LLM pointwise
reranker plugs in through the same ``score`` method.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from ragmark.errors import ConfigError, MissingExtraError
from ragmark.libraries import before_import

RERANKER_ENV = "RAGMARK_RERANKER_MODEL"
_LOADED: dict[tuple[str, int], Any] = {}
"""Loaded cross-encoders by (model, max_length): a process (an executor's worker) loads
each once."""


class Reranker(Protocol):
    """Scores (query, passage) pairs; higher is more relevant.

    The runner calls ``score`` once per question with the texts of its ``top_k``
    retrieved chunks and re-orders them by the returned scores. An LLM pointwise
    reranker implements the same method on top of ``ragmark.llm.LLMClient``: one judge
    call per passage (cached, concurrent, retried), the grade as the score; a passage
    whose judgement failed keeps its retrieval order below the judged ones, and the
    failure is counted in the run's notes, never scored as 0.
    """

    name: str

    def score(self, query: str, texts: Sequence[str]) -> NDArray[np.float32]: ...


def unscored_notes(who: str, failures: Counter[str], done: int, what: str, kept: str
                   ) -> list[str]:
    """The run's note on the passages a reranker could not score: how many of all, the
    three commonest reasons, and where they went (``what``: "could not be graded";
    ``kept``: "graded")."""
    failed = sum(failures.values())
    if not failed:
        return []
    why = "; ".join(f"{r} ({n})" for r, n in failures.most_common(3))
    return [f"{who}: {failed} of {failed + done} passages {what} ({why}); they keep their "
            f"retrieval order below the {kept} ones"]


class CrossEncoderReranker:
    """A sentence-transformers cross-encoder loaded from a local folder (or a model name
    the local Hugging Face cache holds). Runs on the CPU with one torch thread unless
    ``threads`` says otherwise."""

    name = "cross-encoder"

    def __init__(
        self,
        model: str | None = None,
        batch_size: int = 32,
        max_length: int = 512,
        threads: int | None = 1,
    ) -> None:
        model = model or os.environ.get(RERANKER_ENV)
        if not model:
            raise ConfigError(
                "the cross-encoder reranker needs a model: set 'model' in the [reranker] "
                f"table of the config, or the environment variable {RERANKER_ENV}, to a "
                "cross-encoder folder (no reranker ships with ragmark)"
            )
        self.model_name = model
        self.batch_size = batch_size
        self.max_length = max_length
        self.threads = threads
        self._model: Any = None

    def __getstate__(self) -> dict[str, Any]:
        """Pickled (for an executor's workers) without the loaded model."""
        return {**self.__dict__, "_model": None}

    def _load(self) -> Any:
        if self._model is None:
            self._model = _LOADED.get((self.model_name, self.max_length))
        if self._model is None:
            before_import("huggingface")
            try:
                import torch
                from sentence_transformers import CrossEncoder
            except ImportError as e:
                raise MissingExtraError(e.name or "sentence-transformers", "dense") from None
            if self.threads:
                torch.set_num_threads(self.threads)
            path = Path(self.model_name).expanduser()
            try:
                self._model = CrossEncoder(
                    str(path) if path.exists() else self.model_name,
                    device="cpu",
                    max_length=self.max_length,
                )
            except (OSError, ValueError) as e:
                raise ConfigError(
                    f"cannot load cross-encoder {self.model_name!r}: {e}"
                ) from None
            _LOADED[(self.model_name, self.max_length)] = self._model
        return self._model

    def score(self, query: str, texts: Sequence[str]) -> NDArray[np.float32]:
        if not texts:
            return np.zeros(0, dtype=np.float32)
        model = self._load()
        pairs = [(query, t) for t in texts]
        out = model.predict(pairs, batch_size=self.batch_size, show_progress_bar=False)
        return np.asarray(out, dtype=np.float32).reshape(len(texts))
