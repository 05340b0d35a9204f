"""The plan of ``ragmark annotate``: serve a queue's page, print the store's counts
(``--status``) or write its labels (``--export``). :func:`plan_annotate` checks every
flag, the bind and the files, and draws the items, before anything is written or
served; the ``execute_`` functions do it. Nothing here prints."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragmark.analysis.review import join_contexts
from ragmark.annotate import store
from ragmark.annotate.app import make_app
from ragmark.annotate.pairs import draw_pairs
from ragmark.annotate.queue import draw, is_pairwise, status
from ragmark.annotate.store import Queue, create_queue, get_queue, label_rows, labels_path
from ragmark.errors import ConfigError
from ragmark.judge_eval.preferences import preferred_of
from ragmark.report.json_writer import write_jsonl, write_text
from ragmark.web.server import Server, missing_packages, parse_listen


@dataclass(frozen=True, kw_only=True)
class AnnotateRequest:
    """``ragmark annotate``'s flags, by their names."""

    source: str | Path | None = None
    task: str | None = None
    queue: str | None = None
    annotator: str | None = None
    sample: int | None = None
    seed: int = 0
    overlap: int | None = None
    """None: not given (a new queue takes 0; a resumed one keeps its own)."""
    per_claim: bool = False
    config: str | None = None
    reveal_judge: bool = False
    listen: str = "127.0.0.1:8750"
    token: str | None = None
    store: str | Path | None = None
    history: str | Path | None = None
    status: bool = False
    export: str | Path | None = None


@dataclass(frozen=True)
class AnnotatePlan:
    """What an annotate does (``action``: serve, status or export) on the store at
    ``store``: the ``queue`` (with its ``items`` when it is new or served; None for the
    status of every queue), the bind, the export file."""

    action: str
    store: Path
    queue: Queue | None
    items: list[dict[str, Any]] = field(default_factory=list)
    drawn: dict[str, Any] = field(default_factory=dict)
    host: str = "127.0.0.1"
    port: int = 8750
    token: str | None = None
    annotator: str | None = None
    export: Path | None = None


def plan_annotate(req: AnnotateRequest) -> AnnotatePlan:
    """The plan of ``req``: flags that do not go together refused, the bind checked (a
    host beyond loopback needs a token), the source read and its items drawn."""
    path = labels_path(req.history, req.store)
    if req.status and req.export is not None:
        raise ConfigError("--status and --export: give one of them")
    if req.overlap is not None and req.overlap < 0:
        raise ConfigError(f"--overlap must be at least 0, got {req.overlap}")
    if req.status:
        return AnnotatePlan("status", path, None if req.queue is None else get_queue(
            path, req.queue))
    if req.export is not None:
        if req.queue is None:
            raise ConfigError("--export needs --queue NAME (ragmark annotate --status lists "
                              "the queues)")
        out = Path(req.export)
        if out.suffix not in (".csv", ".jsonl"):
            raise ConfigError(f"--export {out}: expected a .csv (a review CSV, as "
                              "--human-labels reads) or a .jsonl (as judge-eval reads)")
        return AnnotatePlan("export", path, get_queue(path, req.queue), export=out)
    return _serve_plan(req, path)


def _serve_plan(req: AnnotateRequest, path: Path) -> AnnotatePlan:
    if req.source is None:
        raise ConfigError("give SOURCE (a results file of `ragmark run --include-details` "
                          "or of `ragmark label`, or a file of logged outputs), or "
                          "--status, or --export FILE")
    missing = missing_packages()
    if missing:
        raise ConfigError(f"ragmark annotate serves its page with {', '.join(missing)}: "
                          "pip install 'ragmark-eval[web]'")
    host, port = parse_listen(req.listen, req.token)
    if req.annotator is not None and not req.annotator.strip():
        raise ConfigError("--annotator is empty: give a name, or leave it out and give "
                          "it on the page")
    if req.task is not None and is_pairwise(req.task):
        if req.per_claim:
            raise ConfigError("--per-claim labels one answer's claims, not a preference")
        got = draw_pairs(req.source, req.task, req.sample, req.seed, req.config)
    else:
        got = draw(req.source, req.task, req.sample, req.seed, req.config, req.per_claim)
    if (req.overlap or 0) > len(got.items):
        raise ConfigError(f"--overlap {req.overlap}: the queue has {len(got.items)} items")
    name = req.queue or f"{Path(req.source).stem}-{got.task}" + (
        "-claims" if req.per_claim else "")
    queue = Queue(name, got.task, str(req.source), {
        "overlap": req.overlap or 0, "reveal_judge": req.reveal_judge, "sample": req.sample,
        "seed": req.seed, "config": req.config, "per_claim": req.per_claim})
    queue = kept_settings(path, queue, req)
    drawn = {"eligible": got.eligible, "left_out": got.left_out, "strata": got.strata}
    return AnnotatePlan("serve", path, queue, got.items, drawn, host, port, req.token,
                        req.annotator)


