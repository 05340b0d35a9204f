"""The tail every source shares (:func:`score`): match the rankings against the ground
truth (with the retrieval metrics), judge refusals, score the answers, judge them, then
one reduce into the run's records, aggregates and notes. The metrics it computes come
as a :class:`Selected` (:mod:`ragmark.running.runner` chooses them)."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from ragmark.case import Case
from ragmark.config import RunConfig
from ragmark.data.fingerprint import dataset_hash
from ragmark.llm.accounting import llm_total
from ragmark.metrics.abstention import UNANSWERABLE
from ragmark.metrics.names import MetricName, catalogue
from ragmark.pipelines.base import (
    Produced,
    Sourced,
    StageReport,
    folded_note,
    recorded_scores,
)
from ragmark.progress import Progress
from ragmark.results.model import (
    Aggregate,
    HopSummary,
    QueryRecord,
    RetrievedRecord,
    RunReport,
    conversation_summary,
)
from ragmark.results.nuggetizer_files import nuggets_hash
from ragmark.results.source_fields import source_fields
from ragmark.running.empty import empty_rankings
from ragmark.running.scoring import (
    Matched,
    answer_stage,
    judge_stage,
    match_stage,
    refusal_stage,
    retrieval_scores,
    unknown_ids_note,
)
from ragmark.running.task import Task
from ragmark.types import Dataset, RunView, Sample, Score


def unit_of(cfg: RunConfig, dataset: Dataset) -> str:
    if cfg.unit != "auto":
        return cfg.unit
    kinds = {s.truth.kind for s in dataset.samples}
    return "document" if kinds <= {"ids", "none"} else "chunk"


@dataclass(frozen=True)
class Selected:
    """The metrics a run computes: ``names`` (retrieval and answer), ``judges`` (the
    judge metrics), the ``notes`` on the choice, and ``at_depth`` (names asked for ->
    computed)."""

    names: list[MetricName]
    judges: list[str]
    notes: list[str]
    at_depth: dict[str, str]


@dataclass(frozen=True)
class _Scored:
    """What the stages of the tail computed, question by question: the sources'
    answers and contexts (with the refusal judge's verdicts among their facts), the
    questions that failed (their reason), those whose contexts cannot be judged by id,
    the matched rankings, the usable answers with their answer metrics, and the
    judges' scores with the stages' report."""

    queries: list[Produced]
    failed: dict[int, Score]
    unjudged: set[int]
    matched: Matched
    answers: list[Case]
    answer_scores: list[dict[str, Score]]
    judged: list[dict[str, Score]]
    stats: StageReport


def _stages(dataset: Dataset, samples: Sequence[Sample], queries: list[Produced],
            cfg: RunConfig, sel: Selected, task: Task, prog: Progress) -> _Scored:
    """Match the rankings against the ground truth (with the retrieval metrics), judge
    refusals, score the answers, judge them."""
    names, unit = sel.names, unit_of(cfg, dataset)
    failed = {qi: Score.missing(p.failure, **p.details)
              for qi, p in enumerate(queries) if p.failure is not None}
    # contexts without ids, none found in the corpus, cannot be judged by document id
    unjudged = {qi for qi, (s, p) in enumerate(zip(samples, queries, strict=True))
                if s.truth.kind == "ids" and p.chunks and p.anonymous == len(p.chunks)}
    matched = match_stage(samples, queries, unit,
                          [m for m in names if m.kind == "retrieval"], prog, cfg.context_match)
    refusal = StageReport()
    if cfg.refusal_judge:  # its verdicts go with the answers' facts
        queries, refusal = refusal_stage(samples, queries, failed, prog=prog, llm=task.llm,
                                         language=cfg.language)
    answers, answer_scores = answer_stage(samples, queries, failed,
                                          [m for m in names if m.kind == "answer"], cfg,
                                          dataset.corpus.by_id())
    # a question marked unanswerable is not judged: there is no answer to judge it by
    unjudged_qs = failed | {qi: Score.missing(UNANSWERABLE) for qi, s in enumerate(samples)
                            if not s.answerable and qi not in failed}
    judged, stats = judge_stage(answers, unjudged_qs, sel.judges, prog=prog, task=task,
                                cfg=cfg)
    return _Scored(queries, failed, unjudged, matched, answers, answer_scores, judged,
                   refusal.merge(stats))


def _records(samples: Sequence[Sample], got: _Scored, names: Sequence[MetricName],
             unit: str, cfg: RunConfig, mean: str) -> list[QueryRecord]:
    """Each question's record: its metrics in the order asked for, then the judges."""
    records = []
    for qi, (s, p) in enumerate(zip(samples, got.queries, strict=True)):
        given = recorded_scores(p, unit)
        values = {**got.answer_scores[qi], **retrieval_scores(
            s, qi, got.matched.values, got.failed, mean, qi in got.unjudged,
            cfg.context_match)}
        metrics = {str(m): values[str(m)] for m in names if str(m) in values} | got.judged[qi]
        records.append(QueryRecord(
            id=s.id, question=s.question, answer=got.answers[qi].answer_or_none, metrics=metrics,
            sample=s, contexts=list(p.contexts), hops=got.matched.hops[qi],
            trajectory=got.answers[qi].output.trajectory_json(),
            recorded=source_fields(s) | got.answers[qi].output.recorded(),
            retrieved=[RetrievedRecord(it.rank, it.id, it.doc_id,
                                       it.score if given is None else given.get(it.id),
                                       it.match.grade if it.match else 0,
                                       it.match.targets if it.match else (),
                                       it.match.rule if it.match else None)
                       for it in got.matched.rankings[qi]]))
    return records


def _aggregates(samples: Sequence[Sample], records: Sequence[QueryRecord], got: _Scored,
                sel: Selected, cfg: RunConfig) -> dict[str, Aggregate]:
    """Each metric's mean, then the aggregate metrics of the catalogue: each computes
    itself over the run (its ``compute``); one asked for that has nothing to summarise
    is missing with its reason."""
    names = [str(m) for m in sel.names if m.kind != "aggregate"] + list(sel.judges)
    out = {m: Aggregate.of([r.metrics[m] for r in records]) for m in names}
    view = RunView(samples, [a.answer_or_none for a in got.answers],
                   [p.facts for p in got.queries], [r.metrics for r in records],
                   cfg.refusal_patterns)
    asked = {str(m) for m in sel.names}
    for spec in catalogue().values():
        if spec.kind != "aggregate" or spec.compute is None:
            continue
        value = spec.compute(view)
        if value is not None:
            out[spec.name] = value
        elif spec.name in asked:
            out[spec.name] = Aggregate(None, 0, len(records), {spec.absent: len(records)})
    return out


def _notes(dataset: Dataset, samples: Sequence[Sample], src: Sourced, got: _Scored,
           records: Sequence[QueryRecord], sel: Selected, task: Task, unit: str
           ) -> list[str]:
    """The run's notes: the source's and the stages', ids the corpus does not know,
    folded scores, degenerate judges, the trec_eval mean's zeros."""
    names, mean = sel.names, task.mean
    notes = list(src.notes) + list(got.stats.notes)
    if any(m.kind == "retrieval" for m in names) and (note := unknown_ids_note(
            {d.id for d in dataset.corpus.documents}, samples, got.queries)):
        notes.append(note)
    notes += folded_note(got.queries, unit)
    if sel.judges:
        from ragmark.judges.checks import degenerate_notes

        notes += degenerate_notes([r.metrics for r in records], sel.judges)
    if mean == "trec_eval" and any(m.kind == "retrieval" for m in names):
        zeros = sum(1 for qi, s in enumerate(samples) if qi not in got.failed
                    and s.truth.kind == "ids" and s.truth.doc_grades
                    and not any(g > 0 for g in s.truth.doc_grades.values()))
        notes.append(f"--mean trec_eval: {zeros} question{'s' if zeros != 1 else ''} with "
                     "judged documents but none relevant score 0 on the retrieval metrics "
                     "and count in their means, as trec_eval counts them")
    return notes


def score(dataset: Dataset, samples: Sequence[Sample], src: Sourced, cfg: RunConfig,
           sel: Selected, task: Task, prog: Progress, started: float) -> RunReport:
    """The tail every source shares, as stages (:func:`_stages`); then one reduce builds
    the records and the aggregates. A question whose source failed has every metric
    missing with the failure's reason. ``src`` is not changed."""
    unit = unit_of(cfg, dataset)
    got = _stages(dataset, samples, list(src.queries), cfg, sel, task, prog)
    timings = {**src.timings, **got.stats.timings, "total_s": time.perf_counter() - started}
    records = _records(samples, got, sel.names, unit, cfg, task.mean)
    aggregates = _aggregates(samples, records, got, sel, cfg)
    notes = _notes(dataset, samples, src, got, records, sel, task, unit)
    empty = empty_rankings(replace(src, queries=got.queries), samples, records,
                           [str(m) for m in sel.names if m.kind == "retrieval"], cfg)
    if empty is not None and empty.ids:
        notes.append(empty.note())
    info = {"name": dataset.name, "path": dataset.path, "format": dataset.format,
            "queries": len(samples), "documents": len(dataset.corpus.documents), **src.dataset,
            "hash": dataset_hash(dataset)}
    if (used := nuggets_hash(records)) is not None:
        info["nuggets_hash"] = used
    if dataset.warnings:
        info["warnings"] = list(dataset.warnings)
        notes = [f"data loaded with warnings: {w}" for w in dataset.warnings] + notes
    failures = Counter(p.failure for p in got.queries if p.failure is not None)
    llm_all = {**got.stats.llm, **src.llm}
    if llm_all:
        llm_all["total"] = llm_total(llm_all)
    details: dict[str, Any] = {spec.report: aggregates[spec.name].detail
                               for spec in catalogue().values()
                               if spec.report and spec.name in aggregates}
    return RunReport(config={**src.config, "unit": unit,
                             **({"mean": task.mean} if task.mean != "relevant" else {})},
                     dataset=info, metrics=aggregates, queries=records, timings=timings,
                     notes=notes, llm=llm_all, failures=dict(failures), empty=empty,
                     hops=HopSummary.of(records), conversations=conversation_summary(records),
                     **details)
