"""``answer_similarity``: the cosine of the answer's and the expected answer's
embeddings (RAGAS's semantic similarity), with the packaged all-MiniLM-L6-v2 through the
embedding cache, offline; or, when ``RAGMARK_SIMILARITY_BASE_URL`` and
``RAGMARK_SIMILARITY_MODEL`` are set (optionally ``RAGMARK_SIMILARITY_PROVIDER``, default
openai, and ``RAGMARK_SIMILARITY_API_KEY_ENV``), with that embedding endpoint. Vectors are
unit length, so the cosine is their dot product; it lies in [-1, 1] (near 1 for
paraphrases). Each value's details name the model. Missing without an expected answer or
for an empty answer, never 0."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from ragmark.embeddings.api import APIEmbedder, EmbeddingModel
from ragmark.embeddings.cache import CachedEmbedder
from ragmark.embeddings.sentence_transformer import SentenceTransformerEmbedder
from ragmark.types import Score

NAME = "answer_similarity"


def similarity_embedder() -> Any:
    """The embedder of answer_similarity (the packaged MiniLM, cached); a
    MissingExtraError naming the ``dense`` extra when it is not installed (raised before
    any work when the metric is asked for)."""
    env = {k: os.environ.get(f"RAGMARK_SIMILARITY_{k.upper()}", "").strip() or None
           for k in ("base_url", "model", "provider", "api_key_env")}
    if env["base_url"] or env["model"]:
        return CachedEmbedder(APIEmbedder(EmbeddingModel(
            provider=env["provider"] or "openai", base_url=env["base_url"], model=env["model"],
            api_key_env=env["api_key_env"], batch_size=64)))
    return CachedEmbedder(SentenceTransformerEmbedder())


def answer_similarity(answers: Sequence[str | None], expected: Sequence[str | None],
                      embedder: Any = None) -> list[Score]:
    """Each pair's cosine, or missing with the reason."""
    out: list[Score] = []
    todo: list[int] = []
    for i, (a, e) in enumerate(zip(answers, expected, strict=True)):
        if e is None or not e.strip():
            out.append(Score.missing("no expected_answer for this question"))
        elif a is None or not a.strip():
            out.append(Score.missing("empty answer"))
        else:
            out.append(Score(0.0))
            todo.append(i)
    if todo:
        emb = embedder or similarity_embedder()
        va = emb.encode([answers[i] for i in todo])
        vb = emb.encode([expected[i] for i in todo])
        cos = np.clip((np.asarray(va, np.float64) * np.asarray(vb, np.float64)).sum(axis=1),
                      -1.0, 1.0)
        for i, c in zip(todo, cos, strict=True):
            out[i] = Score(float(c), details={"model": emb.model_id})
    return out
