"""The fixed-size chunker: character windows with overlap (pure)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ragmark.chunking.base import ChunkerConfigError, Spans, check_size, chunks_from_spans
from ragmark.types import Chunk, Document


def fixed_spans(text: str, size: int, overlap: int = 0) -> Spans:
    """Windows ``(start, end)`` of at most ``size`` characters over ``text``.

    A window normally ends ``size`` characters after its start; when that cuts a word,
    the end moves back to just after the last white space in the final 10% of the
    window, if there is one (and the window still advances). The next window starts
    ``overlap`` characters before the previous end, moved forward to the next word start
    when that lands inside a word (the overlap shrinks, never the coverage); the last
    window ends at the text end.
    Whitespace-only windows are dropped, so every non-space character is covered.

    >>> t = "the quick brown fox jumps over the lazy dog"
    >>> [t[s:e] for s, e in fixed_spans(t, 20, 0)]
    ['the quick brown fox ', 'jumps over the lazy ', 'dog']
    >>> w = "abcdefghijklmnopqr stu"  # the cut moves back so that "stu" stays whole
    >>> [w[s:e] for s, e in fixed_spans(w, 20, 0)]
    ['abcdefghijklmnopqr ', 'stu']
    """
    n = len(text)
    tail = max(1, size // 10)
    spans: Spans = []
    start = 0
    while start < n:
        end = start + size
        if end >= n:
            end = n
        elif not (text[end].isspace() or text[end - 1].isspace()):
            lo = max(end - tail, start + overlap)
            for i in range(end - 2, lo - 1, -1):
                if text[i].isspace():
                    end = i + 1
                    break
        if not text[start:end].isspace():
            spans.append((start, end))
        if end == n:
            break
        start = end - overlap
        if overlap and not (text[start].isspace() or text[start - 1].isspace()):
            # Begin the overlap at a word start rather than inside a word.
            for i in range(start, end):
                if text[i].isspace():
                    start = i + 1
                    break
    return spans


@dataclass(frozen=True, slots=True)
class FixedChunker:
    """Windows of ``size`` characters, each starting ``overlap`` characters before the
    previous one ends (default 500/50); see :func:`fixed_spans` for word boundaries.

    Chunk text is always ``source_text[start:start + len(text)]``.
    """

    size: int = 500
    overlap: int = 50
    name: str = field(default="fixed", init=False)

    def __post_init__(self) -> None:
        check_size(self.size)
        if isinstance(self.overlap, bool) or not isinstance(self.overlap, int):
            raise ChunkerConfigError(f"chunk overlap must be an integer, got {self.overlap!r}")
        if not 0 <= self.overlap < self.size:
            raise ChunkerConfigError(
                f"chunk overlap must be >= 0 and smaller than the chunk size {self.size}, "
                f"got {self.overlap}"
            )

    def chunk(self, doc: Document) -> list[Chunk]:
        return chunks_from_spans(doc, lambda t: fixed_spans(t, self.size, self.overlap))
