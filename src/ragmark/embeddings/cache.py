"""An on-disk embedding cache: a second run of the same texts encodes nothing.

One SQLite file, by default ``$RAGMARK_HOME/embeddings/vectors.sqlite``, in WAL mode:

- ``models(id, model_id, dim)``: one row per :attr:`Embedder.model_id`;
- ``vectors(model, hash, vec)``: ``hash`` is the sha256 of the UTF-8 text (32 bytes),
  ``vec`` the vector as little-endian float32 bytes; primary key ``(model, hash)``.

Rows are committed after every encoded batch, so a run that is killed keeps what it
had computed and the next run starts from there. Several processes may share the file.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from ragmark.embeddings.base import Embedder
from ragmark.errors import RagmarkError
from ragmark.executors import active
from ragmark.home import cache_path
from ragmark.progress import Advance

_SCHEMA = """
CREATE TABLE IF NOT EXISTS models (
    id INTEGER PRIMARY KEY,
    model_id TEXT NOT NULL UNIQUE,
    dim INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS vectors (
    model INTEGER NOT NULL,
    hash BLOB NOT NULL,
    vec BLOB NOT NULL,
    PRIMARY KEY (model, hash)
) WITHOUT ROWID;
"""
_LOOKUP_CHUNK = 500  # hashes per IN (...) list, well under SQLite's variable limit
_F32 = np.dtype("<f4")


def text_key(text: str) -> bytes:
    """The cache key of a text: sha256 of its UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


class CachedEmbedder:
    """Wraps an :class:`Embedder`; looks every text up by ``(model_id, sha256(text))``
    and encodes only the misses, each distinct text once, longest first, in batches of
    ``batch_size`` (default: the inner embedder's ``batch_size``, else 32), committing
    each batch as it completes.

    ``path`` is the SQLite file (default ``cache_path("embeddings", "vectors.sqlite")``,
    resolved at first use). ``progress`` receives the number of texts done: all cache
    hits at once, then each encoded batch (duplicates of a text count as done with it).
    ``stats`` counts texts served from the cache (``hits``) and distinct texts encoded
    (``encoded``) over the object's life.
    """

    def __init__(
        self,
        embedder: Embedder,
        path: str | Path | None = None,
        batch_size: int | None = None,
    ) -> None:
        self.embedder = embedder
        self._path = Path(path) if path is not None else None
        self.batch_size = int(batch_size or getattr(embedder, "batch_size", 32) or 32)
        self.stats = {"hits": 0, "encoded": 0}

    @property
    def path(self) -> Path:
        if self._path is None:
            self._path = cache_path("embeddings", "vectors.sqlite")
        return self._path

    @property
    def model_id(self) -> str:
        return self.embedder.model_id

    @property
    def remote(self) -> bool:
        """Whether the inner embedder asks an API (its batches then go out concurrently
        from this process, never to an executor's workers)."""
        return bool(getattr(self.embedder, "remote", False))

    def missing(self, texts: Sequence[str]) -> list[str]:
        """The distinct texts of ``texts`` that the cache does not hold for this model."""
        by_key = {text_key(t): t for t in texts}
        with self._connect() as con:
            model = self._find_model(con)
            found = {} if model is None else self._lookup(con, model, list(by_key))
        return [t for k, t in by_key.items() if k not in found]

    @property
    def dim(self) -> int:
        """The dimension, from the cache when known (so the model need not load)."""
        with self._connect() as con:
            row = con.execute(
                "SELECT dim FROM models WHERE model_id = ?", (self.model_id,)
            ).fetchone()
        return int(row[0]) if row else self.embedder.dim

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        path = self.path
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            with closing(sqlite3.connect(path, timeout=60)) as con:
                con.execute("PRAGMA journal_mode=WAL")
                con.execute("PRAGMA synchronous=NORMAL")
                con.executescript(_SCHEMA)
                yield con
        except sqlite3.DatabaseError as e:
            raise RagmarkError(
                f"the embedding cache {path} cannot be used ({e}); delete the file to "
                "start a fresh cache"
            ) from None

    def _find_model(self, con: sqlite3.Connection) -> tuple[int, int] | None:
        """``(id, dim)`` of this model in the cache, or None when it has no rows yet."""
        row = con.execute(
            "SELECT id, dim FROM models WHERE model_id = ?", (self.model_id,)
        ).fetchone()
        return None if row is None else (int(row[0]), int(row[1]))

    def _register_model(self, con: sqlite3.Connection, dim: int) -> tuple[int, int]:
        con.execute(
            "INSERT OR IGNORE INTO models (model_id, dim) VALUES (?, ?)", (self.model_id, dim)
        )
        con.commit()
        model = self._find_model(con)
        if model is None:  # pragma: no cover - the row was just written
            raise RagmarkError(f"cannot register model {self.model_id!r} in {self.path}")
        return model

    def encode(self, texts: Sequence[str], progress: Advance | None = None) -> NDArray[np.float32]:
        """Unit-norm embeddings of ``texts``, in order, from the cache where possible."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return self.encode_groups([texts], progress)[0]

    def encode_groups(self, groups: Sequence[Sequence[str]],
                      progress: Advance | None = None) -> list[NDArray[np.float32]]:
        """Each group's embeddings, as one :meth:`encode` call per group in turn would
        give them (a text is encoded in the batches of the first group that has it), but
        with every missing batch sent to the executor at once: a semantic chunker warms
        the cache for many documents in one go."""
        groups = [list(g) for g in groups]
        keys = [[text_key(t) for t in g] for g in groups]
        text_of: dict[bytes, str] = {}
        for g, ks in zip(groups, keys, strict=True):
            for t, k in zip(g, ks, strict=True):
                text_of.setdefault(k, t)
        with self._connect() as con:
            model = self._find_model(con)
            found = {} if model is None else self._lookup(con, model, list(text_of))
            hits = sum(1 for ks in keys for k in ks if k in found)
            self.stats["hits"] += hits
            if progress is not None and hits:
                progress(hits)
            batches: list[list[bytes]] = []
            planned: set[bytes] = set()
            for ks in keys:  # each group's missing texts, longest first, as encode() does
                missing = sorted((k for k in dict.fromkeys(ks)
                                  if k not in found and k not in planned),
                                 key=lambda k: -len(text_of[k]))
                planned.update(missing)
                batches += [missing[s : s + self.batch_size]
                            for s in range(0, len(missing), self.batch_size)]
            if batches:
                counts = Counter(k for ks in keys for k in ks)
                model = self._encode_missing(con, model, text_of, batches, found, counts,
                                             progress)
        dim = model[1] if model is not None else 0
        return [np.frombuffer(bytearray(b"".join(found[k] for k in ks)), dtype=_F32)
                .reshape(len(ks), dim).astype(np.float32, copy=False) for ks in keys]

    def _lookup(
        self, con: sqlite3.Connection, model: tuple[int, int], keys: list[bytes]
    ) -> dict[bytes, bytes]:
        model_key, dim = model
        found: dict[bytes, bytes] = {}
        for start in range(0, len(keys), _LOOKUP_CHUNK):
            part = keys[start : start + _LOOKUP_CHUNK]
            marks = ",".join("?" * len(part))
            rows = con.execute(
                f"SELECT hash, vec FROM vectors WHERE model = ? AND hash IN ({marks})",
                (model_key, *part),
            )
            # a row of the wrong length (a damaged file) counts as a miss and is rewritten
            found.update((h, v) for h, v in rows if len(v) == 4 * dim)
        return found

    def _encode_missing(
        self,
        con: sqlite3.Connection,
        model: tuple[int, int] | None,
        text_of: dict[bytes, str],
        batches: list[list[bytes]],
        found: dict[bytes, bytes],
        counts: Counter[bytes],
        progress: Advance | None,
    ) -> tuple[int, int]:
        """Encode the batches (the same ones whichever executor runs them: with Ray,
        groups of batches go to the workers), committing each group as it completes.
        Returns the model's ``(id, dim)``."""
        ex = active()
        remote = getattr(self.embedder, "encode_concurrent", None)
        # with workers: small tasks (one batch each, up to WORK_PER_TASK texts for a
        # large corpus), so the last ones finish together on every worker
        per_task = 1 if not ex.distributed or remote else max(1, min(
            WORK_PER_TASK // self.batch_size, -(-len(batches) // (64 * ex.slots))))
        groups = [[[text_of[k] for k in b] for b in batches[s : s + per_task]]
                  for s in range(0, len(batches), max(per_task, 1))]
        offsets = np.cumsum([0] + [len(g) for g in groups])
        registered = model

        def done(gi: int, got: list[NDArray[np.float32]]) -> None:
            nonlocal registered
            for batch, vecs in zip(batches[offsets[gi] : offsets[gi + 1]], got, strict=True):
                vecs = np.asarray(vecs)
                if registered is None and vecs.ndim == 2:
                    registered = self._register_model(con, int(vecs.shape[1]))
                dim = registered[1] if registered is not None else -1
                if vecs.shape != (len(batch), dim):
                    raise RagmarkError(
                        f"embedder {self.model_id!r} returned an array of shape {vecs.shape} "
                        f"for {len(batch)} texts; expected ({len(batch)}, {dim})"
                    )
                rows = [(registered[0], k, v.astype(_F32).tobytes())  # type: ignore[index]
                        for k, v in zip(batch, vecs, strict=True)]
                con.executemany(
                    "INSERT OR REPLACE INTO vectors (model, hash, vec) VALUES (?, ?, ?)", rows
                )
                con.commit()
                found.update((k, v) for _, k, v in rows)
                self.stats["encoded"] += len(batch)
                if progress is not None:
                    progress(sum(counts[k] for k in batch))

        if remote is not None:  # an API: its requests go out concurrently from here
            remote([g[0] for g in groups], lambda i, vecs: done(i, [vecs]))
        else:
            ex.map(encode_batches, (self.embedder, ex.distributed), groups, on_done=done)
        if registered is None:  # pragma: no cover - missing is never empty here
            raise RagmarkError(f"embedder {self.model_id!r} encoded nothing")
        return registered


WORK_PER_TASK = 256
"""Texts per task when an executor spreads the encoding (whole batches of them)."""
_LOADED: dict[str, Embedder] = {}


def encode_batches(shared: tuple[Embedder, bool],
                   batches: list[list[str]]) -> list[NDArray[np.float32]]:
    """Each batch's vectors, by one ``encode`` call per batch (an executor's work item).
    ``shared`` is the embedder and whether this runs in a worker process, where the
    embedder (and its loaded model) is kept for the next item."""
    embedder, worker = shared
    if worker:
        key = (f"{type(embedder).__qualname__}:{embedder.model_id}:"
               f"{getattr(embedder, 'threads', '')}")
        embedder = _LOADED.setdefault(key, embedder)
    return [np.asarray(embedder.encode(b), dtype=np.float32) for b in batches]
