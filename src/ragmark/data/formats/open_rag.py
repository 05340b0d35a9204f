"""Open RAG Benchmark folders: queries.json, qrels.json, answers.json?, corpus/<doc>.json."""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType
from typing import Any

from ragmark.data._fields import (
    as_object,
    check_string,
    get_int,
    get_optional_string,
    get_string,
)
from ragmark.data.files import Where, describe, missing_error, quote, read_json
from ragmark.data.formats import FolderFormat
from ragmark.errors import DataError
from ragmark.types import Corpus, Dataset, Document, GroundTruth, Sample

LAYOUT = "an Open RAG Benchmark folder needs queries.json, qrels.json and corpus/"


def is_open_rag_folder(folder: Path) -> bool:
    return (folder / "queries.json").exists() or (folder / "qrels.json").exists()


def _top_object(path: Path, shape: str, encoding: str | None = None) -> dict[str, Any]:
    value = read_json(path, encoding)
    if not isinstance(value, dict):
        raise DataError(
            f"expected an object ({shape}) at the top level, got {describe(value)}",
            file=str(path),
        )
    return value


def _document(path: Path, encoding: str | None) -> Document:
    where = Where(str(path))
    obj = _top_object(path, '{"title", "sections"}', encoding)
    title = get_optional_string(obj, "title", where, allow_empty=True) or ""
    expected = 'a non-empty list of sections {"text"}'
    if "sections" not in obj:
        raise where.error(f"missing; expected {expected}", "sections")
    sections = obj["sections"]
    if not isinstance(sections, list) or not sections:
        got = "an empty list" if sections == [] else describe(sections)
        raise where.error(f"expected {expected}, got {got}", "sections")
    texts = []
    for i, section in enumerate(sections):
        if not isinstance(section, dict):
            raise where.error(f"expected an object, got {describe(section)}", f"sections[{i}]")
        # A section may have no text of its own (only tables or images); its position
        # still counts, so it is kept.
        field = f"sections[{i}].text"
        texts.append(get_string(section, "text", where, allow_empty=True, field=field))
    return Document(id=path.stem, text="\n\n".join(texts), title=title, sections=tuple(texts))


def load_open_rag_corpus(folder: Path, encoding: str | None = None) -> Corpus:
    """One document per ``<doc_id>.json`` file in ``folder``, sorted by id; files that
    are not UTF-8 are decoded with ``encoding`` when one is given."""
    if not folder.is_dir():
        if not folder.exists():
            raise missing_error(folder, "folder")
        raise DataError("expected a folder of <doc_id>.json files", file=str(folder))
    paths = sorted(
        p for p in folder.iterdir() if p.suffix.lower() == ".json" and not p.name.startswith(".")
    )
    if not paths:
        raise DataError("the corpus is empty: no .json documents", file=str(folder))
    return Corpus(documents=tuple(_document(p, encoding) for p in paths), source=str(folder))


def _queries(path: Path, encoding: str | None) -> dict[str, tuple[str, dict[str, Any]]]:
    """query id -> (text, other fields)."""
    queries = {}
    for qid, value in _top_object(path, 'query id -> {"query": text}', encoding).items():
        where = Where(str(path), item=quote(qid))
        obj = as_object(value, where)
        text = get_string(obj, "query", where)
        queries[qid] = (text, {k: v for k, v in obj.items() if k != "query"})
    if not queries:
        raise DataError("no queries (the evaluation set is empty)", file=str(path))
    return queries


def _answers(path: Path, queries: dict[str, Any], encoding: str | None) -> dict[str, str]:
    if not path.exists():
        return {}
    answers = {}
    for qid, value in _top_object(path, "query id -> answer text", encoding).items():
        where = Where(str(path), item=quote(qid))
        if qid not in queries:
            raise where.error("unknown query (not in queries.json)")
        if value is not None:
            answers[qid] = check_string(value, where, None)
    return answers


def _truth(value: Any, where: Where, documents: dict[str, Document]) -> tuple[str, int]:
    obj = as_object(value, where)
    doc_id = get_string(obj, "doc_id", where)
    section = get_int(obj, "section_id", where)
    document = documents.get(doc_id)
    if document is None:
        raise where.error(f"unknown document {quote(doc_id)} (no corpus/{doc_id}.json)", "doc_id")
    n = len(document.sections)
    if not 0 <= section < n:
        raise where.error(
            f"{section} is out of range: document {quote(doc_id)} has sections 0 to {n - 1}",
            "section_id",
        )
    return doc_id, section


def load_open_rag(folder: Path, corpus: str | Path | None = None,
                  encoding: str | None = None) -> Dataset:
    """Samples: the queries of qrels.json, in its order; each relevant to one section."""
    if corpus is not None:
        raise DataError(
            "an Open RAG Benchmark folder has its own corpus (corpus/); leave out --corpus",
            file=str(folder),
        )
    for name, kind in (("queries.json", "file"), ("qrels.json", "file"), ("corpus", "folder")):
        if not (folder / name).exists():
            raise DataError(f"no such {kind}; {LAYOUT}", file=str(folder / name))
    queries = _queries(folder / "queries.json", encoding)
    answers = _answers(folder / "answers.json", queries, encoding)
    corpus_docs = load_open_rag_corpus(folder / "corpus", encoding)
    documents = corpus_docs.by_id()
    qrels_path = folder / "qrels.json"
    samples = []
    shape = 'query id -> {"doc_id", "section_id"}'
    for qid, value in _top_object(qrels_path, shape, encoding).items():
        where = Where(str(qrels_path), item=quote(qid))
        if qid not in queries:
            raise where.error("unknown query (not in queries.json)")
        text, extra = queries[qid]
        truth = GroundTruth(sections=(_truth(value, where, documents),))
        samples.append(
            Sample(
                id=qid,
                question=text,
                truth=truth,
                expected_answer=answers.get(qid),
                extra=MappingProxyType(extra),
            )
        )
    if not samples:
        message = "no relevance judgments (the evaluation set is empty)"
        raise DataError(message, file=str(qrels_path))
    return Dataset(
        name=folder.resolve().name,
        path=str(folder),
        format="open-rag-bench",
        samples=tuple(samples),
        corpus=corpus_docs,
        default_chunker="fixed",
    )


FORMAT = FolderFormat("open-rag-bench", "an Open RAG Benchmark folder (queries.json, "
                      "qrels.json, corpus/)", is_open_rag_folder,
                      lambda folder, corpus, split, lenient: load_open_rag(
                          folder, corpus, lenient.encoding), order=20)
