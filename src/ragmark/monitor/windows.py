"""One monitor window: the source's new records evaluated, recorded in the run history
with the source's cursor (one transaction: a killed monitor records both or neither),
then the trend of the windows and the drift gate.

The cheap metrics run on every record. The model-based ones run on a deterministic
sample: a record is in it when the hash of its id falls under ``sample`` (so a rerun
picks the same records), and the sample is cut, in hash order, to what the budget allows
(``budget_calls``, ``budget_cost``: the dry run's estimate per record); the records left
out have those metrics missing with the reason. Invocations on one source take turns
(a lock file beside the history), so two at once evaluate each record once.
"""

from __future__ import annotations

import fcntl
import hashlib
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ragmark.analysis.gates import top_reasons
from ragmark.config import RunConfig
from ragmark.data.leniency import Leniency
from ragmark.errors import ConfigError
from ragmark.history import store
from ragmark.metrics.names import lower_is_better, parse_metric
from ragmark.monitor.settings import DEFAULTS, JUDGED, KIND, MOMENTS, Settings  # noqa: F401
from ragmark.monitor.sources import LOG, Batch, read_log, read_traces_since, source_key
from ragmark.monitor.sources import source_kind as kind_of
from ragmark.monitor.trend import (  # noqa: F401 (the windows' names for them)
    Point,
    _windows,
    dataset_hash,
    reference_values,
    trend,
)
from ragmark.progress import NullProgress, Progress
from ragmark.results import envelope
from ragmark.results.model import Aggregate, QueryRecord, RunReport
from ragmark.running.runner import estimate_run, run
from ragmark.running.task import Task
from ragmark.stats.drift import Drift, Moments, drift
from ragmark.stats.feedback import Association, associations
from ragmark.types import Score


@dataclass
class Window:
    """What one invocation did: the window's history id (None: nothing new, or a dry
    run), its report, the sample and budget, the drift rows, the trend, notes."""

    id: int | None
    report: RunReport | None
    batch: Batch
    judged: dict[str, Any] = field(default_factory=dict)
    drift: list[Drift] = field(default_factory=list)
    trend: list[Point] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    satisfaction: list[Association] = field(default_factory=list)
    """Each metric's association with the users' feedback (when records carry it)."""
    number: int | None = None
    """The window's place among its source's windows (1 for the first), beside its
    history id."""


def unvalued(report: RunReport, s: Settings, number: int | None = None
             ) -> list[tuple[str, str]]:
    """The metrics asked for by name (--metrics, --judge-metrics) that got no value for
    any record of the window (its ``number``), each with why: they fail the command, as
    in a run."""
    out = []
    for m in [*(s.metrics or ()), *(s.judge_metrics or ())]:
        agg = report.metrics.get(m)
        if agg is not None and agg.n == 0:
            of = "" if number is None else f" of window {number}"
            out.append((m, f"{m} got no value for any of {len(report.queries)} records{of}: "
                           f"{top_reasons(agg)}"))
    return out


def share(record_id: str) -> float:
    """Where a record's id hashes in [0, 1): in the sample when under the rate."""
    return int(hashlib.sha256(record_id.encode()).hexdigest()[:15], 16) / 16**15


@contextmanager
def turn(history: Path, key: str) -> Iterator[None]:
    """Hold the source's lock for the invocation (others on the source wait)."""
    lock = history.parent / f"monitor-{hashlib.sha256(key.encode()).hexdigest()[:16]}.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    with lock.open("a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def read_batch(s: Settings, key: str) -> tuple[dict[str, Any] | None, Batch]:
    """(the cursor state before, the new records) of the source known as ``key``."""
    before = store.cursor_state(s.history, key)
    lenient = Leniency(strict=s.strict, encoding=s.encoding)
    if kind_of(s.source) == LOG:
        batch = read_log(s.source, dict(before or {}), lenient, s.keys.search_tools)
    else:
        batch = read_traces_since(s.source, dict(before or {}), lenient, s.keys,
                                  lambda ids: store.seen_among(s.history, key, ids))
    # what reading let through is told with the window (counted; --strict refused it)
    batch.notes.extend(lenient.messages())
    return before, batch


def _config(s: Settings) -> Any:
    return RunConfig.model_validate({"name": s.system, "unit": "auto"})


