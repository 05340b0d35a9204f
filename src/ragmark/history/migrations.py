"""The history store's schema, as numbered migrations applied once each, in order.

Each migration is recorded in ``schema_migrations`` in the same transaction as its
changes, so a store is always at one version. Never edit a migration that has shipped:
add the next one.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime

MIGRATIONS: list[tuple[int, str, str]] = [
    (1, "runs, their configs and aggregates", """
        CREATE TABLE runs (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            kind TEXT NOT NULL,
            created_at TEXT NOT NULL,
            ragmark TEXT NOT NULL,
            git_commit TEXT,
            dataset_name TEXT NOT NULL,
            dataset_hash TEXT NOT NULL,
            config_hash TEXT NOT NULL,
            questions INTEGER NOT NULL,
            envelope TEXT NOT NULL,
            results_path TEXT
        );
        CREATE TABLE run_configs (
            run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            name TEXT NOT NULL,
            config_hash TEXT NOT NULL,
            config TEXT NOT NULL,
            PRIMARY KEY (run_id, name)
        );
        CREATE TABLE aggregates (
            run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            config TEXT NOT NULL,
            metric TEXT NOT NULL,
            value REAL,
            n INTEGER NOT NULL,
            missing INTEGER NOT NULL,
            reasons TEXT NOT NULL,
            PRIMARY KEY (run_id, config, metric)
        );
        CREATE INDEX run_configs_by_name ON run_configs(name, run_id);
    """),
    (2, "per-question values and question texts", """
        CREATE TABLE questions (
            run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            query_id TEXT NOT NULL,
            question TEXT NOT NULL,
            PRIMARY KEY (run_id, query_id)
        );
        CREATE TABLE query_values (
            run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            config TEXT NOT NULL,
            query_id TEXT NOT NULL,
            metric TEXT NOT NULL,
            value REAL,
            reason TEXT,
            PRIMARY KEY (run_id, config, metric, query_id)
        ) WITHOUT ROWID;
    """),
    (3, "the gates' verdict of each run", """
        ALTER TABLE runs ADD COLUMN verdict TEXT;
    """),
    (4, "ragmark monitor: each source's cursor and the records it evaluated", """
        CREATE TABLE monitor_cursors (
            source TEXT PRIMARY KEY,
            state TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );
        CREATE TABLE monitor_seen (
            source TEXT NOT NULL,
            record_id TEXT NOT NULL,
            run_id INTEGER,
            PRIMARY KEY (source, record_id)
        ) WITHOUT ROWID;
    """),
    (5, "retention: the runs whose per-question values were pruned", """
        CREATE TABLE pruned (
            run_id INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
            pruned_at TEXT NOT NULL
        );
        CREATE INDEX runs_by_created ON runs(created_at);
    """),
    (6, "label runs: precision@k and recall@k are judged_precision@k and relative_recall@k",
     "".join(f"""
        UPDATE {table} SET metric = '{new}' || substr(metric, {len(old) + 1})
            WHERE metric LIKE '{old}@%'
            AND run_id IN (SELECT id FROM runs WHERE kind = 'label');"""
             for table in ("aggregates", "query_values")
             for old, new in (("precision", "judged_precision"),
                              ("recall", "relative_recall")))),
    (7, "a compare's pairwise verdicts (--pairwise), as its results file holds them", """
        ALTER TABLE runs ADD COLUMN pairwise TEXT;
    """),
    (8, "an agent's trajectory per question (its steps as the results file holds them)", """
        CREATE TABLE trajectories (
            run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            config TEXT NOT NULL,
            query_id TEXT NOT NULL,
            steps TEXT NOT NULL,
            PRIMARY KEY (run_id, config, query_id)
        ) WITHOUT ROWID;
    """),
]
LATEST = MIGRATIONS[-1][0]


def version(con: sqlite3.Connection) -> int:
    """The store's schema version (0 for an empty store)."""
    has = con.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND "
                      "name = 'schema_migrations'").fetchone()
    if has is None:
        return 0
    row = con.execute("SELECT MAX(version) FROM schema_migrations").fetchone()
    return int(row[0] or 0)


def migrate(con: sqlite3.Connection, upto: int = LATEST) -> list[int]:
    """Apply the migrations after the store's version, up to ``upto``, each in its own
    transaction; returns the versions applied."""
    con.execute("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, "
                "description TEXT NOT NULL, applied_at TEXT NOT NULL)")
    applied = []
    for number, description, sql in MIGRATIONS:
        if number > upto:
            break
        con.execute("BEGIN IMMEDIATE")
        try:
            if version(con) >= number:  # another process got there first
                con.execute("ROLLBACK")
                continue
            for statement in sql.split(";"):
                if statement.strip():
                    con.execute(statement)
            con.execute("INSERT INTO schema_migrations VALUES (?, ?, ?)",
                        (number, description, datetime.now(UTC).isoformat(timespec="seconds")))
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        applied.append(number)
    return applied
