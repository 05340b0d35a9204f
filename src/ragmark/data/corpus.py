"""Corpora: a JSONL file of documents, and ``load_corpus`` that picks the reader."""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType

from ragmark.data._fields import (
    NON_EMPTY_STRING,
    as_object,
    check_id,
    get_optional_string,
    get_string,
)
from ragmark.data.files import Where, base_suffix, describe, iter_jsonl, missing_error, quote
from ragmark.data.folder import load_text_folder
from ragmark.data.formats.open_rag import is_open_rag_folder, load_open_rag_corpus
from ragmark.data.leniency import Leniency
from ragmark.errors import DataError
from ragmark.types import Corpus, Document

CORPUS_FORMATS = (
    "expected a folder of .txt or .md files, a JSONL file of {id, text} documents "
    "(.jsonl or .jsonl.gz), "
    "a BEIR folder (corpus.jsonl) or an Open RAG Benchmark folder (corpus/)"
)


EMPTY_DOCUMENTS = "empty documents left out of the index (kept in the ground truth)"
SAME_DUPLICATES = "documents repeated with the same id and text, loaded once"


ID_FIELDS = ("_id", "id", "docid")
"""A document's id: BEIR's ``_id``, ``id``, or ``docid`` as MS MARCO v2.1's segmented
corpus (TREC RAG's) writes it, whose text is its ``segment``."""


def _document(value: object, where: Where, lenient: Leniency) -> Document | str:
    """The document of one line, or its id when it is empty (title and text both empty
    or blank): left out of the index with a warning."""
    obj = as_object(value, where)
    id_field = next((f for f in ID_FIELDS if f in obj), "id")
    if id_field not in obj:
        raise where.error(f"missing; expected {NON_EMPTY_STRING} (or '_id' as in BEIR, "
                          "'docid' as in MS MARCO's segments)", "id")
    doc_id = check_id(obj[id_field], where, id_field, lenient)
    title = get_optional_string(obj, "title", where, allow_empty=True) or ""
    text_field = "segment" if "text" not in obj and "segment" in obj else "text"
    text = get_string(obj, text_field, where, allow_empty=True)
    if not text.strip() and not title.strip():
        lenient.warn(EMPTY_DOCUMENTS, f"{quote(doc_id)} ({where.short()})", where.error(
            f"document {quote(doc_id)} is empty: expected {NON_EMPTY_STRING} (or a non-empty "
            f"'title'), got {describe(text)}", "text"))
        return doc_id
    metadata = obj.get("metadata")
    if metadata is None:
        metadata = {}
    elif not isinstance(metadata, dict):
        raise where.error(f"expected an object, got {describe(metadata)}", "metadata")
    return Document(id=doc_id, text=text, title=title, metadata=MappingProxyType(metadata))


def load_jsonl_corpus(path: Path, lenient: Leniency | None = None) -> Corpus:
    """One document a line: ``{"id" or "_id", "text", "title"?, "metadata"?}``, or MS
    MARCO v2.1's segments ``{"docid", "segment", "title"?, ...}`` (the file may be
    gzip-compressed, ``.jsonl.gz``). Empty documents are left out with a warning;
    a repeated id is an error unless its text is the same (then loaded once, warned)."""
    lenient = lenient or Leniency()
    documents: dict[str, Document] = {}
    first: dict[str, Where] = {}
    empty: dict[str, None] = {}
    for where, value in iter_jsonl(path, lenient.encoding):
        document = _document(value, where, lenient)
        doc_id = document if isinstance(document, str) else document.id
        if doc_id in first:
            field = next((f for f in ID_FIELDS if f in value), "id")
            earlier = documents.get(doc_id)
            same = (doc_id in empty and isinstance(document, str)) or (
                isinstance(document, Document) and earlier == document)
            dup = f"duplicate id {quote(doc_id)} (first at {first[doc_id].ref()})"
            if not same:
                raise where.error(dup + " with a different text", field)
            lenient.warn(SAME_DUPLICATES, f"{quote(doc_id)} ({where.short()})",
                         where.error(dup, field))
            continue
        first[doc_id] = where
        if isinstance(document, str):
            empty[doc_id] = None
        else:
            documents[doc_id] = document
    if not documents:
        raise DataError("the corpus is empty: no documents"
                        + (f" ({len(empty)} empty ones)" if empty else ""), file=str(path))
    return Corpus(documents=tuple(documents.values()), source=str(path),
                  left_out=frozenset(empty))


def open_corpus(path: str | Path, lenient: Leniency | None = None) -> tuple[Corpus, str]:
    """The corpus at ``path`` and the chunker that suits it (``whole`` or ``fixed``)."""
    path = Path(path)
    lenient = lenient or Leniency()
    if path.is_dir():
        for name in ("corpus.jsonl", "corpus.jsonl.gz"):
            if (path / name).is_file():
                return load_jsonl_corpus(path / name, lenient), "whole"
        if is_open_rag_folder(path):
            return load_open_rag_corpus(path / "corpus", lenient.encoding), "fixed"
        return load_text_folder(path, lenient), "fixed"
    if not path.exists():
        raise missing_error(path)
    if base_suffix(path) == ".jsonl":
        return load_jsonl_corpus(path, lenient), "fixed"
    raise DataError(f"not a corpus; {CORPUS_FORMATS}", file=str(path))


def load_corpus(path: str | Path, lenient: Leniency | None = None) -> Corpus:
    """A corpus from a folder of text files, a JSONL file of documents (``.jsonl`` or
    ``.jsonl.gz``), a BEIR folder (its corpus.jsonl) or an Open RAG Benchmark folder
    (its corpus/)."""
    return open_corpus(path, lenient)[0]