KEPT = (("overlap", "--overlap", 0), ("reveal_judge", "--reveal-judge", False))
"""A queue's settings kept with it: a restart keeps them (setting, flag, default)."""


def kept_settings(path: Path, queue: Queue, req: AnnotateRequest) -> Queue:
    """``queue`` with the settings it was started with, when it exists in the store (a
    restart after a crash without its flags keeps its --overlap); a flag given with
    another value than the queue's is an error saying both."""
    from ragmark.annotate.store import queue_names

    if not path.exists() or queue.name not in queue_names(path):
        return queue
    stored = get_queue(path, queue.name).settings
    given = {"overlap": req.overlap, "reveal_judge": req.reveal_judge or None}
    kept = dict(queue.settings)
    for key, flag, default in KEPT:
        was = stored.get(key, default)
        if given[key] is not None and given[key] != was:
            raise ConfigError(
                f"queue {queue.name!r} was started with {flag} {was}, not {given[key]}: "
                f"restart it without {flag} (it keeps its own), or give another --queue "
                "for other settings")
        kept[key] = was
    return Queue(queue.name, queue.task, queue.source, kept)


def execute_annotate(plan: AnnotatePlan, ready: Callable[[Any, bool], None]) -> None:
    """Make the queue (or find it, to resume) and serve its page until stopped;
    ``ready(server, new)`` is called once the socket is bound."""
    assert plan.queue is not None
    server = Server(make_app(plan.store, plan.queue, plan.token, plan.annotator),
                    f"{plan.host}:{plan.port}", plan.host, plan.port)
    try:
        new = create_queue(plan.store, plan.queue, plan.items)
        ready(server, new)
        server.serve_forever()
    finally:
        server.server_close()


def annotate_status(plan: AnnotatePlan) -> dict[str, dict[str, Any]]:
    """Per queue: its task and source, and the counts of :func:`queue.status`."""
    names = [plan.queue.name] if plan.queue is not None else store.queue_names(plan.store)
    out = {}
    for name in names:
        q = store.get_queue(plan.store, name)
        out[name] = {"task": q.task, "source": q.source,
                     **status(store.items(plan.store, name), store.labels(plan.store, name),
                              task=q.task)}
    return out


EXPORT_COLUMNS = ("id", "question", "answer", "contexts", "expected_answer", "metric",
                  "judge", "human", "annotator", "note", "labelled_at")


def export_labels(plan: AnnotatePlan) -> int:
    """Write every label of the queue (skips left out), one row per person and item:
    a review CSV (``--human-labels``, ``judge-eval``) or JSONL (``judge-eval``); the
    number written."""
    assert plan.queue is not None and plan.export is not None
    rows = label_rows(plan.store, plan.queue.name)
    if rows and "answer_b" in rows[0]:
        return _export_preferences(rows, plan.export)
    if plan.export.suffix == ".jsonl":
        write_jsonl([{**r, "label": int(r["human"])} for r in rows], plan.export)
    else:

        buf = io.StringIO()
        w = csv.writer(buf)
        w.writerow(EXPORT_COLUMNS)
        for r in rows:
            w.writerow([r["id"], r["question"], r["answer"], join_contexts(r["contexts"]),
                        r["expected_answer"], r["metric"],
                        "" if r["judge"] is None else f"{r['judge']:.6g}",
                        f"{r['human']:g}", r["annotator"], r["note"], r["labelled_at"]])
        write_text(buf.getvalue(), plan.export)
    return len(rows)


PREFERENCE_COLUMNS = ("id", "question", "a", "b", "answer_a", "answer_b", "contexts_a",
                      "contexts_b", "expected_answer", "metric", "judge", "preferred",
                      "annotator", "note", "labelled_at")


def _export_preferences(rows: list[dict[str, Any]], path: Path) -> int:
    """A preference queue's labels, one row per person and pair, as judge-eval --metric
    pairwise:CRITERION reads them (JSONL; the CSV has the same columns)."""
    out = [{"id": r["id"], "question": r["question"], "a": r["a"], "b": r["b"],
            "answer_a": r["answer"], "answer_b": r["answer_b"], "contexts_a": r["contexts"],
            "contexts_b": r["contexts_b"], "expected_answer": r["expected_answer"],
            "metric": r["metric"], "judge": preferred_of(r["judge"]) if r["judge"] is not None
            else None, "preferred": preferred_of(r["human"]), "annotator": r["annotator"],
            "note": r["note"], "labelled_at": r["labelled_at"]} for r in rows]
    if path.suffix == ".jsonl":
        write_jsonl(out, path)
        return len(out)

    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(PREFERENCE_COLUMNS)
    for r in out:
        w.writerow(["" if r[c] is None else join_contexts(r[c]) if c.startswith("contexts")
                    else r[c] for c in PREFERENCE_COLUMNS])
    write_text(buf.getvalue(), path)
    return len(out)
