"""An on-disk cache of LLM calls: a re-run, or a run resumed after a crash, calls nothing
twice.

One SQLite file, by default ``$RAGMARK_HOME/llm/calls.sqlite``, in WAL mode, with one
table ``calls(key, provider, model, text, prompt_tokens, completion_tokens, seconds,
created)``. ``key`` is :func:`cache_key`: the sha256 of the canonical JSON of (provider,
base URL without credentials, model, messages, parameters), so the same model name served
by two servers never shares answers. No credential and no API key is part of it or stored.
Every row is committed as soon as its call completes. One connection, used from the
event-loop thread (asyncio tasks share it without locking: sqlite calls do not yield).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragmark.errors import RagmarkError
from ragmark.home import cache_path
from ragmark.llm.config import display_url

_SCHEMA = """
CREATE TABLE IF NOT EXISTS calls (
    key TEXT PRIMARY KEY,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    text TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    seconds REAL NOT NULL,
    created REAL NOT NULL,
    alternatives TEXT
) WITHOUT ROWID;
"""
_ADDED = (("alternatives", "TEXT"),)
"""Columns added since the table was first made: a cache made before gets them."""


def cache_key(
    provider: str,
    base_url: str,
    model: str,
    messages: Sequence[Mapping[str, Any]],
    params: Mapping[str, Any],
) -> str:
    """Hex sha256 of the canonical JSON (sorted keys, no spaces) of the call.

    ``base_url`` enters without its user:password part and without a trailing slash, so
    credentials never reach the key and ``http://h/v1/`` is ``http://h/v1``.
    """
    payload = {
        "provider": provider,
        "base_url": display_url(base_url.strip()).rstrip("/"),
        "model": model,
        "messages": [dict(m) for m in messages],
        "params": dict(params),
    }
    blob = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class CachedCall:
    """A stored response."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    alternatives: str | None = None
    """Where the model hesitated (:func:`ragmark.llm.logprobs.encode`), when kept."""


class LLMCache:
    """The SQLite call cache; ``path`` defaults to ``cache_path("llm", "calls.sqlite")``,
    resolved (and the file opened) at first use."""

    def __init__(self, path: str | Path | None = None) -> None:
        self._path = Path(path) if path is not None else None
        self._con: sqlite3.Connection | None = None

    @property
    def path(self) -> Path:
        if self._path is None:
            self._path = cache_path("llm", "calls.sqlite")
        return self._path

    def _connection(self) -> sqlite3.Connection:
        if self._con is None:
            path = self.path
            path.parent.mkdir(parents=True, exist_ok=True)
            try:
                con = sqlite3.connect(path, timeout=60)
                con.execute("PRAGMA journal_mode=WAL")
                con.execute("PRAGMA synchronous=NORMAL")
                con.executescript(_SCHEMA)
                have = {row[1] for row in con.execute("PRAGMA table_info(calls)")}
                for name, kind in _ADDED:
                    if name not in have:
                        con.execute(f"ALTER TABLE calls ADD COLUMN {name} {kind}")
            except sqlite3.DatabaseError as e:
                raise self._damaged(e) from None
            self._con = con
        return self._con

    def _damaged(self, e: Exception) -> RagmarkError:
        return RagmarkError(
            f"the LLM cache {self.path} cannot be used ({e}); delete the file to start a "
            "fresh cache"
        )

    def get(self, key: str) -> CachedCall | None:
        """The stored response for ``key``, or None."""
        try:
            cur = self._connection().execute(
                "SELECT text, prompt_tokens, completion_tokens, seconds, alternatives "
                "FROM calls WHERE key = ?",
                (key,),
            )
            row = cur.fetchone()
        except sqlite3.DatabaseError as e:
            raise self._damaged(e) from None
        if row is None:
            return None
        return CachedCall(str(row[0]), int(row[1]), int(row[2]), float(row[3]),
                          None if row[4] is None else str(row[4]))

    def put(
        self,
        key: str,
        *,
        provider: str,
        model: str,
        text: str,
        prompt_tokens: int,
        completion_tokens: int,
        seconds: float,
        alternatives: str | None = None,
    ) -> None:
        """Store one response and commit it at once."""
        con = self._connection()
        try:
            con.execute(
                "INSERT OR REPLACE INTO calls (key, provider, model, text, prompt_tokens, "
                "completion_tokens, seconds, created, alternatives) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    key,
                    provider,
                    model,
                    text,
                    int(prompt_tokens),
                    int(completion_tokens),
                    float(seconds),
                    time.time(),
                    alternatives,
                ),
            )
            con.commit()
        except sqlite3.DatabaseError as e:
            raise self._damaged(e) from None

    def __len__(self) -> int:
        return int(self._connection().execute("SELECT COUNT(*) FROM calls").fetchone()[0])

    def close(self) -> None:
        """Close the connection (reopened on next use)."""
        if self._con is not None:
            self._con.close()
            self._con = None
