"""Keyword sets and context sets: a JSON list (or JSONL file) of question objects."""

from __future__ import annotations

import difflib
import posixpath
import re
from collections.abc import Callable
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ragmark.data._fields import (
    as_object,
    check_id,
    get_optional_string,
    get_optional_strings,
    get_string,
    get_strings,
)
from ragmark.data.corpus import open_corpus
from ragmark.data.files import Where, base_suffix, describe, iter_jsonl, quote, read_json
from ragmark.data.leniency import Leniency
from ragmark.data.nugget_files import nuggets_of
from ragmark.data.trajectories import EXPECTED_FIELDS, expected_of
from ragmark.errors import DataError
from ragmark.matching import MIN_MATCH_CHARS, too_short
from ragmark.types import Corpus, Dataset, Document, GroundTruth, Sample

KEYWORD_FIELDS = frozenset({"id", "question", "expected_keywords", "must_be_grounded_in",
                            "nuggets"}) | EXPECTED_FIELDS
CONTEXT_FIELDS = frozenset(
    {"id", "question", "ground_truth_contexts", "expected_answer", "expected_keywords",
     "nuggets"}
) | EXPECTED_FIELDS
_DRIVE = re.compile(r"[A-Za-z]:(/|$)")


SHORT_PASSAGES = (f"ground-truth passages under {MIN_MATCH_CHARS} characters, which no "
                  "chunk can match; questions with one")


def _results_not_items(value: dict[str, Any]) -> str:
    """What to say of ragmark's own results given where questions or outputs belong."""
    kind = value["envelope"].get("kind")
    said = f"the results of a ragmark {kind}, not questions or logged outputs"
    if kind == "simulation":  # its conversations are in the transcripts it wrote
        talks = [str(c.get("transcripts")) for c in value.get("configs") or []
                 if isinstance(c, dict) and c.get("transcripts")]
        return said + (f": score its conversations from the transcripts it wrote "
                       f"({', '.join(talks)})" if talks else "")
    return said


def read_items(path: Path, encoding: str | None = None) -> list[tuple[Where, Any]]:
    """The items of a JSON list or of a JSONL file (``.jsonl`` or ``.jsonl.gz``), each
    with its place."""
    if base_suffix(path) == ".jsonl":
        items = list(iter_jsonl(path, encoding))
    else:
        value = read_json(path, encoding)
        if isinstance(value, dict) and isinstance(value.get("envelope"), dict):
            raise DataError(_results_not_items(value), file=str(path))
        if not isinstance(value, list):
            raise DataError(
                f"expected a list of question objects at the top level, got {describe(value)}",
                file=str(path),
            )
        items = [(Where(str(path), item=i), v) for i, v in enumerate(value)]
    if not items:
        raise DataError("no items (the evaluation set is empty)", file=str(path))
    return items


def set_format(items: list[tuple[Where, Any]], file: str) -> str:
    """``context``, ``keyword`` or ``agent`` (questions and the tool calls they expect,
    no passage to retrieve), from the fields the items have."""
    objects = [v for _, v in items if isinstance(v, dict)]
    if any("expected_tool_calls" in v for v in objects) and not any(
            v.get("ground_truth_contexts") for v in objects):
        return "agent"  # tau-bench's and BFCL's shape: a question and the calls it expects
    if any("ground_truth_contexts" in v for v in objects):
        return "context"
    if any("expected_keywords" in v or "must_be_grounded_in" in v for v in objects):
        return "keyword"
    answered = any("answer" in v and "contexts" in v for v in objects)
    raise DataError(
        "cannot tell the set's format: no item has 'expected_keywords' (keyword set), "
        "'ground_truth_contexts' (context set) or 'expected_tool_calls' (an agent's set)"
        + ("; its items have 'answer' and 'contexts': score them as logged outputs with "
           "--outputs" if answered else "")
        + ". The formats --dataset reads: a keyword set, a context set, a BEIR folder, an "
        "Open RAG Benchmark folder; --outputs reads logged outputs ({question, answer, "
        "contexts}), --run-file-in a TREC run file (with --dataset)",
        file=file,
    )


