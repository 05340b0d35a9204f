"""Corpora: a JSONL file of documents, and ``load_corpus`` that picks the reader."""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType

from ragmark.data._fields import (
    NON_EMPTY_STRING,
    as_object,
    check_string,
    get_optional_string,
    get_string,
)
from ragmark.data._read import Where, describe, iter_jsonl, missing_error, quote
from ragmark.data.folder import load_text_folder
from ragmark.data.openrag import is_open_rag_folder, load_open_rag_corpus
from ragmark.errors import DataError
from ragmark.types import Corpus, Document

CORPUS_FORMATS = (
    "expected a folder of .txt or .md files, a JSONL file of {id, text} documents, "
    "a BEIR folder (corpus.jsonl) or an Open RAG Benchmark folder (corpus/)"
)


def _document(value: object, where: Where) -> Document:
    obj = as_object(value, where)
    id_field = "_id" if "_id" in obj else "id"
    if id_field not in obj:
        raise where.error(f"missing; expected {NON_EMPTY_STRING} (or '_id' as in BEIR)", "id")
    doc_id = check_string(obj[id_field], where, id_field)
    title = get_optional_string(obj, "title", where, allow_empty=True) or ""
    text = get_string(obj, "text", where, allow_empty=True)
    if not text.strip() and not title.strip():
        got = describe(text)
        raise where.error(
            f"expected {NON_EMPTY_STRING} (or a non-empty 'title'), got {got}", "text"
        )
    metadata = obj.get("metadata")
    if metadata is None:
        metadata = {}
    elif not isinstance(metadata, dict):
        raise where.error(f"expected an object, got {describe(metadata)}", "metadata")
    return Document(id=doc_id, text=text, title=title, metadata=MappingProxyType(metadata))


def load_jsonl_corpus(path: Path) -> Corpus:
    """One document a line: ``{"id" or "_id", "text", "title"?, "metadata"?}``."""
    documents: list[Document] = []
    first: dict[str, Where] = {}
    for where, value in iter_jsonl(path):
        document = _document(value, where)
        if document.id in first:
            field = "_id" if "_id" in value else "id"
            dup = f"duplicate id {quote(document.id)} (first at {first[document.id].ref()})"
            raise where.error(dup, field)
        first[document.id] = where
        documents.append(document)
    if not documents:
        raise DataError("the corpus is empty: no documents", file=str(path))
    return Corpus(documents=tuple(documents), source=str(path))


def open_corpus(path: str | Path) -> tuple[Corpus, str]:
    """The corpus at ``path`` and the chunker that suits it (``whole`` or ``fixed``)."""
    path = Path(path)
    if path.is_dir():
        if (path / "corpus.jsonl").is_file():
            return load_jsonl_corpus(path / "corpus.jsonl"), "whole"
        if is_open_rag_folder(path):
            return load_open_rag_corpus(path / "corpus"), "fixed"
        return load_text_folder(path), "fixed"
    if not path.exists():
        raise missing_error(path)
    if path.suffix.lower() == ".jsonl":
        return load_jsonl_corpus(path), "fixed"
    raise DataError(f"not a corpus; {CORPUS_FORMATS}", file=str(path))


def load_corpus(path: str | Path) -> Corpus:
    """A corpus from a folder of text files, a JSONL file of documents, a BEIR folder
    (its corpus.jsonl) or an Open RAG Benchmark folder (its corpus/)."""
    return open_corpus(path)[0]
