"""The run history: every run, compare and label, in one SQLite file.

Default ``.ragmark/history.sqlite`` in the current folder (the project), or
``RAGMARK_HISTORY``. A run is recorded in one transaction once it has completed and
written its files: a killed run leaves no half record. The file is in WAL mode and
writers wait for each other (``busy_timeout``), so concurrent runs can record.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ragmark.errors import ConfigError
from ragmark.history.migrations import LATEST, migrate, version
from ragmark.metrics.names import read_name
from ragmark.results.model import Aggregate, RunReport
from ragmark.sqlite import open_store
from ragmark.types import Score
from ragmark.versions import canonical_hash

HISTORY_ENV = "RAGMARK_HISTORY"
DEFAULT_PATH = Path(".ragmark") / "history.sqlite"


def history_path(given: str | Path | None = None) -> Path:
    """``given``, else ``$RAGMARK_HISTORY``, else ``.ragmark/history.sqlite`` here."""
    if given is not None:
        return Path(given)
    env = os.environ.get(HISTORY_ENV, "").strip()
    return Path(env) if env else DEFAULT_PATH


@dataclass
class ConfigResult:
    """What is recorded of one config: its config as in the results file, its aggregates,
    per question its metric values (question id -> metric -> Score), and an agent's
    trajectory per question (question id -> its steps as the results file holds them)."""

    config: Mapping[str, Any]
    metrics: Mapping[str, Aggregate]
    values: Mapping[str, Mapping[str, Score]] = field(default_factory=dict)
    trajectories: Mapping[str, Sequence[Mapping[str, Any]]] = field(default_factory=dict)

    @classmethod
    def of(cls, report: RunReport) -> ConfigResult:
        """What a run's report records: its values, and the trajectories its questions
        have."""
        return cls(report.config, report.metrics,
                   {q.id: dict(q.metrics) for q in report.queries}, report.trajectories())


@dataclass(frozen=True)
class RunRow:
    """One recorded run, as listed."""

    id: int
    kind: str
    created_at: str
    dataset_name: str
    dataset_hash: str
    git_commit: str | None
    questions: int
    configs: tuple[str, ...]
    results_path: str | None
    verdict: str | None = None
    """``passed`` or ``failed`` (its gates, exit 0 or 1), ``accepted`` (failed, then
    accepted with ``ragmark history accept``), None for runs recorded before verdicts."""


def _prepare(con: sqlite3.Connection, p: Path) -> None:
    if version(con) > LATEST:
        raise ConfigError(f"the run history {p} has schema {version(con)}, newer than "
                          f"this ragmark ({LATEST}); upgrade ragmark")
    migrate(con)


def connect(path: str | Path, *, create: bool = True
            ) -> AbstractContextManager[sqlite3.Connection]:
    """A connection to the store at ``path``, migrated to the latest schema."""
    return open_store(path, "the run history", create=create, prepare=_prepare,
                      missing="no run history at {path}; run 'ragmark run' or 'ragmark "
                      "compare' first (or give --history PATH)")


@dataclass(frozen=True)
class Cursor:
    """Where ``ragmark monitor`` is in one source: its ``state`` after a window (what
    was read), the ``previous`` state it started from (the update is refused when
    another invocation moved the cursor meanwhile), and the records it evaluated
    (``seen``: their ids, for sources read by record id)."""

    source: str
    state: Mapping[str, Any]
    previous: Mapping[str, Any] | None
    seen: Sequence[str] = ()


@dataclass(frozen=True)
class Also:
    """What :func:`record` records with a run in its transaction: a monitor source's
    ``cursor``, a compare's ``pairwise`` verdicts (the round robin's report)."""

    cursor: Cursor | None = None
    pairwise: Mapping[str, Any] | None = None


class CursorMoved(ConfigError):
    """Another ``ragmark monitor`` moved this source's cursor since this one read it."""


