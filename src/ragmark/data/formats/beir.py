"""BEIR folders: corpus.jsonl, queries.jsonl and qrels/<split>.tsv (graded); and TREC
RAG's files in the same shape: the segments as corpus.jsonl (``docid``, ``segment``),
the topics as topics.tsv, the nuggets as nuggets.jsonl (then the qrels are optional).

corpus and queries may be gzip-compressed (``corpus.jsonl.gz``); the qrels may be BEIR's
TSV (``query-id corpus-id score``) or TREC's format (``qid 0 docid grade``, white space
separated), told apart per file by the first judgment line.
"""

from __future__ import annotations

import re
from pathlib import Path
from types import MappingProxyType

from ragmark.data._fields import NON_EMPTY_STRING, as_object, check_id, get_string
from ragmark.data.corpus import load_jsonl_corpus
from ragmark.data.files import Where, describe, iter_jsonl, iter_lines, quote
from ragmark.data.formats import FolderFormat
from ragmark.data.leniency import Leniency
from ragmark.data.nugget_files import read_nugget_file
from ragmark.errors import DataError
from ragmark.types import Dataset, GroundTruth, Nugget, Sample

LAYOUT = ("a BEIR folder needs corpus.jsonl, queries.jsonl (or TREC's topics.tsv) and "
          "qrels/<split>.tsv (or, in a TREC RAG folder, nuggets.jsonl)")
HEADER = ["query-id", "corpus-id", "score"]
COLUMNS = ("3 tab-separated columns (query-id, corpus-id, score) or TREC's 4 (qid 0 docid "
           "grade)")
_INTEGER = re.compile(r"[+-]?[0-9]+")
_INTEGRAL_FLOAT = re.compile(r"[+-]?[0-9]+\.0*")
FLOAT_GRADES = "grades written as integral decimals (1.0), read as integers"
UNKNOWN_DOCS = ("judged documents missing from the corpus, kept as relevant targets that "
                "are never retrieved")
SAME_QUERIES = "queries repeated with the same id and text, loaded once"


def _find(folder: Path, name: str) -> Path:
    """``name`` in ``folder``, or its gzip-compressed ``name.gz`` when only that exists."""
    plain = folder / name
    gz = folder / f"{name}.gz"
    return gz if not plain.exists() and gz.exists() else plain


TOPICS = ("topics.tsv", "topics.txt", "topics.jsonl")
"""TREC's topics, read in place of queries.jsonl: one a line, ``qid<TAB>query`` (TREC RAG
2024's ``topics.rag24.test.txt`` renamed), or JSON ``{"id", "title"}`` (TREC RAG 2025's
``trec_rag_2025_queries.jsonl``; ``qid``/``_id`` and ``query``/``text`` too)."""
NUGGETS = "nuggets.jsonl"
"""A TREC RAG folder's nuggets (:mod:`ragmark.data.nugget_files`), beside its qrels."""


def is_beir_folder(folder: Path) -> bool:
    return any(_find(folder, name).exists()
               for name in ("corpus.jsonl", "queries.jsonl", "qrels", *TOPICS))


def load_topics(path: Path, lenient: Leniency | None = None) -> dict[str, str]:
    """query id -> text, from TREC's topics file (:data:`TOPICS`)."""
    lenient = lenient or Leniency()
    if path.suffix == ".jsonl":
        return _json_topics(path, lenient)
    topics: dict[str, str] = {}
    for number, text in iter_lines(path, lenient.encoding):
        where = Where(str(path), line=number)
        qid, tab, query = text.partition("\t")
        if not tab or not qid.strip() or not query.strip():
            raise where.error("expected a topic id, a tab and the topic's text")
        if qid.strip() in topics:
            raise where.error(f"duplicate topic id {quote(qid.strip())}", "qid")
        topics[qid.strip()] = query.strip()
    if not topics:
        raise DataError("no topics (the file is empty)", file=str(path))
    return topics


