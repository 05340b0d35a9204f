"""The label store of ``ragmark annotate``: queues of items and people's labels, in one
SQLite file beside the run history (``.ragmark/labels.sqlite``).

Every label is committed before the page is told it was saved (WAL, ``synchronous =
FULL``): a server killed with ``kill -9`` loses nothing it acknowledged. A person's
label of an item is one row (``queue``, ``item``, ``annotator``): labelling again
replaces it, ``undo`` removes the person's last one; a skip is a row with no label, so
the item is not offered again and counts as nobody's label.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ragmark.errors import ConfigError
from ragmark.history import history_path
from ragmark.sqlite import open_store

SCHEMA = 1
_TABLES = """
CREATE TABLE IF NOT EXISTS queues (
    name TEXT PRIMARY KEY,
    task TEXT NOT NULL,
    source TEXT NOT NULL,
    settings TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS items (
    queue TEXT NOT NULL REFERENCES queues(name) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    item_id TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (queue, item_id)
);
CREATE TABLE IF NOT EXISTS labels (
    queue TEXT NOT NULL,
    item_id TEXT NOT NULL,
    annotator TEXT NOT NULL,
    label REAL,
    note TEXT NOT NULL DEFAULT '',
    at TEXT NOT NULL,
    seq INTEGER NOT NULL,
    PRIMARY KEY (queue, item_id, annotator),
    FOREIGN KEY (queue, item_id) REFERENCES items(queue, item_id) ON DELETE CASCADE
);
"""


def labels_path(history: str | Path | None = None, store: str | Path | None = None) -> Path:
    """The label store: ``store`` (``--store``) when given, else the one beside the run
    history (``--history`` or its default). Every command that reads or writes the
    store names it so."""
    if store is not None:
        return Path(store)

    return history_path(history).parent / "labels.sqlite"


def _prepare(con: sqlite3.Connection, p: Path) -> None:
    found = con.execute("PRAGMA user_version").fetchone()[0]
    if found > SCHEMA:
        raise ConfigError(f"the label store {p} has schema {found}, newer than this "
                          f"ragmark ({SCHEMA}); upgrade ragmark")
    if found < SCHEMA:
        con.executescript(f"BEGIN; {_TABLES} PRAGMA user_version = {SCHEMA}; COMMIT;")


def connect(path: str | Path, *, create: bool = True
            ) -> AbstractContextManager[sqlite3.Connection]:
    """A connection to the store at ``path`` (made when ``create``), in WAL mode with
    every commit synced."""
    return open_store(path, "the label store", create=create, prepare=_prepare,
                      synchronous="FULL", missing="no label store at {path}; label with "
                      "'ragmark annotate SOURCE' first, or name the store as annotate "
                      "did: --store PATH, or the --history it sits beside")


@dataclass(frozen=True)
class Queue:
    """A queue: its ``name``, ``task`` (the metric whose verdict people give), the
    ``source`` file its items came from, and its ``settings`` (choices, overlap, the
    sample drawn, whether the judge is shown)."""

    name: str
    task: str
    source: str
    settings: Mapping[str, Any]


@dataclass(frozen=True)
class Label:
    """One person's label of one item (``value`` None: skipped)."""

    queue: str
    item: str
    annotator: str
    value: float | None
    note: str
    at: str


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def create_queue(path: str | Path, queue: Queue, items: Sequence[Mapping[str, Any]]
                 ) -> bool:
    """Make ``queue`` with ``items`` (each with an ``id``); False when a queue of that
    name holds the same task, source and items already (it resumes). A queue of that
    name that differs is an error naming what differs."""
    with connect(path) as con:
        row = con.execute("SELECT task, source FROM queues WHERE name = ?",
                          (queue.name,)).fetchone()
        if row is not None:
            ids = [r[0] for r in con.execute(
                "SELECT item_id FROM items WHERE queue = ? ORDER BY position", (queue.name,))]
            if (row[0], row[1]) == (queue.task, queue.source) and ids == [
                    str(it["id"]) for it in items]:
                return False
            raise ConfigError(
                f"queue {queue.name!r} exists with other items (task {row[0]}, source "
                f"{row[1]}, {len(ids)} items): give another --queue, or the same "
                "--task, --sample and --seed to resume it")
        con.execute("BEGIN IMMEDIATE")
        try:
            con.execute("INSERT INTO queues VALUES (?, ?, ?, ?, ?)",
                        (queue.name, queue.task, queue.source,
                         json.dumps(dict(queue.settings)), _now()))
            con.executemany("INSERT INTO items VALUES (?, ?, ?, ?)",
                            [(queue.name, i, str(it["id"]), json.dumps(dict(it)))
                             for i, it in enumerate(items)])
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
    return True


def get_queue(path: str | Path, name: str) -> Queue:
    with connect(path, create=False) as con:
        row = con.execute("SELECT name, task, source, settings FROM queues WHERE name = ?",
                          (name,)).fetchone()
        known = [r[0] for r in con.execute("SELECT name FROM queues ORDER BY created_at")]
    if row is None:
        raise ConfigError(f"no queue {name!r} in the label store {path}; it has: "
                          f"{', '.join(known) or 'none'}")
    return Queue(row[0], row[1], row[2], json.loads(row[3]))


def queue_names(path: str | Path) -> list[str]:
    with connect(path, create=False) as con:
        return [r[0] for r in con.execute("SELECT name FROM queues ORDER BY created_at")]


def items(path: str | Path, queue: str) -> list[dict[str, Any]]:
    """The queue's items, in order."""
    with connect(path, create=False) as con:
        return [json.loads(r[0]) for r in con.execute(
            "SELECT body FROM items WHERE queue = ? ORDER BY position", (queue,))]


def put_label(path: str | Path, label: Label) -> Label:
    """Store ``label`` (replacing the person's earlier label of the item), committed and
    synced before this returns; the item must be in the queue."""
    with connect(path) as con:
        con.execute("BEGIN IMMEDIATE")
        try:
            if con.execute("SELECT 1 FROM items WHERE queue = ? AND item_id = ?",
                           (label.queue, label.item)).fetchone() is None:
                raise ConfigError(f"no item {label.item!r} in queue {label.queue!r}")
            seq = con.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM labels").fetchone()[0]
            con.execute("INSERT OR REPLACE INTO labels VALUES (?, ?, ?, ?, ?, ?, ?)",
                        (label.queue, label.item, label.annotator, label.value, label.note,
                         label.at or _now(), seq))
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
    return label


def undo(path: str | Path, queue: str, annotator: str) -> str | None:
    """Remove the person's last label (or skip) in ``queue``; the item it was of, or
    None when there is none."""
    with connect(path) as con:
        con.execute("BEGIN IMMEDIATE")
        row = con.execute("SELECT item_id FROM labels WHERE queue = ? AND annotator = ? "
                          "ORDER BY seq DESC LIMIT 1", (queue, annotator)).fetchone()
        if row is not None:
            con.execute("DELETE FROM labels WHERE queue = ? AND item_id = ? AND "
                        "annotator = ?", (queue, row[0], annotator))
        con.execute("COMMIT")
    return None if row is None else str(row[0])


def labels(path: str | Path, queue: str) -> list[Label]:
    """Every label and skip of ``queue``, in the order they were given."""
    with connect(path, create=False) as con:
        return [Label(*r) for r in con.execute(
            "SELECT queue, item_id, annotator, label, note, at FROM labels WHERE queue = ? "
            "ORDER BY seq", (queue,))]


def label_rows(path: str | Path, queue: str) -> list[dict[str, Any]]:
    """Every label of ``queue`` with its item (skips left out), in the order given: id,
    question, answer, contexts, expected_answer, metric, judge, human (the label),
    annotator, note, labelled_at; a preference's also answer_b, contexts_b and the two
    configs' names a and b."""
    by_id = {str(it["id"]): it for it in items(path, queue)}
    out = []
    for lab in labels(path, queue):
        if lab.value is None:
            continue
        it = by_id[lab.item]
        out.append({"id": lab.item, "question": it["question"],
                    "answer": it.get("claim") or it["answer"],  # a claim is judged alone
                    "contexts": list(it["contexts"]),
                    "expected_answer": it.get("expected_answer") or "",
                    "metric": it["metric"], "judge": it["judge"], "human": lab.value,
                    "annotator": lab.annotator, "note": lab.note, "labelled_at": lab.at,
                    **({"answer_b": it["answer_b"], "contexts_b": list(it["contexts_b"]),
                        "a": it.get("a"), "b": it.get("b")} if "answer_b" in it else {})})
    return out


STORE_PREFIX = "store:"
"""``--human-labels store:QUEUE`` and ``judge-eval store:QUEUE`` read a queue's labels
from the label store beside the run history."""


def queue_of(given: str | Path) -> str | None:
    """The queue a ``store:QUEUE`` argument names; None for a file."""
    text = str(given)
    return text[len(STORE_PREFIX):] if text.startswith(STORE_PREFIX) else None
