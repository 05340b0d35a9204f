"""The semantic chunker: split where adjacent sentences stop being about the same thing.

Each text (a document, or each section of a sectioned one) is split into sentences
(:func:`~ragmark.text.split_sentences`); the sentences are embedded (through the
on-disk embedding cache), and a new chunk starts where the cosine distance between two
adjacent sentences is an outlier for that text: above mean + ``threshold`` standard
deviations of the text's adjacent distances. :func:`semantic_boundaries` is that rule,
pure; the chunker adds the size limits.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ragmark.chunking.base import ChunkerConfigError, Spans, chunks_from_spans, section_texts
from ragmark.chunking.fixed import fixed_spans
from ragmark.embeddings.api import EmbeddingModel
from ragmark.registry import Table
from ragmark.text import split_sentences
from ragmark.types import Chunk, Document

if TYPE_CHECKING:
    from ragmark.embeddings.base import Embedder


def semantic_boundaries(embeddings: ArrayLike, threshold: float) -> list[int]:
    """Sentence indices where a new chunk starts (ascending, each in ``1..n-1``).

    ``embeddings`` is an ``(n, dim)`` array, one row per sentence in order. With
    ``d[i]`` the cosine distance between sentences ``i - 1`` and ``i``, a chunk starts
    at ``i`` when ``d[i] > mean(d) + threshold * std(d)`` (population std over the
    text's n - 1 distances). Fewer than two distances, or distances that are all equal,
    give no boundary. A zero vector is at distance 1 from everything.

    >>> semantic_boundaries([[1, 0], [1, 0.1], [0.9, 0.1], [1, 0], [0, 1], [0.1, 1]], 1.5)
    [4]
    """
    e = np.asarray(embeddings, dtype=np.float64)
    if e.ndim != 2:
        raise ValueError(f"embeddings must be a 2-D array, got shape {e.shape}")
    if not threshold > 0:
        raise ValueError(f"threshold must be > 0, got {threshold!r}")
    if len(e) < 3:
        return []
    norms = np.linalg.norm(e, axis=1, keepdims=True)
    unit = np.divide(e, norms, out=np.zeros_like(e), where=norms > 0)
    dist = 1.0 - np.einsum("ij,ij->i", unit[:-1], unit[1:])
    std = float(dist.std())
    if not std > 1e-12:
        return []
    cut = float(dist.mean()) + threshold * std
    return [int(i) + 1 for i in np.flatnonzero(dist > cut)]


def pack_sentences(
    text: str,
    sentences: Sequence[tuple[int, int]],
    boundaries: Sequence[int],
    max_chars: int,
    min_chars: int = 0,
) -> Spans:
    """Spans of consecutive sentences: a span ends at each boundary (unless the span is
    still shorter than ``min_chars``) and before a sentence that would take it past
    ``max_chars``; a sentence longer than ``max_chars`` is cut by :func:`fixed_spans`.
    A last span shorter than ``min_chars`` joins the one before when they fit together.
    ``sentences`` are ``(start, end)`` offsets in ``text``, in order.

    >>> t = "One. Two. Three an."
    >>> [t[s:e] for s, e in pack_sentences(t, [(0, 4), (5, 9), (10, 19)], [2], 100)]
    ['One. Two.', 'Three an.']
    """
    starts = set(boundaries)
    spans: Spans = []
    cur: tuple[int, int] | None = None
    for i, (s, e) in enumerate(sentences):
        if cur is not None and (
            (i in starts and cur[1] - cur[0] >= min_chars) or e - cur[0] > max_chars
        ):
            spans.append(cur)
            cur = None
        if e - s > max_chars:
            spans.extend((s + a, s + b) for a, b in fixed_spans(text[s:e], max_chars, 0))
        elif cur is None:
            cur = (s, e)
        else:
            cur = (cur[0], e)
    if cur is not None:
        if spans and cur[1] - cur[0] < min_chars and cur[1] - spans[-1][0] <= max_chars:
            cur = (spans.pop()[0], cur[1])
        spans.append(cur)
    return spans


class SemanticChunker:
    """Chunks made of consecutive sentences, split at semantic breaks (see
    :func:`semantic_boundaries`) and at ``max_chars`` characters.

    ``threshold``: standard deviations above the mean adjacent-sentence distance that
    make a break; any positive number is accepted, 1.5 to 3.0 is the useful range
    (lower splits more). ``min_chars``: a break is ignored while the current chunk is
    shorter than this (no one-line chunks), and a short last chunk joins the previous
    one. ``embedder``: an :class:`~ragmark.embeddings.Embedder`, or the
    :class:`~ragmark.embeddings.api.EmbeddingModel` to make one from (None: the packaged
    all-MiniLM-L6-v2; a config's ``[chunker]`` table names it, see
    :class:`SemanticTable`); ``cache``: keep its vectors in ``$RAGMARK_HOME/embeddings``.

    Chunks follow the :class:`~ragmark.chunking.Chunker` rules (ids ``doc#n``, section
    and offset); as with the sentence chunker, white space between chunks belongs to
    neither and the title is not part of the text.
    """

    name = "semantic"

    def __init__(self, threshold: float = 2.0, max_chars: int = 2000, min_chars: int = 100,
                 embedder: Embedder | EmbeddingModel | None = None, cache: bool = True
                 ) -> None:
        if (
            isinstance(threshold, bool)
            or not isinstance(threshold, int | float)
            or not math.isfinite(threshold)
            or threshold <= 0
        ):
            raise ChunkerConfigError(
                f"semantic threshold must be a positive number of standard deviations "
                f"(1.5 to 3.0 is the useful range), got {threshold!r}"
            )
        for key, value in (("max_chars", max_chars), ("min_chars", min_chars)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ChunkerConfigError(f"semantic {key} must be an integer >= 0, got {value!r}")
        if max_chars < 1 or min_chars >= max_chars:
            raise ChunkerConfigError(
                f"semantic max_chars must be positive and larger than min_chars "
                f"({min_chars}), got {max_chars}"
            )
        self.threshold = float(threshold)
        self.max_chars, self.min_chars = max_chars, min_chars
        made: Embedder = (embedder if embedder is not None
                          and not isinstance(embedder, EmbeddingModel)
                          else (embedder or EmbeddingModel()).make())
        if cache:
            from ragmark.embeddings.cache import CachedEmbedder

            made = CachedEmbedder(made)
        self.embedder: Embedder = made

    def spans(self, text: str) -> Spans:
        """The chunk spans of one text."""
        sentences = split_sentences(text)
        if len(sentences) < 3:
            return pack_sentences(text, sentences, [], self.max_chars, self.min_chars)
        vectors = self.embedder.encode([text[s:e] for s, e in sentences])
        cuts = semantic_boundaries(vectors, self.threshold)
        return pack_sentences(text, sentences, cuts, self.max_chars, self.min_chars)

    def sentence_groups(self, docs: Sequence[Document]) -> list[list[str]]:
        """The sentences :meth:`spans` embeds, one group per section text that has at
        least three of them."""
        groups = []
        for doc in docs:
            for text in section_texts(doc):
                sentences = split_sentences(text)
                if len(sentences) >= 3:
                    groups.append([text[s:e] for s, e in sentences])
        return groups

    def warm(self, docs: Sequence[Document]) -> None:
        """Embed the sentences of many documents at once (spread over the executor's
        workers), into the cache that :meth:`chunk` then reads: the same vectors as
        chunking them one by one."""
        encode_groups = getattr(self.embedder, "encode_groups", None)
        if encode_groups is None:
            return
        groups = self.sentence_groups(docs)
        if groups:
            encode_groups(groups)

    def chunk(self, doc: Document) -> list[Chunk]:
        return chunks_from_spans(doc, self.spans)


@dataclass(frozen=True, kw_only=True)
class SemanticTable(EmbeddingModel, Table):
    """The ``[chunker]`` table of ``name = "semantic"``: ``threshold``, ``max_chars``,
    ``min_chars``, the embedding model's keys
    (:class:`~ragmark.embeddings.api.EmbeddingModel`) and ``cache`` (see
    :class:`SemanticChunker`)."""

    threshold: float = 2.0
    max_chars: int = 2000
    min_chars: int = 100
    cache: bool = True

    def build(self) -> SemanticChunker:
        return SemanticChunker(self.threshold, self.max_chars, self.min_chars,
                               self.embedding_model(), self.cache)