def cursor_state(path: str | Path, source: str) -> dict[str, Any] | None:
    """The source's cursor state (None: never monitored)."""
    with connect(path) as con:
        row = con.execute("SELECT state FROM monitor_cursors WHERE source = ?",
                          (source,)).fetchone()
    return None if row is None else dict(json.loads(row[0]))


def seen_among(path: str | Path, source: str, ids: Sequence[str]) -> set[str]:
    """The ids among ``ids`` that a window of the source evaluated already."""
    out: set[str] = set()
    with connect(path) as con:
        for a in range(0, len(ids), 500):
            part = list(ids[a : a + 500])
            marks = ",".join("?" * len(part))
            out |= {r for (r,) in con.execute(
                f"SELECT record_id FROM monitor_seen WHERE source = ? AND record_id IN "
                f"({marks})", (source, *part))}
    return out


def _move_cursor(con: sqlite3.Connection, c: Cursor, run_id: int | None) -> None:
    row = con.execute("SELECT state FROM monitor_cursors WHERE source = ?",
                      (c.source,)).fetchone()
    now = json.loads(row[0]) if row is not None else None
    if now != (dict(c.previous) if c.previous is not None else None):
        raise CursorMoved(f"another ragmark monitor evaluated {c.source} meanwhile: this "
                          "window is not recorded (run it again for the records left)")

    con.execute("INSERT INTO monitor_cursors VALUES (?, ?, ?) ON CONFLICT(source) DO UPDATE "
                "SET state = excluded.state, updated_at = excluded.updated_at",
                (c.source, json.dumps(dict(c.state)),
                 datetime.now(UTC).isoformat(timespec="seconds")))
    con.executemany("INSERT OR IGNORE INTO monitor_seen VALUES (?, ?, ?)",
                    [(c.source, r, run_id) for r in c.seen])


def move_cursor(path: str | Path, cursor: Cursor) -> None:
    """Move a source's cursor without a window (records read, none to evaluate)."""
    with connect(path) as con:
        con.execute("BEGIN IMMEDIATE")
        try:
            _move_cursor(con, cursor, None)
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise


def record(path: str | Path, envelope: Mapping[str, Any], dataset_name: str,
           questions: Sequence[tuple[str, str]], configs: Mapping[str, ConfigResult],
           results_path: str | None = None, verdict: str | None = None,
           also: Also | None = None) -> int:
    """Record one completed run, compare, label or monitor window, with its gates'
    ``verdict`` (passed or failed); returns its id. What ``also`` holds is recorded in
    the same transaction (a window moves its source's cursor; a compare keeps its
    pairwise verdicts): all of it, or nothing."""
    cursor = None if also is None else also.cursor
    pairwise = None if also is None else also.pairwise
    with connect(path) as con:
        con.execute("BEGIN IMMEDIATE")
        try:
            more = () if pairwise is None else (json.dumps(dict(pairwise)),)
            cur = con.execute(
                "INSERT INTO runs (kind, created_at, ragmark, git_commit, dataset_name, "
                "dataset_hash, config_hash, questions, envelope, results_path, verdict"
                + (", pairwise" if more else "") + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?"
                + (", ?" if more else "") + ")",
                (envelope["kind"], envelope["created_at"], envelope["ragmark"],
                 envelope.get("git_commit"), dataset_name, envelope["dataset_hash"],
                 envelope["config_hash"], len(questions), json.dumps(dict(envelope)),
                 results_path, verdict, *more))
            run_id = int(cur.lastrowid or 0)
            con.executemany("INSERT INTO questions VALUES (?, ?, ?, ?)",
                            [(run_id, i, qid, text) for i, (qid, text) in enumerate(questions)])
            for pos, (name, c) in enumerate(configs.items()):
                con.execute("INSERT INTO run_configs VALUES (?, ?, ?, ?, ?)",
                            (run_id, pos, name, canonical_hash(c.config),
                             json.dumps(c.config, default=str)))
                con.executemany(
                    "INSERT INTO aggregates VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [(run_id, name, m, a.value, a.n, a.missing, json.dumps(a.reasons))
                     for m, a in c.metrics.items()])
                con.executemany(
                    "INSERT INTO query_values VALUES (?, ?, ?, ?, ?, ?)",
                    [(run_id, name, qid, m, s.value, s.reason)
                     for qid, scores in c.values.items() for m, s in scores.items()])
                if c.trajectories:  # an agent's (a store before schema 8 has none)
                    con.executemany(
                        "INSERT INTO trajectories VALUES (?, ?, ?, ?)",
                        [(run_id, name, qid, json.dumps(list(steps), ensure_ascii=False))
                         for qid, steps in c.trajectories.items()])
            if cursor is not None:
                _move_cursor(con, cursor, run_id)
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
    return run_id


