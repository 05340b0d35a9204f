"""``load_dataset``: tell the format of a dataset from its files and fields, then load it."""

from __future__ import annotations

from pathlib import Path

from ragmark.data._read import missing_error
from ragmark.data.beir import is_beir_folder, load_beir
from ragmark.data.openrag import is_open_rag_folder, load_open_rag
from ragmark.data.sets import load_context_set, load_keyword_set, read_items, set_format
from ragmark.errors import DataError
from ragmark.types import Dataset

FORMATS = (
    "expected a BEIR folder (corpus.jsonl, queries.jsonl, qrels/<split>.tsv), "
    "an Open RAG Benchmark folder (queries.json, qrels.json, corpus/), "
    "or a keyword or context set (.json or .jsonl)"
)


def load_dataset(
    path: str | Path, corpus: str | Path | None = None, split: str = "test"
) -> Dataset:
    """Load an evaluation set with its corpus; the format is told from files and fields.

    ``corpus`` is needed by a keyword set without a ``corpus`` folder beside it, and
    optional for a context set (else its ground-truth passages make the corpus);
    ``split`` picks the qrels file of a BEIR folder.
    """
    path = Path(path)
    if path.is_dir():
        if is_beir_folder(path):
            return load_beir(path, split, corpus)
        if is_open_rag_folder(path):
            return load_open_rag(path, corpus)
        raise DataError(f"not a dataset folder; {FORMATS}", file=str(path))
    if not path.exists():
        raise missing_error(path)
    if path.suffix.lower() not in (".json", ".jsonl"):
        raise DataError(f"not a dataset; {FORMATS}", file=str(path))
    items = read_items(path)
    if set_format(items, str(path)) == "keyword":
        return load_keyword_set(path, items, corpus)
    return load_context_set(path, items, corpus)
