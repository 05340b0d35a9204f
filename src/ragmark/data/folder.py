"""A corpus from a folder of text files: one document per ``.txt`` or ``.md`` file."""

from __future__ import annotations

import os
from pathlib import Path

from ragmark.data.files import NotUTF8Error, read_text
from ragmark.data.leniency import Leniency
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


EMPTY_FILES = "empty files left out of the index (kept in the ground truth)"
NOT_UTF8 = "files that are not UTF-8, skipped (give --encoding NAME to read them)"


def load_text_folder(folder: Path, lenient: Leniency | None = None) -> Corpus:
    """Documents sorted by id; the id is the path relative to ``folder`` with ``/``.

    An empty file is left out of the index with a warning (a ground truth may still name
    it); a file that is not UTF-8 is skipped alike with a warning naming it and the byte
    offset, or read with ``lenient.encoding`` when one is given."""
    lenient = lenient or Leniency()
    documents = []
    empty = []
    for doc_id, path in _files(folder):
        try:
            text = read_text(path, lenient.encoding)
        except NotUTF8Error as e:
            lenient.warn(NOT_UTF8, f"{doc_id} (byte offset {e.offset})", e)
            empty.append(doc_id)  # a ground truth may name it: a target never retrieved
            continue
        if not text.strip():
            lenient.warn(EMPTY_FILES, doc_id, DataError("the file is empty; a document needs "
                                                        "text", file=str(path)))
            empty.append(doc_id)
            continue
        documents.append(Document(id=doc_id, text=text))
    if not documents:
        raise DataError("the corpus is empty: no readable .txt or .md file with text",
                        file=str(folder))
    return Corpus(documents=tuple(documents), source=str(folder), left_out=frozenset(empty))
