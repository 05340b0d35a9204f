"""Opening a SQLite store of ragmark's (the run history, the label store): made when
asked, in WAL mode, waiting for another writer rather than failing, foreign keys on; a
file that is not a store, or of a newer schema, is a ConfigError naming it."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ragmark.errors import ConfigError


@contextmanager
def open_store(path: str | Path, what: str, *, create: bool, missing: str,
               prepare: Callable[[sqlite3.Connection, Path], None],
               synchronous: str | None = None) -> Iterator[sqlite3.Connection]:
    """A connection to ``what`` (``the run history``) at ``path``; ``missing`` the
    error when it is not there and not ``create``; ``prepare(con, path)`` checks the
    schema and migrates it; ``synchronous`` (``FULL``: every commit synced) when set."""
    p = Path(path)
    if not p.exists() and not create:
        raise ConfigError(missing.format(path=p))
    p.parent.mkdir(parents=True, exist_ok=True)
    try:
        con = sqlite3.connect(p, timeout=30, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as e:
        raise ConfigError(f"cannot open {what} {p}: {e}") from None
    try:
        con.execute("PRAGMA journal_mode=WAL")
        if synchronous is not None:
            con.execute(f"PRAGMA synchronous={synchronous}")
        con.execute("PRAGMA busy_timeout=30000")
        con.execute("PRAGMA foreign_keys=ON")
        prepare(con, p)
        yield con
    except sqlite3.DatabaseError as e:
        raise ConfigError(f"{what} {p} cannot be used: {e}") from None
    finally:
        con.close()