def _cheap(batch: Batch, s: Settings, prog: Progress) -> tuple[RunReport, list[str]]:
    assert batch.oset is not None
    asked = list(s.metrics) if s.metrics else list(DEFAULTS)
    report = run(batch.oset.dataset, _config(s), Task(metrics=asked), progress=prog,
                 outputs=batch.oset.outputs)
    if s.metrics:
        return report, []
    absent = [m for m, a in report.metrics.items() if a.n == 0]
    if not absent:
        return report, []
    keep = {m: a for m, a in report.metrics.items() if m not in absent}
    queries = [replace(q, metrics={m: v for m, v in q.metrics.items() if m in keep})
               for q in report.queries]
    return replace(report, metrics=keep, queries=queries), [
        f"not recorded by this source, left out: {', '.join(absent)}"]


def sampled(batch: Batch, s: Settings) -> list[str]:
    """The ids of the window's sample, in hash order."""
    assert batch.oset is not None
    ids = [x.id for x in batch.oset.dataset.samples if share(x.id) < s.sample]
    return sorted(ids, key=share)


def _judged_subset(batch: Batch, ids: Sequence[str]) -> Any:
    assert batch.oset is not None
    keep = set(ids)
    return replace(batch.oset.dataset, samples=tuple(
        x for x in batch.oset.dataset.samples if x.id in keep))


def estimate(batch: Batch, s: Settings) -> dict[str, Any]:
    """The judge calls the window's sample would make (not in the cache), their tokens
    and cost, and how many records the budget lets through."""
    assert batch.oset is not None
    ids = sampled(batch, s)
    out: dict[str, Any] = {"records": len(batch.oset.dataset.samples), "sampled": len(ids),
                           "sample": s.sample, "judges": list(s.judges())}
    if not ids or not s.judges():
        return out | {"judged": 0, "calls": 0}
    est = estimate_run(_judged_subset(batch, ids), _config(s),
                       Task(metrics=["refusal"], judge_metrics=s.judges(), llm=s.llm),
                       outputs=batch.oset.outputs)
    calls = int(est.get("calls") or 0)
    cost = est.get("estimated_cost")
    k = len(ids)
    if s.budget_calls is not None and calls:
        k = min(k, math.floor(s.budget_calls * len(ids) / calls))
    if s.budget_cost is not None and cost:
        k = min(k, math.floor(s.budget_cost * len(ids) / cost))
    return out | {"judged": k, "calls": calls, "at_most": est.get("at_most"),
                  "estimated_cost": cost,
                  "calls_in_budget": math.ceil(calls * k / len(ids)) if ids else 0,
                  "judged_ids": ids[:k], "endpoint": est.get("endpoint")}


def _judge(batch: Batch, s: Settings, report: RunReport, plan: dict[str, Any],
           prog: Progress) -> RunReport:
    """The sample's judge scores merged into the window's report; the others missing
    with the reason."""
    assert batch.oset is not None
    judges = list(s.judges())
    chosen = plan.get("judged_ids") or []
    judged: dict[str, dict[str, Score]] = {}
    llm: dict[str, Any] = {}
    if chosen:
        got = run(_judged_subset(batch, chosen), _config(s),
                  Task(metrics=["refusal"], judge_metrics=judges, llm=s.llm), progress=prog,
                  outputs=batch.oset.outputs)
        judged = {q.id: {m: q.metrics[m] for m in judges if m in q.metrics}
                  for q in got.queries}
        llm = got.llm
    in_sample = set(sampled(batch, s))
    budget = (f"over the window's budget (--budget-calls {s.budget_calls})"
              if s.budget_calls is not None else
              f"over the window's budget (--budget-cost {s.budget_cost})")
    queries = []
    for q in report.queries:
        reason = (f"not in the window's sample (--sample {s.sample})"
                  if q.id not in in_sample else budget)
        scores = judged.get(q.id) or {m: Score.missing(reason) for m in judges}
        queries.append(replace(q, metrics={**q.metrics, **scores}))
    metrics = dict(report.metrics) | {m: Aggregate.of([q.metrics[m] for q in queries])
                                      for m in judges}
    return replace(report, queries=queries, metrics=metrics, llm=llm)


def _values(report: RunReport) -> dict[str, list[float | None]]:
    out: dict[str, list[float | None]] = {}
    for q in report.queries:
        for m, v in q.metrics.items():
            out.setdefault(m, []).append(v.value)
    return out


def check_gated(s: Settings) -> None:
    """A ConfigError, before any work, for a drift metric that is not a metric."""
    for m in s.fail_on_drift:
        parse_metric(m)
    if not 0 < s.sample <= 1:
        raise ConfigError(f"--sample must be in (0, 1], got {s.sample}")