def list_runs(path: str | Path, *, dataset: str | None = None, config: str | None = None,
              kind: str | None = None, since: str | None = None, metric: str | None = None,
              limit: int | None = None, run_id: int | None = None) -> list[RunRow]:
    """Recorded runs, newest first; ``dataset`` matches the name or a hash prefix,
    ``config`` a config name, ``metric`` keeps runs that computed it, ``since`` an ISO
    date or time (runs created at or after it)."""
    where: list[str] = []
    args: list[Any] = []
    if run_id is not None:
        where.append("r.id = ?")
        args.append(run_id)
    if dataset:
        where.append("(r.dataset_name = ? OR r.dataset_hash LIKE ?)")
        args += [dataset, f"{dataset}%"]
    if config:
        where.append("EXISTS (SELECT 1 FROM run_configs c WHERE c.run_id = r.id AND "
                     "c.name = ?)")
        args.append(config)
    if kind:
        where.append("r.kind = ?")
        args.append(kind)
    if since:
        where.append("r.created_at >= ?")
        args.append(since)
    if metric:
        where.append("EXISTS (SELECT 1 FROM aggregates a WHERE a.run_id = r.id AND "
                     "a.metric = ?)")
        args.append(metric)
    sql = ("SELECT r.id, r.kind, r.created_at, r.dataset_name, r.dataset_hash, r.git_commit, "
           "r.questions, r.results_path, (SELECT group_concat(name, char(31)) FROM "
           "(SELECT name FROM run_configs c WHERE c.run_id = r.id ORDER BY position)), "
           "r.verdict FROM runs r" + (" WHERE " + " AND ".join(where) if where else "")
           + " ORDER BY r.id DESC" + (f" LIMIT {int(limit)}" if limit else ""))
    with connect(path, create=False) as con:
        rows = con.execute(sql, args).fetchall()
    return [RunRow(r[0], r[1], r[2], r[3], r[4], r[5], r[6],
                   tuple((r[8] or "").split("\x1f")) if r[8] else (), r[7], r[9])
            for r in rows]


def accept(path: str | Path, run_id: int) -> RunRow:
    """Mark a run whose gates failed as accepted: ``last`` may then be it."""
    rows = list_runs(path, run_id=run_id)
    if not rows:
        raise ConfigError(f"no run {run_id} in the history ({path})")
    if rows[0].verdict != "failed":
        raise ConfigError(f"run {run_id} did not fail its gates (verdict: "
                          f"{rows[0].verdict or 'none recorded'}); only a failed run is "
                          "accepted")
    with connect(path) as con:
        con.execute("UPDATE runs SET verdict = 'accepted' WHERE id = ?", (run_id,))
    return list_runs(path, run_id=run_id)[0]


def aggregates(path: str | Path, run_id: int) -> dict[str, dict[str, Aggregate]]:
    """config -> metric -> Aggregate of one run."""
    with connect(path, create=False) as con:
        rows = con.execute("SELECT config, metric, value, n, missing, reasons FROM aggregates "
                           "WHERE run_id = ? ORDER BY rowid", (run_id,)).fetchall()
    out: dict[str, dict[str, Aggregate]] = {}
    for config, metric, value, n, missing, reasons in rows:
        out.setdefault(config, {})[metric] = Aggregate(value, n, missing, json.loads(reasons))
    return out


