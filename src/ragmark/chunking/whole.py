"""The whole-document chunker: one chunk per document (pure)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ragmark.types import Chunk, Document


@dataclass(frozen=True, slots=True)
class WholeChunker:
    """One chunk per document, with the document id as chunk id.

    The text is ``f"{doc.title}\\n{doc.text}"`` when the title is non-empty, else
    ``doc.text``; ``section`` is None and ``start`` 0, even for a sectioned document.
    """

    name: str = field(default="whole", init=False)

    def chunk(self, doc: Document) -> list[Chunk]:
        text = f"{doc.title}\n{doc.text}" if doc.title else doc.text
        return [Chunk(id=doc.id, doc_id=doc.id, text=text, section=None, start=0)]
