"""RunConfig -> pipeline -> per-query records -> aggregates.

One configuration over one dataset: the rankings and answers come from ragmark's own
pipeline (:mod:`ragmark.running.own`), an external system (a config's ``[pipeline]``,
:mod:`ragmark.running.source`) or its logged outputs; one tail (:func:`_score`, with
the stages of :mod:`ragmark.running.scoring`) matches, scores and judges every source alike.
Which metrics are computed is decided in :mod:`ragmark.running.selection`. Nothing here
prints: progress goes through the ``progress`` object the caller passes (the CLI's shows
rich bars).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ragmark.config import RunConfig
from ragmark.data.fingerprint import LOGGED, dataset_hash
from ragmark.errors import ConfigError
from ragmark.executors import using
from ragmark.llm.accounting import llm_total
from ragmark.metrics.abstention import UNANSWERABLE
from ragmark.metrics.names import MetricName, catalogue
from ragmark.pipelines.base import (
    Output,
    Produced,
    Sourced,
    StageReport,
    corpus_ids,
    folded_note,
    recorded_scores,
)
from ragmark.progress import NullProgress, Progress
from ragmark.results.model import (
    Aggregate,
    HopSummary,
    QueryRecord,
    RetrievedRecord,
    RunReport,
    conversation_summary,
)
from ragmark.running.empty import empty_rankings
from ragmark.running.judging import NEEDS_ANSWER, estimate, parse_judge_metrics
from ragmark.running.own import Retrieval, estimate_retrieval, own, retrieval
from ragmark.running.scoring import (
    Answer,
    Matched,
    answer_stage,
    judge_stage,
    match_stage,
    refusal_stage,
    retrieval_scores,
    unknown_ids_note,
)
from ragmark.running.selection import (  # noqa: F401  (re-exported: runner's API)
    check_depth,
    default_metrics,
    run_metrics,
    select,
    shorter_than,
    too_deep,
)
from ragmark.running.task import Task
from ragmark.types import Dataset, RunView, Sample, Score


def _unit(cfg: RunConfig, dataset: Dataset) -> str:
    if cfg.unit != "auto":
        return cfg.unit
    kinds = {s.truth.kind for s in dataset.samples}
    return "document" if kinds <= {"ids", "none"} else "chunk"


def run(
    dataset: Dataset,
    cfg: RunConfig,
    task: Task | None = None,
    *,
    progress: Progress | None = None,
    outputs: Mapping[str, Output] | None = None,
    pipeline_fn: Callable[..., Any] | None = None,
    done: Retrieval | None = None,
) -> RunReport:
    """Run one configuration over a dataset and score it, as ``task`` says (a
    :class:`~ragmark.running.task.Task`: the metrics, the judges and their LLM endpoint,
    the options; default: the dataset's default metrics).

    The answers and contexts come from ragmark's own retriever and generator, from the
    config's external ``[pipeline]``, or from ``outputs`` (sample id -> a system's
    logged output; see :func:`ragmark.data.outputs.load_outputs`); all are scored alike.
    The task's ``judge_metrics`` (faithfulness, answer_relevance, ...) are asked of its
    LLM endpoint; without one, or when it does not answer, they are recorded as missing
    with the reason (an error with ``require_llm``). :func:`estimate_run` is its dry run.

    The task's ``metrics`` None computes the dataset's defaults, their cutoffs fitted to
    ``cfg.top_k`` (a deeper one is taken at ``top_k`` or left out, with a note). A metric
    named in ``metrics`` or ``also`` whose cutoff exceeds ``cfg.top_k`` is a ConfigError
    before any work unless ``allow_short_rankings``; then ``report.short_metrics`` marks
    it. On ragmark's own pipeline a retrieval metric without a cutoff is computed over
    the ``top_k`` retrieved items and named so (``map`` -> ``map@10``; ``report.at_depth``
    maps the names asked for to those computed, and ``report.value`` accepts either).
    ``pipeline_fn`` is the callable of a ``python`` ``[pipeline]`` that lives in memory
    (the Python API). The index is loaded from ``RAGMARK_HOME/indexes`` when this
    corpus, chunker and retriever were indexed before (the task's ``index_cache=False``
    rebuilds it and saves nothing); ``report.dataset["index"]`` says which. The first
    ``latency_sample`` questions are retrieved one at a time (their latency is
    reported), the rest in batches (``timings["questions_per_s"]`` is the throughput
    over all). The task's ``executor`` spreads the CPU-bound stages (default: the active
    one, local unless set; see :mod:`ragmark.executors`); ``report.executor`` records
    it. ``done``: this config's retrieval already computed (:func:`retrieval_of`).
    """
    task = task or Task()
    with using(task.executor) as ex:
        report = _run(dataset, cfg, task, progress or NullProgress(), outputs, pipeline_fn,
                      done)
        return replace(report, executor=ex.info())


def _needs_answers(sel: Selected, skip_generation: bool) -> bool:
    return not skip_generation and (any(m.kind == "answer" for m in sel.names)
                                    or bool(set(sel.judges) & NEEDS_ANSWER))


def _samples(dataset: Dataset, max_queries: int | None) -> list[Sample]:
    samples = list(dataset.samples[:max_queries] if max_queries else dataset.samples)
    if not samples:
        raise ConfigError("no questions to evaluate (--max-queries 0?)")
    return samples


def retrieval_of(dataset: Dataset, cfg: RunConfig, task: Task,
                 progress: Progress | None = None) -> Retrieval:
    """The retrieval stages of ``cfg``'s own pipeline, as :func:`run` would compute them
    with the same task (pass the result to it as ``done``)."""
    names = run_metrics(dataset, task.metrics, task.also)
    sel = Selected(names, parse_judge_metrics(task.judge_metrics), [], {})
    return retrieval(dataset, _samples(dataset, task.max_queries), cfg,
                     progress or NullProgress(),
                     with_answers=_needs_answers(sel, task.skip_generation),
                     index_cache=task.index_cache, latency_sample=task.latency_sample)


def _run(dataset: Dataset, cfg: RunConfig, task: Task, prog: Progress,
         outputs: Mapping[str, Output] | None, pipeline_fn: Callable[..., Any] | None,
         done: Retrieval | None) -> RunReport:
    sel = _chosen(dataset, cfg, task, ranked_here=outputs is None)
    samples = _samples(dataset, task.max_queries)
    started = time.perf_counter()
    if outputs is not None or cfg.pipeline is not None:
        src = _external(dataset, samples, cfg, prog, outputs, not task.skip_generation,
                        pipeline_fn)
    else:
        src = own(dataset, samples, cfg, prog,
                  with_answers=_needs_answers(sel, task.skip_generation),
                  index_cache=task.index_cache, latency_sample=task.latency_sample,
                  done=done)
    report = _score(dataset, samples, src, cfg, sel, task, prog, started)
    return replace(report, at_depth=sel.at_depth,
                   **_depth(cfg, sel.names, src, sel.notes, report.notes,
                            ranked_here=outputs is None))


def _depth(cfg: RunConfig, names: Sequence[MetricName], src: Sourced, chosen: list[str],
           notes: list[str], *, ranked_here: bool) -> dict[str, Any]:
    """What the report says of the rankings' depth: the metrics whose cutoff exceeds
    ragmark's own top_k (computed anyway with ``allow_short_rankings``), the cutoffs an
    external ranking falls short of, and the notes with the choice of metrics first."""
    notes = [*chosen, *notes]
    short_metrics = {str(m): cfg.top_k for m in too_deep(cfg, names)} if ranked_here else {}
    if short_metrics:
        notes.append(
            f"{', '.join(short_metrics)} computed on rankings of top_k = {cfg.top_k} "
            "items, shorter than the cutoff (--allow-short-rankings): a cutoff past the "
            "ranking adds nothing, so these equal the metric at the ranking's depth")
    short_rankings: dict[int, int] = {}
    if not ranked_here or cfg.pipeline is not None:  # they return what they return
        ok = [len(p.chunks) for p in src.queries if p.failure is None]
        short_rankings = shorter_than(ok, names)
        if short_rankings:
            notes.append(
                "fewer contexts than a cutoff: "
                + ", ".join(f"@{k} for {c} of {len(ok)} questions"
                            for k, c in short_rankings.items())
                + "; places past the end of a ranking count as not relevant (as in "
                "trec_eval)")
    return {"notes": notes, "short_metrics": short_metrics, "short_rankings": short_rankings}


def estimate_run(dataset: Dataset, cfg: RunConfig, task: Task | None = None, *,
                 progress: Progress | None = None,
                 outputs: Mapping[str, Output] | None = None) -> dict[str, Any]:
    """A dry run of :func:`run` with the same task: the judge calls it would make
    that are not in the cache, their estimated tokens and cost (see
    :func:`ragmark.running.judging.estimate`), and under ``embeddings`` the calls of an embedding
    API. Nothing is called. The rankings and answers are made as the run makes them, so
    a config whose answers or scores need a model's calls (an external pipeline, an LLM
    generator or reranker) is a ConfigError."""
    task = task or Task()
    with using(task.executor):
        prog = progress or NullProgress()
        sel = _chosen(dataset, cfg, task, ranked_here=outputs is None)
        samples = _samples(dataset, task.max_queries)
        if outputs is not None:
            src = _external(dataset, samples, cfg, prog, outputs, not task.skip_generation,
                            None)
        elif cfg.pipeline is not None:
            raise ConfigError(f"--dry-run cannot estimate config {cfg.name!r}: its answers "
                              "come from its pipeline, which would have to be called")
        else:
            with_answers = _needs_answers(sel, task.skip_generation)
            got = estimate_retrieval(dataset, samples, cfg, prog, with_answers=with_answers,
                                     index_cache=task.index_cache,
                                     latency_sample=task.latency_sample)
            src = own(dataset, samples, cfg, prog, with_answers=with_answers, done=got)
    failed = {qi: Score.missing(p.failure) for qi, p in enumerate(src.queries)
              if p.failure is not None}
    answers, _ = answer_stage(samples, src.queries, failed, [], cfg, dataset.corpus.by_id())
    ok = [qi for qi in range(len(samples)) if qi not in failed]
    est = estimate([samples[i] for i in ok], [answers[i] for i in ok], sel.judges, task.llm,
                   cfg.language)
    return {**est, "embeddings": src.llm["embeddings"]} if "embeddings" in src.llm else est


@dataclass(frozen=True)
class Selected:
    """The metrics a run computes: ``names`` (retrieval and answer), ``judges`` (the
    judge metrics), the ``notes`` on the choice, and ``at_depth`` (names asked for ->
    computed)."""

    names: list[MetricName]
    judges: list[str]
    notes: list[str]
    at_depth: dict[str, str]


def _chosen(dataset: Dataset, cfg: RunConfig, task: Task, *, ranked_here: bool) -> Selected:
    """The metrics a run computes (checked before any work), apart the judge metrics
    (those of the task's ``judge_metrics`` and those named in its ``metrics``)."""
    judge_names = parse_judge_metrics(task.judge_metrics)
    names, chosen, at_depth = select(dataset, cfg, task.metrics, task.also,
                                     allow_short_rankings=task.allow_short_rankings,
                                     ranked_here=ranked_here)
    judge_names += [str(m) for m in names if m.kind == "judge" and str(m) not in judge_names]
    names = [m for m in names if m.kind != "judge"]
    if any("embeddings" in m.spec.needs for m in names):
        from ragmark.metrics.similarity import similarity_embedder

        similarity_embedder()  # the dense extra is there, or an error before any work
    return Selected(names, judge_names, chosen, at_depth)


def _external(dataset: Dataset, samples: Sequence[Sample], cfg: RunConfig, prog: Progress,
              outputs: Mapping[str, Output] | None, with_answers: bool,
              fn: Callable[..., Any] | None) -> Sourced:
    """The answers and contexts of a config's pipeline or of logged outputs; contexts
    without ids take a corpus document's id by their text: a pipeline's, and logged
    outputs joined to a dataset (not a log scored on its own)."""
    from ragmark.running.source import external

    by_id = (outputs is None or dataset.format not in LOGGED) and any(
        s.truth.kind == "ids" for s in samples)
    return external(samples, cfg, prog, outputs=outputs, with_answers=with_answers, fn=fn,
                    resolve=corpus_ids(dataset.corpus.documents) if by_id else None)


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
    answers: list[Answer]
    answer_scores: list[dict[str, Score]]
    judged: list[dict[str, Score]]
    stats: StageReport


def _stages(dataset: Dataset, samples: Sequence[Sample], queries: list[Produced],
            cfg: RunConfig, sel: Selected, task: Task, prog: Progress) -> _Scored:
    """Match the rankings against the ground truth (with the retrieval metrics), judge
    refusals, score the answers, judge them."""
    names, unit = sel.names, _unit(cfg, dataset)
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
    judged, stats = judge_stage(samples, answers, unjudged_qs, sel.judges, prog=prog,
                                llm=task.llm, require_llm=task.require_llm,
                                language=cfg.language)
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
            id=s.id, question=s.question, answer=got.answers[qi].answer, metrics=metrics,
            sample=s, contexts=list(p.contexts), hops=got.matched.hops[qi],
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
    view = RunView(samples, [a.answer for a in got.answers],
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


def _score(dataset: Dataset, samples: Sequence[Sample], src: Sourced, cfg: RunConfig,
           sel: Selected, task: Task, prog: Progress, started: float) -> RunReport:
    """The tail every source shares, as stages (:func:`_stages`); then one reduce builds
    the records and the aggregates. A question whose source failed has every metric
    missing with the failure's reason. ``src`` is not changed."""
    unit = _unit(cfg, dataset)
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
