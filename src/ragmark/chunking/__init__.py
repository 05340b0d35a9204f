"""Chunkers: whole document, fixed windows with overlap, sentence packing (pure)."""

from ragmark.chunking.base import Chunker, ChunkerConfigError, chunk_corpus
from ragmark.chunking.fixed import FixedChunker, fixed_spans
from ragmark.chunking.sentence import SentenceChunker, sentence_spans
from ragmark.chunking.whole import WholeChunker

__all__ = [
    "Chunker",
    "ChunkerConfigError",
    "FixedChunker",
    "SentenceChunker",
    "WholeChunker",
    "chunk_corpus",
    "fixed_spans",
    "sentence_spans",
]
