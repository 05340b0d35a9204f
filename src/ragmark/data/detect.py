"""``load_dataset``: tell the format of a dataset from its files and fields, then load it."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from ragmark.data.files import base_suffix, missing_error, read_json
from ragmark.data.foreign import is_arrow, read_rows
from ragmark.data.formats import documents, folders, formats, shape_of, shapes
from ragmark.data.leniency import Leniency
from ragmark.data.sets import load_context_set, load_keyword_set, set_format
from ragmark.errors import DataError
from ragmark.types import Dataset


def expected() -> str:
    """What a dataset may be, for the error of one that is none of them."""
    titles = [f.title for f in formats().values()]
    rows = " or ".join([", ".join(titles[:-1]), titles[-1]] if len(titles) > 1 else titles)
    sets = "".join(f", or {f.expects}" for f in shapes().values() if f.sets)
    return (f"expected {', '.join(f.expects for f in folders().values())}, a keyword or "
            f"context set{sets} (.json, .jsonl or .jsonl.gz), or "
            f"a {rows} evaluation set (.json, .jsonl, .csv)")


def _hint(path: Path) -> str:
    """What a file that is not a dataset may be: a qrels file, or a TREC run file."""
    try:
        first = next((ln.split() for ln in path.read_text("utf-8", "replace").splitlines()
                      if ln.strip()), [])
    except OSError:
        return ""
    if len(first) == 6 and first[1] == "Q0":
        return ("; this looks like a TREC run file: score it against a dataset with "
                "--run-file-in FILE --dataset DATASET")
    if len(first) in (3, 4) and path.suffix.lower() in (".tsv", ".txt", ".qrels"):
        return ("; this looks like a qrels file: it belongs in a BEIR folder as "
                "qrels/<split>.tsv, beside corpus.jsonl and queries.jsonl")
    return ""


def load_dataset(
    path: str | Path, corpus: str | Path | None = None, split: str = "test",
    lenient: Leniency | None = None,
) -> Dataset:
    """Load an evaluation set with its corpus; the format is told from files and fields.

    ``corpus`` is needed by a keyword set without a ``corpus`` folder beside it, and
    optional for a context set (else its ground-truth passages make the corpus);
    ``split`` picks the qrels file of a BEIR folder. Odd but unambiguous data loads with
    warnings (``Dataset.warnings``), or fails with ``Leniency(strict=True)``.
    """
    lenient = lenient or Leniency()
    return dataclasses.replace(_load(Path(path), corpus, split, lenient),
                               warnings=tuple(lenient.messages()))


def _load(path: Path, corpus: str | Path | None, split: str, lenient: Leniency) -> Dataset:
    if is_arrow(path):  # RAGAS's to_hf_dataset, saved to disk or as Parquet
        return _foreign_set(path, corpus, lenient)
    if path.is_dir():

        for fmt in folders().values():
            if fmt.detect(path):
                return fmt.load(path, corpus, split, lenient)
        raise DataError(f"not a dataset folder; {expected()}", file=str(path))
    if not path.exists():
        raise missing_error(path)
    if base_suffix(path) not in (".json", ".jsonl", ".csv"):
        raise DataError(f"not a dataset; {expected()}{_hint(path)}", file=str(path))
    data = read_json(path, lenient.encoding) if base_suffix(path) == ".json" else None

    for doc in documents().values():
        if doc.detect(data):
            return doc.load(path, data, corpus, lenient)
    items, foreign = read_rows(path, lenient, data)
    if foreign is not None:
        return _foreign_set(path, corpus, lenient, items, foreign)

    shape = shape_of(items, sets=True)  # conversations: each turn a question
    if shape is not None:  # its rows a context set whose truth is optional
        return load_context_set(path, shape.rows(items, None, lenient), corpus, lenient,
                                optional_truth=True)
    kind = set_format(items, str(path))
    if kind == "keyword":
        return load_keyword_set(path, items, corpus, lenient)
    return load_context_set(path, items, corpus, lenient, optional_truth=kind == "agent",
                            agent=kind == "agent")


def _foreign_set(path: Path, corpus: str | Path | None, lenient: Leniency,
                 items: list[Any] | None = None, fmt: str | None = None) -> Dataset:
    """A RAGAS, DeepEval or LlamaIndex set (its gold contexts optional)."""
    if items is None:
        items, fmt = read_rows(path, lenient)
    if fmt is None:
        raise DataError("the rows' fields are not those of a format ragmark reads (RAGAS: "
                        "user_input, ...; DeepEval: input, ...; LlamaIndex: query, ...)",
                        file=str(path))
    ds = load_context_set(path, items, corpus, lenient, optional_truth=True)
    return dataclasses.replace(ds, format=fmt)