def _samples(
    items: list[tuple[Where, Any]],
    known: frozenset[str],
    make: Callable[[dict[str, Any], Where], tuple[str, GroundTruth, dict[str, Any]]],
    lenient: Leniency | None = None,
    offset: int = 0,
) -> tuple[Sample, ...]:
    """Samples with unique ids; ``make`` checks the fields of its kind of set and gives
    (question, ground truth, optional Sample fields). Integer ids become strings and
    passages too short to match are counted, with warnings. An item without an id is
    ``q<offset + its position>``."""
    lenient = lenient or Leniency()
    samples = []
    first: dict[str, Where] = {}
    for index, (where, value) in enumerate(items):
        obj = as_object(value, where)
        given = None if obj.get("id") is None else check_id(obj["id"], where, "id", lenient)
        sample_id = given if given is not None else f"q{offset + index + 1}"
        question, truth, optional = make(obj, where)
        if sample_id in first:
            earlier = first[sample_id].ref()
            if given is not None:
                raise where.error(f"duplicate id {quote(sample_id)} (first at {earlier})", "id")
            raise where.error(
                f"duplicate id {quote(sample_id)}, the default for this item "
                f"(first at {earlier}); give the item an 'id'"
            )
        first[sample_id] = where
        short = [i for i, p in enumerate(truth.passages) if too_short(p)]
        if short:
            lenient.warn(SHORT_PASSAGES, sample_id, where.error(
                f"ground-truth passage {short[0]} has under {MIN_MATCH_CHARS} characters, so "
                "no chunk can match it", f"ground_truth_contexts[{short[0]}]"))
        extra = {k: v for k, v in obj.items() if k not in known and k not in ANSWERABLE}
        samples.append(
            Sample(
                id=sample_id,
                question=question,
                truth=truth,
                extra=MappingProxyType(extra),
                answerable=answerable_of(obj, where),
                nuggets=None if obj.get("nuggets") is None else nuggets_of(obj["nuggets"],
                                                                           where),
                expected_calls=expected_of(obj, where, lenient),
                **optional,
            )
        )
    return tuple(samples)


ANSWERABLE = ("answerable", "is_impossible")
"""The fields that mark a question unanswerable: ``"answerable": false``, or SQuAD 2.0's
``"is_impossible": true``."""


def answerable_of(obj: dict[str, Any], where: Where) -> bool:
    """Whether the item is answerable (default true); a non-boolean flag, or the two
    flags disagreeing, is an error naming the field."""
    flags = {}
    for key in ANSWERABLE:
        if key in obj and obj[key] is not None:
            if not isinstance(obj[key], bool):
                raise where.error(f"expected true or false, got {describe(obj[key])}", key)
            flags[key] = obj[key] if key == "answerable" else not obj[key]
    if len(set(flags.values())) > 1:
        raise where.error("'answerable' and 'is_impossible' disagree", "answerable")
    return next(iter(flags.values()), True)


def _corpus_name(name: str, where: Where, field: str, corpus: Corpus, ids: set[str]) -> str:
    """The corpus document id that ``name`` refers to."""
    posix = name.replace("\\", "/")
    norm = posixpath.normpath(posix)
    if posix.startswith("/") or _DRIVE.match(posix) or norm == ".." or norm.startswith("../"):
        raise where.error(f"{quote(name)} escapes the corpus folder", field)
    for candidate in (name, norm):
        if candidate in ids:
            return candidate
    close = difflib.get_close_matches(norm, ids, n=1)
    hint = f"; did you mean {quote(close[0])}?" if close else ""
    raise where.error(f"{quote(name)} is not a document of the corpus {corpus.source}{hint}", field)


def _keyword_corpus(path: Path, corpus: str | Path | None, lenient: Leniency
                    ) -> tuple[Corpus, str]:
    if corpus is not None:
        return open_corpus(corpus, lenient)
    beside = path.parent / "corpus"
    if beside.is_dir():
        return open_corpus(beside, lenient)
    raise DataError(
        "a keyword set needs a corpus: pass --corpus PATH, or put the documents in a "
        "folder named 'corpus' beside this file",
        file=str(path),
    )


