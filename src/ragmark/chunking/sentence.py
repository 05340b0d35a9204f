"""The sentence-packing chunker (pure)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ragmark.chunking.base import Spans, check_size, chunks_from_spans
from ragmark.chunking.fixed import fixed_spans
from ragmark.text import split_sentences
from ragmark.types import Chunk, Document


def sentence_spans(text: str, size: int) -> Spans:
    """Consecutive sentences (:func:`~ragmark.text.split_sentences`) packed greedily into
    spans of at most ``size`` characters, from the first sentence's start to the last
    one's end. A sentence longer than ``size`` is cut by :func:`fixed_spans` (no
    overlap), so no span is ever longer than ``size``.

    >>> t = "One two. Three four. Five."
    >>> [t[s:e] for s, e in sentence_spans(t, 20)]
    ['One two. Three four.', 'Five.']
    """
    spans: Spans = []
    cur: tuple[int, int] | None = None
    for s, e in split_sentences(text):
        if e - s > size:
            if cur is not None:
                spans.append(cur)
                cur = None
            spans.extend((s + a, s + b) for a, b in fixed_spans(text[s:e], size, 0))
        elif cur is None:
            cur = (s, e)
        elif e - cur[0] <= size:
            cur = (cur[0], e)
        else:
            spans.append(cur)
            cur = (s, e)
    if cur is not None:
        spans.append(cur)
    return spans


@dataclass(frozen=True, slots=True)
class SentenceChunker:
    """Packs whole sentences into chunks of at most ``size`` characters (default 500).

    A sentence longer than ``size`` is split like :class:`FixedChunker` with no overlap.
    White space between two chunks belongs to neither.
    """

    size: int = 500
    name: str = field(default="sentence", init=False)

    def __post_init__(self) -> None:
        check_size(self.size)

    def chunk(self, doc: Document) -> list[Chunk]:
        return chunks_from_spans(doc, lambda t: sentence_spans(t, self.size))
