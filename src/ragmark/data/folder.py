"""A corpus from a folder of text files: one document per ``.txt`` or ``.md`` file."""

from __future__ import annotations

import os
from pathlib import Path

from ragmark.data._read import read_text
from ragmark.errors import DataError
from ragmark.types import Corpus, Document

SUFFIXES = (".txt", ".md")


def _files(folder: Path) -> list[tuple[str, Path]]:
    """(id, path) of every text file under ``folder``, hidden files and folders skipped."""
    found: list[tuple[str, Path]] = []
    others: set[str] = set()

    def fail(exc: OSError) -> None:
        raise DataError(f"cannot read the folder: {exc.strerror}", file=exc.filename)

    for root, dirs, names in os.walk(folder, onerror=fail):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in names:
            if name.startswith("."):
                continue
            path = Path(root, name)
            if path.suffix.lower() in SUFFIXES:
                found.append((path.relative_to(folder).as_posix(), path))
            elif path.suffix:
                others.add(path.suffix.lower())
    if not found:
        seen = f" (found only {', '.join(sorted(others))} files)" if others else ""
        raise DataError(f"the corpus is empty: no .txt or .md files{seen}", file=str(folder))
    return sorted(found)


def load_text_folder(folder: Path) -> Corpus:
    """Documents sorted by id; the id is the path relative to ``folder`` with ``/``."""
    documents = []
    for doc_id, path in _files(folder):
        text = read_text(path)
        if not text.strip():
            raise DataError("the file is empty; a document needs text", file=str(path))
        documents.append(Document(id=doc_id, text=text))
    return Corpus(documents=tuple(documents), source=str(folder))