def at_depths(path: str | Path, metric: str) -> list[str]:
    """The recorded names of ``metric`` at a depth (``mrr`` -> ``mrr@10``, ``mrr@5``), the
    names a metric without a cutoff gets on ragmark's own ranking; most recorded first."""
    if read_name(metric).k is not None or not Path(path).is_file():
        return []
    with connect(path, create=False) as con:
        rows = con.execute("SELECT metric, COUNT(*) FROM aggregates WHERE metric LIKE ? "
                           "GROUP BY metric ORDER BY COUNT(*) DESC, metric",
                           (metric + "@%",)).fetchall()
    return [m for m, _ in rows]


def run_row(path: str | Path, run_id: int) -> tuple[RunRow, dict[str, Any], dict[str, Any]]:
    """A run's row, its envelope and its configs (name -> config as recorded)."""
    matches = list_runs(path, run_id=run_id)
    if not matches:
        raise ConfigError(f"no run {run_id} in the run history {path}")
    with connect(path, create=False) as con:
        env = con.execute("SELECT envelope FROM runs WHERE id = ?", (run_id,)).fetchone()[0]
        cfgs = con.execute("SELECT name, config FROM run_configs WHERE run_id = ? ORDER BY "
                           "position", (run_id,)).fetchall()
    return matches[0], json.loads(env), {n: json.loads(c) for n, c in cfgs}


def pairwise_of(path: str | Path, run_id: int) -> dict[str, Any] | None:
    """A compare's pairwise verdicts as recorded (None: it judged none)."""
    with connect(path, create=False) as con:
        row = con.execute("SELECT pairwise FROM runs WHERE id = ?", (run_id,)).fetchone()
    if row is None:
        raise ConfigError(f"no run {run_id} in the run history {path}")
    return None if row[0] is None else dict(json.loads(row[0]))


def values(path: str | Path, run_id: int, config: str
           ) -> tuple[dict[str, str], dict[str, dict[str, float | None]]]:
    """(question id -> text in run order, metric -> question id -> value) of one config
    of one run."""
    with connect(path, create=False) as con:
        qs = con.execute("SELECT query_id, question FROM questions WHERE run_id = ? ORDER BY "
                         "position", (run_id,)).fetchall()
        rows = con.execute("SELECT metric, query_id, value FROM query_values WHERE run_id = ? "
                           "AND config = ?", (run_id, config)).fetchall()
        order = [m for (m,) in con.execute("SELECT metric FROM aggregates WHERE run_id = ? "
                                           "AND config = ? ORDER BY rowid", (run_id, config))]
    rank = {m: i for i, m in enumerate(order)}
    rows.sort(key=lambda r: rank.get(r[0], len(rank)))
    out: dict[str, dict[str, float | None]] = {}
    for metric, qid, value in rows:
        out.setdefault(metric, {})[qid] = value
    return dict(qs), out


def trajectories(path: str | Path, run_id: int, config: str
                 ) -> dict[str, list[dict[str, Any]]]:
    """question id -> the trajectory's steps (as a results file holds them) of one config
    of one run: the questions an agent answered."""
    with connect(path, create=False) as con:
        rows = con.execute("SELECT query_id, steps FROM trajectories WHERE run_id = ? AND "
                           "config = ?", (run_id, config)).fetchall()
    return {qid: json.loads(steps) for qid, steps in rows}


def trend(path: str | Path, config: str, metric: str, dataset: str | None = None
          ) -> list[tuple[RunRow, Aggregate]]:
    """The metric's aggregate over the runs of one config (oldest first), on one dataset:
    the given name or hash prefix, else the dataset of the config's newest run."""
    runs = list_runs(path, config=config, dataset=dataset, metric=metric)
    if not runs:
        return []
    ds_hash = runs[0].dataset_hash
    out = []
    for r in reversed(runs):
        if r.dataset_hash != ds_hash:
            continue
        agg = aggregates(path, r.id).get(config, {}).get(metric)
        if agg is not None:
            out.append((r, agg))
    return out