def load_keyword_set(
    path: Path, items: list[tuple[Where, Any]], corpus: str | Path | None,
    lenient: Leniency | None = None,
) -> Dataset:
    """``{id, question, expected_keywords, must_be_grounded_in}`` items; the named
    files must be documents of the corpus (an empty one, left out of the index, still
    counts as a relevant target)."""
    lenient = lenient or Leniency()
    documents, chunker = _keyword_corpus(path, corpus, lenient)
    ids = {d.id for d in documents.documents} | documents.left_out

    def make(obj: dict[str, Any], where: Where) -> tuple[str, GroundTruth, dict[str, Any]]:
        question = get_string(obj, "question", where)
        if not answerable_of(obj, where) and not obj.get("must_be_grounded_in"):
            # an unanswerable question: no document to be grounded in, maybe no keyword
            keywords = get_optional_strings(obj, "expected_keywords", where)
            return question, GroundTruth(), {"expected_keywords": keywords}
        keywords = get_strings(obj, "expected_keywords", where)
        names = get_strings(obj, "must_be_grounded_in", where)
        grades = {
            _corpus_name(name, where, f"must_be_grounded_in[{i}]", documents, ids): 1
            for i, name in enumerate(names)
        }
        truth = GroundTruth(doc_grades=MappingProxyType(grades))
        return question, truth, {"expected_keywords": keywords}

    samples = _samples(items, KEYWORD_FIELDS, make, lenient)
    return Dataset(set_name(path), str(path), "keyword", samples, documents, chunker)


def _passage_corpus(samples: tuple[Sample, ...], file: str) -> Corpus:
    """The distinct ground-truth passages, in order of first appearance: p1, p2, ..."""
    passages: dict[str, None] = {}
    for sample in samples:
        passages.update(dict.fromkeys(sample.truth.passages))
    documents = tuple(Document(id=f"p{i}", text=p) for i, p in enumerate(passages, start=1))
    return Corpus(documents=documents, source=f"ground-truth passages of {file}")


def load_context_set(
    path: Path, items: list[tuple[Where, Any]], corpus: str | Path | None,
    lenient: Leniency | None = None, optional_truth: bool = False, agent: bool = False,
) -> Dataset:
    """``{id?, question, ground_truth_contexts, expected_answer?, expected_keywords?,
    nuggets?, ...}`` items (``nuggets``: :func:`~ragmark.data.nugget_files.nuggets_of`); other
    fields go to ``Sample.extra``. The fields that ``ragmark testset`` adds are checked
    when present: ``type`` and ``difficulty`` strings, ``source_ids`` a list of strings.
    ``optional_truth``: an item may lack ``ground_truth_contexts`` (a turn of a
    conversation that asks for nothing to be retrieved). ``agent``: an agent's set,
    whose items expect tool calls and may have no passage at all (no corpus then)."""

    def make(obj: dict[str, Any], where: Where) -> tuple[str, GroundTruth, dict[str, Any]]:
        question = get_string(obj, "question", where)
        # an unanswerable question has no passage to find: none, or an empty list
        needed = answerable_of(obj, where) and not optional_truth
        contexts = (get_strings(obj, "ground_truth_contexts", where)
                    if obj.get("ground_truth_contexts") or needed else ())
        get_optional_string(obj, "type", where)
        get_optional_string(obj, "difficulty", where)
        get_optional_strings(obj, "source_ids", where)
        optional = {
            "expected_answer": get_optional_string(obj, "expected_answer", where),
            "expected_keywords": get_optional_strings(obj, "expected_keywords", where),
        }
        return question, GroundTruth(passages=contexts), optional

    lenient = lenient or Leniency()
    samples = _samples(items, CONTEXT_FIELDS, make, lenient)
    if corpus is not None:
        documents, chunker = open_corpus(corpus, lenient)
    else:
        documents, chunker = _passage_corpus(samples, str(path)), "whole"
        if not documents.documents and not agent:
            raise DataError(
                "the file holds no contexts to retrieve from: no question has ground-truth "
                "contexts (ground_truth_contexts; RAGAS reference_contexts, LlamaIndex "
                "reference_contexts, DeepEval context: empty or null in every row). Give "
                "--corpus (the documents, a folder or a file) to retrieve from them, or "
                "score a system's logged answers with --outputs (answer metrics only)",
                file=str(path))
    return Dataset(set_name(path), str(path), "agent" if agent and not documents.documents
                   else "context", samples, documents, chunker)


def set_name(path: Path) -> str:
    """``questions`` for ``questions.json``, ``questions.jsonl`` and ``questions.jsonl.gz``."""
    name = path.name
    for suffix in (".gz", ".jsonl", ".json", ".csv"):
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
    return name