def load_queries(path: Path, lenient: Leniency | None = None) -> dict[str, str]:
    """query id -> text, from a JSONL file of ``{"_id" or "id", "text"}``."""
    lenient = lenient or Leniency()
    queries: dict[str, str] = {}
    first: dict[str, Where] = {}
    for where, value in iter_jsonl(path, lenient.encoding):
        obj = as_object(value, where)
        id_field = "_id" if "_id" in obj else "id"
        if id_field not in obj:
            raise where.error(f"missing; expected {NON_EMPTY_STRING} (or '_id' as in BEIR)", "id")
        qid = check_id(obj[id_field], where, id_field, lenient)
        text = get_string(obj, "text", where)
        if qid in first:
            dup = f"duplicate id {quote(qid)} (first at {first[qid].ref()})"
            if queries[qid] != text:
                raise where.error(dup + " with a different text", id_field)
            lenient.warn(SAME_QUERIES, f"{quote(qid)} ({where.short()})",
                         where.error(dup, id_field))
            continue
        first[qid] = where
        queries[qid] = text
    if not queries:
        raise DataError("no queries (the evaluation set is empty)", file=str(path))
    return queries


def _columns(text: str) -> tuple[str, str, str] | None:
    """(query id, document id, grade) of a BEIR TSV or a TREC qrels line; None when the
    line has neither shape."""
    tabs = text.split("\t")
    if len(tabs) == 3:
        a, b, c = (t.strip() for t in tabs)
        return a, b, c
    words = text.split()
    if len(words) == 4:
        return words[0], words[2], words[3]
    return None


def _grade(text: str, where: Where, lenient: Leniency) -> int:
    if _INTEGER.fullmatch(text):
        return int(text)
    if _INTEGRAL_FLOAT.fullmatch(text):
        lenient.warn(FLOAT_GRADES, f"{text} ({where.short()})",
                     where.error(f"expected an integer, got {describe(text)}", "score"))
        return int(float(text))
    raise where.error(f"expected an integer, got {describe(text)}", "score")


def load_qrels(path: Path, queries: dict[str, str], doc_ids: set[str] | frozenset[str],
               lenient: Leniency | None = None) -> dict[str, dict[str, int]]:
    """query id -> {document id: grade}, queries in order of first appearance.

    A header line is skipped only when it is exactly ``query-id corpus-id score``. A
    document the corpus lacks stays in the ground truth with a warning (a relevant target
    that is never retrieved, as trec_eval scores it); so does a grade written ``1.0``.
    """
    lenient = lenient or Leniency()
    qrels: dict[str, dict[str, int]] = {}
    first: dict[tuple[str, str], int] = {}
    first_line = True
    for number, text in iter_lines(path, lenient.encoding):
        where = Where(str(path), line=number)
        columns = _columns(text)
        if columns is None:
            raise where.error(f"expected {COLUMNS}, got {len(text.split(chr(9)))}")
        qid, doc_id, score = columns
        is_header = first_line and [qid, doc_id, score] == HEADER
        first_line = False
        if is_header:
            continue
        grade = _grade(score, where, lenient)
        if qid not in queries:
            raise where.error(f"unknown query {quote(qid)} (not in queries.jsonl)", "query-id")
        if doc_id not in doc_ids:
            lenient.warn(UNKNOWN_DOCS, f"{quote(doc_id)} ({where.short()})", where.error(
                f"unknown document {quote(doc_id)} (not in corpus.jsonl)", "corpus-id"))
        if (qid, doc_id) in first:
            raise where.error(
                f"duplicate judgment of query {quote(qid)} and document {quote(doc_id)} "
                f"(first at line {first[qid, doc_id]})"
            )
        first[qid, doc_id] = number
        qrels.setdefault(qid, {})[doc_id] = grade
    if not qrels:
        message = "no relevance judgments (the evaluation set is empty)"
        raise DataError(message, file=str(path))
    return qrels


QRELS_SUFFIXES = (".tsv", ".txt", ".qrels")


def _split_path(folder: Path, split: str) -> Path:
    """``qrels/<split>.tsv`` (or ``.txt`` or ``.qrels``, as TREC qrels are often named)."""
    qrels = folder / "qrels"
    for suffix in QRELS_SUFFIXES:
        path = qrels / f"{split}{suffix}"
        if path.is_file():
            return path
    present = sorted({p.stem for p in qrels.iterdir() if p.suffix in QRELS_SUFFIXES
                      and not p.name.startswith(".")}) if qrels.is_dir() else []
    found = (f"splits present: {', '.join(present)}" if present
             else "qrels/ has no .tsv, .txt or .qrels files")
    raise DataError(f"no such split {quote(split)}; {found}", file=str(qrels / f"{split}.tsv"))


