"""Nuggets as people and tools write them: a question's ``nuggets`` field in an
evaluation set, and nugget files (one JSON object a line, a question's nuggets in each),
read as TREC RAG and castorini's nuggetizer write them.

A nugget is ``{"text": ..., "importance": "vital" | "okay"}``; a nuggetizer file's line
is ``{"qid": ..., "query": ..., "nuggets": [...]}`` (an older nuggetizer wrote the query
as ``{"qid", "text"}``), and the assignments a scored file adds to each nugget are left
aside: a nugget file says what a good answer holds, not what one answer held.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from ragmark.data._fields import as_object, check_id, check_string
from ragmark.data.files import Where, describe, iter_jsonl, quote
from ragmark.data.leniency import Leniency
from ragmark.errors import DataError
from ragmark.types import IMPORTANCE, Dataset, Nugget

MOST_NUGGETS = 30
"""The most nuggets a question may have: TREC RAG's (and nuggetizer's) cap."""


def nuggets_of(value: Any, where: Where, field: str = "nuggets") -> tuple[Nugget, ...]:
    """A question's nuggets: a non-empty list of ``{text, importance}`` objects, the
    importance one of vital and okay (any case); at most :data:`MOST_NUGGETS`, each text
    once."""
    if not isinstance(value, list) or not value:
        got = "an empty list" if value == [] else describe(value)
        raise where.error(f"expected a non-empty list of {{text, importance}} objects, "
                          f"got {got}", field)
    if len(value) > MOST_NUGGETS:
        raise where.error(f"{len(value)} nuggets; TREC RAG allows at most {MOST_NUGGETS} a "
                          "question", field)
    out: list[Nugget] = []
    seen: dict[str, int] = {}
    for i, raw in enumerate(value):
        at = f"{field}[{i}]"
        if not isinstance(raw, dict):
            raise where.error(f"expected an object {{text, importance}}, got "
                              f"{describe(raw)}", at)
        text = check_string(raw.get("text"), where, f"{at}.text").strip()
        importance = raw.get("importance")
        if not isinstance(importance, str) or importance.strip().lower() not in IMPORTANCE:
            raise where.error(f"expected one of {', '.join(IMPORTANCE)}, got "
                              f"{describe(importance)}", f"{at}.importance")
        key = " ".join(text.casefold().split())
        if key in seen:
            raise where.error(f"the same nugget as {field}[{seen[key]}]: "
                              f"{quote(text)}", f"{at}.text")
        seen[key] = i
        out.append(Nugget(text, importance.strip().lower()))
    return tuple(out)


def _qid(obj: Mapping[str, Any], where: Where, lenient: Leniency) -> str:
    query = obj.get("query")
    if obj.get("qid") is not None:
        return check_id(obj["qid"], where, "qid", lenient)
    if isinstance(query, dict) and query.get("qid") is not None:
        return check_id(query["qid"], where, "query.qid", lenient)
    raise where.error("missing; expected the question's id (qid, or query.qid)", "qid")


def read_nugget_file(path: Path, lenient: Leniency | None = None
                     ) -> dict[str, tuple[Nugget, ...]]:
    """Question id -> its nuggets, from a nugget file (see the module); a question named
    twice is an error naming both lines."""
    lenient = lenient or Leniency()
    out: dict[str, tuple[Nugget, ...]] = {}
    first: dict[str, Where] = {}
    for where, value in iter_jsonl(path, lenient.encoding):
        obj = as_object(value, where)
        qid = _qid(obj, where, lenient)
        if qid in first:
            raise where.error(f"question {quote(qid)} again (first at {first[qid].ref()})",
                              "qid")
        first[qid] = where
        out[qid] = nuggets_of(obj.get("nuggets"), where)
    if not out:
        raise DataError("no nuggets (the file is empty)", file=str(path))
    return out


NOT_IN_SET = "questions of the nugget file the dataset does not have (left aside)"
REPLACED = "questions whose own nuggets the nugget file replaced"


def with_nuggets(ds: Dataset, path: str | Path, lenient: Leniency | None = None
                 ) -> Dataset:
    """``ds`` with the nuggets of the file at ``path`` (``--nuggets``) on the questions it
    names, so that every system is scored against the same nuggets; a question it names
    that the set lacks, or whose own nuggets it replaces, is counted in a warning. A
    file that names none of the set's questions is an error."""
    lenient = lenient or Leniency()
    table = read_nugget_file(Path(path), lenient)
    ids = {s.id for s in ds.samples}
    for qid in table:
        if qid not in ids:
            lenient.warn(NOT_IN_SET, qid, DataError(
                f"question {quote(qid)} is not in the dataset", file=str(path)))
    if not ids & set(table):
        some = ", ".join(quote(q) for q in list(table)[:3])
        raise DataError(f"names none of the dataset's questions (it names {some}; the set's "
                        f"ids are e.g. {quote(ds.samples[0].id)})", file=str(path))
    samples = []
    for s in ds.samples:
        given = table.get(s.id)
        if given is not None and s.nuggets is not None and s.nuggets != given:
            lenient.warn(REPLACED, s.id, DataError(
                f"question {quote(s.id)} has nuggets of its own", file=str(path)))
        samples.append(s if given is None else replace(s, nuggets=given))
    return replace(ds, samples=tuple(samples),
                   warnings=(*ds.warnings, *lenient.messages()))


def nugget_line(qid: str, question: str, nuggets: tuple[Nugget, ...]) -> dict[str, Any]:
    """One line of a nugget file, as nuggetizer writes it (:func:`read_nugget_file`
    reads it back)."""
    return {"qid": qid, "query": question,
            "nuggets": [{"text": n.text, "importance": n.importance} for n in nuggets]}
