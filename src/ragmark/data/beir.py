"""BEIR folders: corpus.jsonl, queries.jsonl and qrels/<split>.tsv (graded)."""

from __future__ import annotations

import re
from pathlib import Path
from types import MappingProxyType

from ragmark.data._fields import NON_EMPTY_STRING, as_object, check_string, get_string
from ragmark.data._read import Where, describe, iter_jsonl, iter_lines, quote
from ragmark.data.corpus import load_jsonl_corpus
from ragmark.errors import DataError
from ragmark.types import Dataset, GroundTruth, Sample

LAYOUT = "a BEIR folder needs corpus.jsonl, queries.jsonl and qrels/<split>.tsv"
HEADER = ["query-id", "corpus-id", "score"]
COLUMNS = "3 tab-separated columns (query-id, corpus-id, score)"
_INTEGER = re.compile(r"[+-]?[0-9]+")


def is_beir_folder(folder: Path) -> bool:
    return any((folder / name).exists() for name in ("corpus.jsonl", "queries.jsonl", "qrels"))


def load_queries(path: Path) -> dict[str, str]:
    """query id -> text, from a JSONL file of ``{"_id" or "id", "text"}``."""
    queries: dict[str, str] = {}
    first: dict[str, Where] = {}
    for where, value in iter_jsonl(path):
        obj = as_object(value, where)
        id_field = "_id" if "_id" in obj else "id"
        if id_field not in obj:
            raise where.error(f"missing; expected {NON_EMPTY_STRING} (or '_id' as in BEIR)", "id")
        qid = check_string(obj[id_field], where, id_field)
        text = get_string(obj, "text", where)
        if qid in first:
            raise where.error(f"duplicate id {quote(qid)} (first at {first[qid].ref()})", id_field)
        first[qid] = where
        queries[qid] = text
    if not queries:
        raise DataError("no queries (the evaluation set is empty)", file=str(path))
    return queries


def load_qrels(path: Path, queries: dict[str, str], doc_ids: set[str]) -> dict[str, dict[str, int]]:
    """query id -> {document id: grade}, queries in order of first appearance.

    A header line is skipped only when it is exactly ``query-id corpus-id score``.
    """
    qrels: dict[str, dict[str, int]] = {}
    first: dict[tuple[str, str], int] = {}
    first_line = True
    for number, text in iter_lines(path):
        where = Where(str(path), line=number)
        columns = text.split("\t")
        if len(columns) != 3:
            raise where.error(f"expected {COLUMNS}, got {len(columns)}")
        qid, doc_id, score = (c.strip() for c in columns)
        is_header = first_line and [qid, doc_id, score] == HEADER
        first_line = False
        if is_header:
            continue
        if not _INTEGER.fullmatch(score):
            raise where.error(f"expected an integer, got {describe(score)}", "score")
        if qid not in queries:
            raise where.error(f"unknown query {quote(qid)} (not in queries.jsonl)", "query-id")
        if doc_id not in doc_ids:
            message = f"unknown document {quote(doc_id)} (not in corpus.jsonl)"
            raise where.error(message, "corpus-id")
        if (qid, doc_id) in first:
            raise where.error(
                f"duplicate judgment of query {quote(qid)} and document {quote(doc_id)} "
                f"(first at line {first[qid, doc_id]})"
            )
        first[qid, doc_id] = number
        qrels.setdefault(qid, {})[doc_id] = int(score)
    if not qrels:
        message = "no relevance judgments (the evaluation set is empty)"
        raise DataError(message, file=str(path))
    return qrels


def _split_path(folder: Path, split: str) -> Path:
    qrels = folder / "qrels"
    path = qrels / f"{split}.tsv"
    if not path.is_file():
        present = sorted(p.stem for p in qrels.glob("*.tsv") if not p.name.startswith("."))
        found = f"splits present: {', '.join(present)}" if present else "qrels/ has no .tsv files"
        raise DataError(f"no such split {quote(split)}; {found}", file=str(path))
    return path


def load_beir(folder: Path, split: str = "test", corpus: str | Path | None = None) -> Dataset:
    """Samples: the queries judged in ``qrels/<split>.tsv``, in order of first appearance."""
    if corpus is not None:
        raise DataError(
            "a BEIR folder has its own corpus (corpus.jsonl); leave out --corpus",
            file=str(folder),
        )
    for name, kind in (("corpus.jsonl", "file"), ("queries.jsonl", "file"), ("qrels", "folder")):
        if not (folder / name).exists():
            raise DataError(f"no such {kind}; {LAYOUT}", file=str(folder / name))
    qrels_path = _split_path(folder, split)
    queries = load_queries(folder / "queries.jsonl")
    documents = load_jsonl_corpus(folder / "corpus.jsonl")
    qrels = load_qrels(qrels_path, queries, {d.id for d in documents.documents})
    samples = tuple(
        Sample(id=qid, question=queries[qid], truth=GroundTruth(doc_grades=MappingProxyType(g)))
        for qid, g in qrels.items()
    )
    return Dataset(
        name=folder.resolve().name,
        path=str(folder),
        format="beir",
        samples=samples,
        corpus=documents,
        default_chunker="whole",
    )
