"""The records of a monitored source that no earlier window evaluated.

A **log** (a JSONL file of logged outputs, one record a line, appended to) is read from
the byte after the last complete line the previous window took: a line still being
written is left for the next window. The cursor keeps that offset, the lines and records
before it, and a hash of the file's first bytes, so a log truncated or replaced is read
again from its start (with a note).

**Traces** (a file or a folder of OTLP JSON; the receiver's spool is one) are read by
record id: a trace is evaluated once its root span has arrived (the spans of a trace come
in several export requests, the root usually last) — a span without a parent, or one
whose parent is remote (a service behind an instrumented gateway, whose caller's span is
never exported here), or, when no span of the trace ended in the last ``root_wait``
seconds, the earliest orphan — and each evaluated trace id is kept. A span read twice
(an exporter's retry) is counted once.
Per file the cursor keeps how far it was read, and from where it must be read again
while a trace there waits for its root: a ``.jsonl`` file that only grew is read from
there, an unchanged file whose traces are all evaluated is not opened, any other file is
read whole.
"""

from __future__ import annotations

import gzip
import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from ragmark.data.files import Where, json_line
from ragmark.data.leniency import Leniency
from ragmark.data.otlp import NOT_JSON, Span, decode, file_requests
from ragmark.data.outputs import OutputsSet, outputs_of_items
from ragmark.data.traces import TraceKeys, feedback_of, gather, outputs_of, traces_set
from ragmark.errors import DataError

LOG, TRACES = "log", "traces"
HEAD = 4096
"""Bytes of a log's start whose hash tells the same log from a replaced one."""
TRACE_FILES = (".json", ".jsonl", ".json.gz", ".jsonl.gz")


@dataclass
class Batch:
    """What a window takes from its source: the new records (None: none), the cursor
    state after them, the trace ids to mark evaluated, notes, and how many traces still
    wait for their root span."""

    oset: OutputsSet | None
    state: dict[str, Any]
    seen: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    waiting: int = 0
    late: dict[str, float] = field(default_factory=dict)
    """Feedback that came after its trace was evaluated (trace id -> value), not yet
    counted in a window: the next recorded window counts it (kept in the cursor state
    until then)."""

    def counted(self) -> list[str]:
        """The marks to record with a window that counts :attr:`late` (each feedback
        once), and the state without it."""
        self.state = {k: v for k, v in self.state.items() if k != LATE}
        return [*self.seen, *(FEEDBACK_MARK + t for t in self.late)]


LATE = "late_feedback"
FEEDBACK_MARK = "feedback:"
"""A record id ``feedback:<trace id>`` in the history marks that trace's feedback as
counted (at its evaluation, or late), so a re-read or a second copy counts it once."""


def source_kind(path: Path) -> str:
    """``traces`` for a folder or a file of OTLP JSON (``resourceSpans`` in its first
    64 KiB), else ``log``."""
    if path.is_dir():
        return TRACES
    if not path.exists():
        raise DataError("no such file or folder", file=str(path))
    opener: Callable[..., Any] = gzip.open if path.name.endswith(".gz") else open
    try:
        with opener(path, "rb") as f:
            head = f.read(65536)
    except OSError as e:
        raise DataError(f"cannot be read: {e}", file=str(path)) from None
    return TRACES if b'"resourceSpans"' in head else LOG


def source_key(path: Path) -> str:
    """The source's identity in the history: its absolute path."""
    return str(path.resolve())


def _head_hash(path: Path, upto: int) -> str:
    with path.open("rb") as f:
        return hashlib.sha256(f.read(min(upto, HEAD))).hexdigest()


def read_log(path: Path, state: dict[str, Any], lenient: Leniency,
             search: Sequence[str] = ()) -> Batch:
    """The complete lines of a log after the cursor, as logged outputs."""
    offset, lines, records = (int(state.get(k, 0)) for k in ("offset", "lines", "records"))
    notes = []
    size = path.stat().st_size
    if offset and (size < offset or _head_hash(path, offset) != state.get("head")):
        notes.append(f"{path} was truncated or replaced since the last window: read from "
                     "its start")
        offset = lines = records = 0
    with path.open("rb") as f:
        f.seek(offset)
        data = f.read()
    end = data.rfind(b"\n") + 1  # a line still being written waits for the next window
    items = []
    for raw in data[:end].split(b"\n")[:-1]:
        lines += 1
        where = Where(str(path), line=lines)
        try:
            text = raw.decode(lenient.encoding or "utf-8")
        except UnicodeDecodeError as e:
            raise where.error(f"not UTF-8 text ({e.reason} at byte {e.start})") from None
        if text.strip():
            items.append((where, json_line(text, where)))
    new = {"kind": LOG, "offset": offset + end, "lines": lines,
           "records": records + len(items), "head": _head_hash(path, offset + end)}
    oset = outputs_of_items(items, path, lenient, first=records, search=search) \
        if items else None
    return Batch(oset, new, notes=notes)


