"""Indexes that travel: a retriever's index saved to plain files (arrays + JSON) under
``RAGMARK_HOME/indexes/<key>``, and loaded instead of rebuilt.

The key hashes everything that shapes the index: the chunks (ids, documents, texts, so
the corpus and the chunker), the retriever's name and its ``index_state()`` (the
parameters that change the index, and the identity of any model), and the format
version. A changed corpus, chunker or parameter is another key, so a stale index is
never used. A retriever takes part by having ``index_state()``, ``save(folder)`` and
``load(folder)``; any other is indexed as before. An index is written to a temporary
folder and renamed into place, so a killed run never leaves half an index.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ragmark.home import cache_path
from ragmark.types import Chunk
from ragmark.versions import canonical_hash

FORMAT = 1
DONE = "index.json"


def chunks_hash(chunks: Sequence[Chunk]) -> str:
    """sha256 over every chunk's id, document id, section, offset and text."""
    h = hashlib.sha256()
    for c in chunks:
        for part in (c.id, c.doc_id, str(c.section), str(c.start), c.text):
            b = part.encode("utf-8", "surrogatepass")
            h.update(len(b).to_bytes(8, "little"))
            h.update(b)
    return h.hexdigest()


def index_key(retriever: Any, chunks_digest: str) -> str | None:
    """The cache key of ``retriever``'s index over the chunks, or None when the
    retriever cannot save its index."""
    state = getattr(retriever, "index_state", None)
    if state is None or not hasattr(retriever, "save") or not hasattr(retriever, "load"):
        return None
    got = state()
    if got is None:
        return None
    return canonical_hash({"format": FORMAT, "chunks": chunks_digest,
                           "retriever": retriever.name, "state": got})


def build_index(retriever: Any, chunks: Sequence[Chunk],
                progress: Callable[[int], None] | None = None, *, use_cache: bool = True,
                root: Path | None = None) -> str:
    """Index ``chunks`` with ``retriever``, loading a saved index when there is one and
    saving a new one; returns ``"loaded"``, ``"built"`` (and saved) or ``"not cached"``."""
    key = index_key(retriever, chunks_hash(chunks)) if use_cache else None
    if key is None:
        retriever.index(chunks, progress=progress)
        return "not cached"
    folder = (root or cache_path("indexes")) / key
    if (folder / DONE).is_file():
        retriever.load(folder)
        if progress is not None:
            progress(len(chunks) * int(getattr(retriever, "index_passes", 1)))
        return "loaded"
    retriever.index(chunks, progress=progress)
    tmp = folder.with_name(f"{folder.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        retriever.save(tmp)
        (tmp / DONE).write_text(json.dumps({"format": FORMAT, "retriever": retriever.name,
                                            "state": retriever.index_state(),
                                            "chunks": len(chunks)}, default=str),
                                encoding="utf-8")
        try:
            os.replace(tmp, folder)
        except OSError:  # another process saved the same index first: keep theirs
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return "built"
