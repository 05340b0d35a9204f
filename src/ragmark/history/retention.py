"""Retention: the run history's per-question values (the bulk of it: a value a metric a
question a run) dropped for runs older than a given age, as production tools keep
detail for a while and summaries for ever.

A pruned run keeps its aggregates (each metric's value, n, missing and reasons), its
gate verdict, its configs and its envelope, so ``history``, ``history trend``, the
monitor's trend page and the drift reference's older windows still read it; what it
loses is its question texts and per-question values (``diff``, paired gates and
``history show``'s questions need those). Never pruned: an accepted run (``history
accept``), and each dataset's newest run of each kind, which a regression gate or a
monitor's next window reads as its baseline.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from ragmark.errors import ConfigError
from ragmark.history.store import connect

_AGE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_age(text: str, option: str = "--older-than") -> timedelta:
    """``30d``, ``12h``, ``2w`` (s, m, h, d, w) as a duration; a ConfigError otherwise."""
    m = _AGE.match(text or "")
    if m is None or float(m.group(1)) <= 0:
        raise ConfigError(f"{option} {text!r}: expected a positive age such as 30d, 12h or "
                          "2w (s, m, h, d, w)")
    return timedelta(seconds=float(m.group(1)) * _UNITS[m.group(2)])


@dataclass(frozen=True)
class Pruned:
    """What a prune dropped (or, dry, would drop): the runs, their per-question values
    and question texts, and the store's size before and after (None when dry)."""

    runs: tuple[int, ...]
    values: int
    questions: int
    kept: int
    """Runs old enough but kept: accepted, or their dataset's newest of their kind."""
    size_before: int
    size_after: int | None = None

    def text(self, dry: bool) -> str:
        n = len(self.runs)
        what = (f"{n} run{'s' if n != 1 else ''}: {self.values:,} per-question values and "
                f"{self.questions:,} question texts")
        kept = (f"; {self.kept} old run{'s' if self.kept != 1 else ''} kept (accepted, or "
                "a baseline: its dataset's newest)") if self.kept else ""
        if dry:
            return f"would prune {what}{kept} (aggregates, verdicts and trends stay)"
        size = (f"; {self.size_before / 1e6:.1f} MB -> {(self.size_after or 0) / 1e6:.1f} MB"
                if self.size_after is not None else "")
        return f"pruned {what}{kept}{size} (aggregates, verdicts and trends stay)"


def to_prune(path: str | Path, older_than: timedelta, *, now: datetime | None = None,
             kind: str | None = None, dataset_hash: str | None = None) -> Pruned:
    """What :func:`prune` would drop: the runs created before ``now - older_than`` (of
    ``kind`` and ``dataset_hash`` when given) not pruned yet, but the accepted runs and
    the baselines, with their per-question values and question texts; nothing changed."""
    p = Path(path)
    size = p.stat().st_size if p.exists() else 0
    cutoff = ((now or datetime.now(UTC)) - older_than).isoformat(timespec="seconds")
    with connect(p, create=False) as con:
        where, args = ["r.created_at < ?"], [cutoff]
        if kind is not None:
            where.append("r.kind = ?")
            args.append(kind)
        if dataset_hash is not None:
            where.append("r.dataset_hash = ?")
            args.append(dataset_hash)
        old = [int(r) for (r,) in con.execute(
            f"SELECT r.id FROM runs r WHERE {' AND '.join(where)} AND r.id NOT IN "
            "(SELECT run_id FROM pruned)", args)]
        keep = _baselines(con)
        runs = tuple(rid for rid in old if rid not in keep)
        return Pruned(runs, _count(con, "query_values", runs), _count(con, "questions", runs),
                      sum(1 for rid in old if rid in keep), size)


def prune(path: str | Path, older_than: timedelta, *, now: datetime | None = None,
          kind: str | None = None, dataset_hash: str | None = None,
          vacuum: bool = True) -> Pruned:
    """Drop the per-question values, question texts and trajectories of the runs :func:`to_prune`
    names; VACUUM after (``vacuum``), so the file shrinks."""
    p = Path(path)
    plan = to_prune(p, older_than, now=now, kind=kind, dataset_hash=dataset_hash)
    if not plan.runs:
        return plan
    stamp = datetime.now(UTC).isoformat(timespec="seconds")
    with connect(p, create=False) as con:
        con.execute("BEGIN IMMEDIATE")
        try:
            for table in ("query_values", "questions", "trajectories"):
                for part in _parts(plan.runs):
                    con.execute(f"DELETE FROM {table} WHERE run_id IN "
                                f"({','.join('?' * len(part))})", part)
            con.executemany("INSERT OR IGNORE INTO pruned VALUES (?, ?)",
                            [(r, stamp) for r in plan.runs])
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        if vacuum:
            con.execute("VACUUM")
    return replace(plan, size_after=p.stat().st_size)


def _baselines(con: sqlite3.Connection) -> set[int]:
    """The runs a gate may read as a baseline: the accepted ones, and per kind, dataset
    and config the newest run, and the newest that did not fail."""
    keep: set[int] = set()
    newest: dict[tuple[str, str, str], int] = {}
    passing: dict[tuple[str, str, str], int] = {}
    for rid, kind, ds, verdict, name in con.execute(
            "SELECT r.id, r.kind, r.dataset_hash, r.verdict, c.name FROM runs r JOIN "
            "run_configs c ON c.run_id = r.id ORDER BY r.id"):
        key = (kind, ds, name)
        newest[key] = rid
        if verdict != "failed":
            passing[key] = rid
        if verdict == "accepted":
            keep.add(rid)
    return keep | set(newest.values()) | set(passing.values())


def _parts(ids: Sequence[int], size: int = 500) -> list[tuple[int, ...]]:
    return [tuple(ids[a : a + size]) for a in range(0, len(ids), size)]


def _count(con: sqlite3.Connection, table: str, runs: Sequence[int]) -> int:
    total = 0
    for part in _parts(runs):
        total += int(con.execute(
            f"SELECT COUNT(*) FROM {table} WHERE run_id IN ({','.join('?' * len(part))})",
            part).fetchone()[0])
    return total


def pruned_at(path: str | Path, run_id: int) -> str | None:
    """When the run's per-question values were pruned (None: they are kept)."""
    with connect(path, create=False) as con:
        row = con.execute("SELECT pruned_at FROM pruned WHERE run_id = ?",
                          (run_id,)).fetchone()
    return None if row is None else str(row[0])
