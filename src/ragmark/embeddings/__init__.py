"""Embedders: the Embedder protocol, a local sentence-transformers model (the packaged
all-MiniLM-L6-v2 by default) and an on-disk cache of vectors under ``RAGMARK_HOME``.

Importing this package imports neither torch nor sentence-transformers.
"""

from ragmark.embeddings.base import Embedder
from ragmark.embeddings.cache import CachedEmbedder, text_key
from ragmark.embeddings.sentence_transformer import (
    DEFAULT_MODEL_NAME,
    SentenceTransformerEmbedder,
    model_fingerprint,
    resolve_model,
)

__all__ = [
    "DEFAULT_MODEL_NAME",
    "CachedEmbedder",
    "Embedder",
    "Advance",
    "SentenceTransformerEmbedder",
    "model_fingerprint",
    "resolve_model",
    "text_key",
]