def _trace_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    return sorted(p for p in path.rglob("*") if p.is_file() and p.name.endswith(TRACE_FILES))


def _read_lines(f: Path, start: int, lenient: Leniency
                ) -> tuple[list[tuple[int, list[Span]]], int]:
    """(line offset, its spans) of each complete line of an appended-to ``.jsonl`` from
    ``start``, and the offset after the last complete line."""
    with f.open("rb") as fh:
        fh.seek(start)
        data = fh.read()
    end = data.rfind(b"\n") + 1
    out = []
    pos = 0
    for raw in data[:end].split(b"\n")[:-1]:
        at = start + pos
        pos += len(raw) + 1
        if not raw.strip():
            continue
        where = f"{f}, byte {at}"
        spans = decode(raw, lenient, where)
        if spans is None:
            lenient.warn(NOT_JSON, where, DataError("not JSON (a truncated file?)", file=where))
            continue
        out.append((at, spans))
    return out, start + end


class At(NamedTuple):
    """Where an export request was read: a file and the byte its line starts at."""

    file: str
    offset: int

    def __str__(self) -> str:
        return f"{self.file}, byte {self.offset}"


def read_traces_since(path: Path, state: dict[str, Any], lenient: Leniency, keys: TraceKeys,
                      seen: Callable[[Sequence[str]], set[str]],
                      now: float | None = None) -> Batch:
    """The traces of ``path`` complete since the cursor and not evaluated yet (``now``:
    the time, in seconds since the epoch, that ``keys.root_wait`` is counted to)."""
    files: dict[str, dict[str, Any]] = dict(state.get("files") or {})
    requests: list[tuple[list[Span], At]] = []
    first_line: dict[tuple[str, str], int] = {}  # (file, trace) -> its first line read
    notes: list[str] = []
    read: dict[str, dict[str, Any]] = {}
    for f in _trace_files(path):
        name, size = str(f), f.stat().st_size
        prev = files.get(name)
        if f.name.endswith(".jsonl"):
            start = 0 if prev is None else (prev["resume"] if prev["resume"] is not None
                                            else prev["size"])
            if prev is not None and size < prev["size"]:
                notes.append(f"{f} shrank since the last window: read from its start")
                start = 0
            if prev is not None and start >= size:
                continue
            got, upto = _read_lines(f, start, lenient)
            read[name] = {"size": upto, "start": start}
        else:
            if prev is not None and prev["size"] == size and prev["resume"] is None:
                continue
            got = [(0, spans) for spans, _ in file_requests(f, lenient)]
            read[name] = {"size": size, "start": 0}
        requests.extend((spans, At(name, at)) for at, spans in got)

    def first(span: Span, at: At) -> None:
        first_line.setdefault((at.file, span.trace_id), at.offset)

    traces = gather(requests, lenient, first)
    by_trace = {t.trace_id: t for t in traces}
    evaluated = seen(list(by_trace)) if by_trace else set()
    waited = None if keys.root_wait is None else int(
        ((time.time() if now is None else now) - keys.root_wait) * 1e9)
    complete = [t for t in traces if any(not s.parent_id or s.remote_parent for s in t.spans)
                or (waited is not None and max(s.end for s in t.spans) <= waited)]
    # a trace evaluated before is done, even when only its late spans were read again
    done = {t.trace_id for t in complete} | evaluated
    new = [t for t in complete if t.trace_id not in evaluated]
    late = dict(state.get(LATE) or {})
    again = [t for t in traces if t.trace_id in evaluated and t.trace_id not in late]
    given = {t.trace_id: v for t in again if (v := feedback_of(t, keys)) is not None}
    if given:
        counted = seen([FEEDBACK_MARK + t for t in given])
        late |= {t: v for t, v in given.items() if FEEDBACK_MARK + t not in counted}
    for name, r in read.items():
        waits = [at for (fname, tid), at in first_line.items()
                 if fname == name and tid not in done]
        files[name] = {"size": r["size"], "resume": min(waits) if waits else None}
    waiting = len(traces) - len(done & set(by_trace))
    if waiting:
        notes.append(f"{waiting} trace{'s wait for their' if waiting != 1 else ' waits for its'} "
                     "root span (evaluated once it arrives)")
    samples, outputs, ids = outputs_of(new, lenient, keys)
    oset = traces_set(samples, outputs, ids, path, lenient) if samples else None
    if late and oset is None:
        notes.append(f"{len(late)} feedback given after {'its' if len(late) == 1 else 'their'}"
                     " trace was evaluated: counted in the next window with records")
    marks = [t.trace_id for t in new] + [FEEDBACK_MARK + t.trace_id for t in new
                                         if feedback_of(t, keys) is not None]
    state_out: dict[str, Any] = {"kind": TRACES, "files": files} | ({LATE: late} if late else {})
    return Batch(oset, state_out, marks, notes, waiting, late)