def estimate_window(s: Settings) -> Window:
    """The dry run of :func:`monitor_once`: the new records read, the judge calls and
    cost of the window's sample estimated; nothing called, nothing recorded."""
    check_gated(s)
    key = source_key(s.source)
    with turn(s.history, key):
        _, batch = read_batch(s, key)
    w = Window(None, None, batch, notes=list(batch.notes))
    if batch.oset is not None:
        w.judged = {k: v for k, v in estimate(batch, s).items() if k != "judged_ids"}
    return w


def monitor_once(s: Settings, prog: Progress | None = None) -> Window:
    """Evaluate the source's new records as one window and record it; then the trend
    and the drift gate (:func:`estimate_window` is its dry run)."""
    check_gated(s)
    prog = prog or NullProgress()
    key = source_key(s.source)
    with turn(s.history, key):
        before, batch = read_batch(s, key)
        if batch.oset is None:
            if batch.state != before:
                store.move_cursor(s.history, store.Cursor(key, batch.state, before, batch.seen))
            return Window(None, None, batch, notes=list(batch.notes),
                          trend=trend(s, key))
        report, notes = _cheap(batch, s, prog)
        if batch.late:
            report, late_note = with_late_feedback(report, batch.late)
            notes.append(late_note)
        plan: dict[str, Any] = {}
        if s.judges():
            plan = estimate(batch, s)
            report = _judge(batch, s, report, plan, prog)
        rows: list[Drift] = []
        ref_notes: list[str] = []
        if s.fail_on_drift:
            ref, what = reference_values(s, key)
            if not ref:
                ref_notes.append("no earlier window to compare with: the drift gate "
                                 "starts with the next window")
            else:
                rows = drift(ref, _values(report), list(s.fail_on_drift), alpha=s.alpha,
                             margin=s.margin, lower_is_better=lower_is_better())
                ref_notes.append(f"drift reference: {what}")
        # a window without a gate (drift, a metric asked by name) has no verdict ("no
        # gate" in the history); one whose asked metric got no value failed, as the
        # command's exit says
        gated = bool(s.fail_on_drift or s.metrics or s.judge_metrics)
        verdict = None if not gated else (
            "failed" if any(d.drifted for d in rows) or unvalued(report, s) else "passed")
        env = envelope("run", dataset_hash(key), report.config) | {
            "kind": KIND, "drifted": [d.metric for d in rows if d.drifted],
            # what a drift reference needs of this window once its values are pruned
            MOMENTS: {m: Moments.of(v).to_json() for m, v in _values(report).items()}}
        marks = batch.counted()  # the late feedback is counted by this window
        cursor = store.Cursor(key, batch.state, before, marks)
        run_id = store.record(s.history, env, str(s.source), _questions(report.queries),
                              {s.system: store.ConfigResult.of(report)},
                              verdict=verdict, also=store.Also(cursor=cursor))
        if s.retain is not None:  # the history stays bounded: old details go
            from ragmark.history.retention import prune

            prune(s.history, s.retain, kind=KIND, dataset_hash=dataset_hash(key),
                  vacuum=False)  # freed pages are reused by the next windows
        judged = {k: v for k, v in plan.items() if k != "judged_ids"}
        values = _values(report)
        liked = associations(values, values["feedback"]) if "feedback" in values else []
        return Window(run_id, report, batch, judged, rows, trend(s, key),
                      [*batch.notes, *notes, *ref_notes], liked, len(_windows(s, key)))


def with_late_feedback(report: RunReport, late: dict[str, float]
                       ) -> tuple[RunReport, str]:
    """The window's feedback with the feedback that came after its trace was evaluated
    in an earlier window (a thumbs-up added seconds after the answer): counted here,
    once, and said."""
    values = [q.metrics["feedback"] for q in report.queries if "feedback" in q.metrics]
    agg = Aggregate.of([*values, *(Score(v) for v in late.values())])
    n = len(late)
    return replace(report, metrics={**report.metrics, "feedback": agg}), (
        f"{n} feedback{'s' if n != 1 else ''} given after {'its' if n == 1 else 'their'} "
        f"trace{'s' if n != 1 else ''} had been evaluated in an earlier window "
        f"{'is' if n == 1 else 'are'} counted in this window's feedback (n includes "
        f"{'it' if n == 1 else 'them'})")


def _questions(queries: Sequence[QueryRecord]) -> list[tuple[str, str]]:
    return [(q.id, q.question) for q in queries]
