"""The Chunker protocol and the helpers every chunker shares (pure)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Protocol, runtime_checkable

from ragmark.errors import ConfigError
from ragmark.types import Chunk, Document

Spans = list[tuple[int, int]]


class ChunkerConfigError(ConfigError, ValueError):
    """A chunker parameter out of range (a ConfigError, and a ValueError for callers)."""


@runtime_checkable
class Chunker(Protocol):
    """Splits a document into chunks.

    Chunk ids are ``f"{doc.id}#{n}"`` with ``n`` the 0-based chunk number within the
    document. A document with ``sections`` is chunked section by section: ``section`` is
    the section index and ``start`` the offset in that section's text; otherwise
    ``section`` is None and ``start`` is the offset in ``doc.text``.
    """

    @property
    def name(self) -> str:
        """The registry name of the chunker ("whole", "fixed", ...)."""
        ...

    def chunk(self, doc: Document) -> list[Chunk]: ...


def _parts(doc: Document) -> list[tuple[int | None, str]]:
    return list(enumerate(doc.sections)) if doc.sections else [(None, doc.text)]


def section_texts(doc: Document) -> list[str]:
    """The texts a chunker splits: each section, or the whole text."""
    return [text for _, text in _parts(doc)]


def chunks_from_spans(doc: Document, spans_of: Callable[[str], Spans]) -> list[Chunk]:
    """Chunks of ``doc`` from a function giving ``(start, end)`` spans of a text.

    Applies the section rule of :class:`Chunker` and numbers the chunks.
    """
    parts = _parts(doc)
    out: list[Chunk] = []
    for section, text in parts:
        for start, end in spans_of(text):
            out.append(
                Chunk(
                    id=f"{doc.id}#{len(out)}",
                    doc_id=doc.id,
                    text=text[start:end],
                    section=section,
                    start=start,
                )
            )
    return out


def chunk_corpus(documents: Iterable[Document], chunker: Chunker) -> list[Chunk]:
    """All chunks of ``documents``, document by document, in order."""
    return [c for doc in documents for c in chunker.chunk(doc)]


def check_size(size: int) -> None:
    """Raise :class:`ChunkerConfigError` unless ``size`` is a positive integer."""
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ChunkerConfigError(f"chunk size must be a positive integer, got {size!r}")