def load_beir(folder: Path, split: str = "test", corpus: str | Path | None = None,
              lenient: Leniency | None = None) -> Dataset:
    """Samples: the queries judged in ``qrels/<split>.tsv``, in order of first appearance."""
    lenient = lenient or Leniency()
    if corpus is not None:
        raise DataError(
            "a BEIR folder has its own corpus (corpus.jsonl); leave out --corpus",
            file=str(folder),
        )
    topics = next((folder / t for t in TOPICS if (folder / t).is_file()), None)
    nuggets_path = _find(folder, NUGGETS)
    needed = [("corpus.jsonl", "file")]
    needed += [] if topics is not None else [("queries.jsonl", "file")]
    needed += [] if nuggets_path.exists() else [("qrels", "folder")]
    for name, kind in needed:
        if not _find(folder, name).exists():
            raise DataError(f"no such {kind}; {LAYOUT}", file=str(folder / name))
    queries = (load_topics(topics, lenient) if topics is not None
               else load_queries(_find(folder, "queries.jsonl"), lenient))
    documents = load_jsonl_corpus(_find(folder, "corpus.jsonl"), lenient)
    known = {d.id for d in documents.documents} | documents.left_out
    qrels = (load_qrels(_split_path(folder, split), queries, known, lenient)
             if (folder / "qrels").exists() else {})
    nuggets = _nuggets(nuggets_path, queries, lenient) if nuggets_path.exists() else {}
    texts = {d.id: d.text for d in documents.documents}
    samples = tuple(
        Sample(id=qid, question=queries[qid],
               truth=GroundTruth(doc_grades=MappingProxyType(qrels.get(qid, {}))),
               nuggets=nuggets.get(qid),
               relevant_texts=tuple(texts[d] for d, g in sorted(
                   qrels.get(qid, {}).items(), key=lambda dg: -dg[1]) if g > 0 and d in texts))
        for qid in (*qrels, *(q for q in nuggets if q not in qrels)))
    return Dataset(
        name=folder_name(folder),
        path=str(folder),
        format="trec-rag" if topics is not None or nuggets else "beir",
        samples=samples,
        corpus=documents,
        default_chunker="whole",
    )


def _json_topics(path: Path, lenient: Leniency) -> dict[str, str]:
    topics: dict[str, str] = {}
    for where, value in iter_jsonl(path, lenient.encoding):
        obj = as_object(value, where)
        key = next((k for k in ("id", "qid", "_id") if k in obj), "id")
        qid = check_id(obj.get(key), where, key, lenient)
        text_key = next((k for k in ("title", "query", "text") if k in obj), "title")
        text = get_string(obj, text_key, where)
        if qid in topics:
            raise where.error(f"duplicate topic id {quote(qid)}", key)
        topics[qid] = text.strip()
    if not topics:
        raise DataError("no topics (the file is empty)", file=str(path))
    return topics


def _nuggets(path: Path, queries: dict[str, str], lenient: Leniency
             ) -> dict[str, tuple[Nugget, ...]]:
    got = read_nugget_file(path, lenient)
    unknown = [q for q in got if q not in queries]
    if unknown:
        raise DataError(f"nuggets of unknown topic {quote(unknown[0])} (not among the "
                        "topics)", file=str(path))
    return got


FORMAT = FolderFormat("beir", "a BEIR folder (corpus.jsonl, queries.jsonl, qrels/<split>.tsv)",
                      is_beir_folder, lambda folder, corpus, split, lenient: load_beir(
                          folder, split, corpus, lenient), order=10)


GENERIC = frozenset({"beir_format", "beir-format", "beir_data", "data", "dataset",
                     "datasets", "files", "input", "inputs"})
"""Folder names that say nothing of the data: a set is named after the folder above."""


def folder_name(folder: Path) -> str:
    """A BEIR folder's dataset name: its own, or its parent's when its own is generic
    (``nfcorpus/beir_format`` is ``nfcorpus``), so two sets are not one name in the
    history.

    >>> folder_name(Path("/data/nfcorpus/beir_format")), folder_name(Path("/x/scifact"))
    ('nfcorpus', 'scifact')
    """
    path = folder.resolve()
    if path.name.lower() in GENERIC and path.parent.name:
        return path.parent.name
    return path.name
