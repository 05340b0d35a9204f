"""RunConfig -> pipeline -> per-query records -> aggregates.

One configuration over one dataset: the rankings and answers come from ragmark's own
pipeline (:mod:`ragmark.running.own`), an external system (a config's ``[pipeline]``,
:mod:`ragmark.running.source`) or its logged outputs; one tail
(:mod:`ragmark.running.tail`, with the stages of :mod:`ragmark.running.scoring`)
matches, scores and judges every source alike.
Which metrics are computed is decided in :mod:`ragmark.running.selection`. Nothing here
prints: progress goes through the ``progress`` object the caller passes (the CLI's shows
rich bars).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from ragmark.case import Case
from ragmark.config import RunConfig
from ragmark.data.fingerprint import LOGGED
from ragmark.errors import ConfigError
from ragmark.executors import using
from ragmark.metrics.names import MetricName
from ragmark.pipelines.base import (
    Output,
    Sourced,
    corpus_ids,
)
from ragmark.progress import NullProgress, Progress
from ragmark.results.model import (
    QueryRecord,
    RunReport,
)
from ragmark.running.judging import estimate, needs_answer, parse_judge_metrics
from ragmark.running.own import Retrieval, estimate_retrieval, own, retrieval
from ragmark.running.repeats import DEFAULT_TEMPERATURE, repeated_summary
from ragmark.running.scoring import (
    answer_stage,
)
from ragmark.running.selection import (  # noqa: F401  (re-exported: runner's API)
    check_depth,
    default_metrics,
    run_metrics,
    select,
    shorter_than,
    too_deep,
)
from ragmark.running.source import external
from ragmark.running.tail import Selected, score
from ragmark.running.task import Task
from ragmark.types import Dataset, Sample, Score


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


def _needs_answers(sel: Selected, task: Task) -> bool:
    return not task.skip_generation and (task.answers or any(
        m.kind == "answer" for m in sel.names) or any(needs_answer(j) for j in sel.judges))


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
                     with_answers=_needs_answers(sel, task),
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
                  with_answers=_needs_answers(sel, task),
                  index_cache=task.index_cache, latency_sample=task.latency_sample,
                  done=done)
    report = score(dataset, samples, src, cfg, sel, task, prog, started)
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
    return dry_answered(dataset, cfg, task, progress=progress, outputs=outputs)[0]


def dry_answered(dataset: Dataset, cfg: RunConfig, task: Task | None = None, *,
                 progress: Progress | None = None,
                 outputs: Mapping[str, Output] | None = None
                 ) -> tuple[dict[str, Any], list[QueryRecord]]:
    """:func:`estimate_run`'s estimate, and each question as the run would answer it
    (a record with its answer and contexts, no metric)."""
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
            with_answers = _needs_answers(sel, task)
            got = estimate_retrieval(dataset, samples, cfg, prog, with_answers=with_answers,
                                     index_cache=task.index_cache,
                                     latency_sample=task.latency_sample)
            src = own(dataset, samples, cfg, prog, with_answers=with_answers, done=got)
    failed = {qi: Score.missing(p.failure) for qi, p in enumerate(src.queries)
              if p.failure is not None}
    answers, _ = answer_stage(samples, src.queries, failed, [], cfg, dataset.corpus.by_id())
    ok = [qi for qi in range(len(samples)) if qi not in failed]
    est = estimate_repeated([answers[i] for i in ok], sel.judges, task, cfg.guidance())
    records = [QueryRecord(s.id, s.question, [], a.answer_or_none, {}, list(a.contexts),
                           sample=s)
               for s, a in zip(samples, answers, strict=True)]
    if "embeddings" in src.llm:
        est = {**est, "embeddings": src.llm["embeddings"]}
    return est, records


def estimate_repeated(cases: Sequence[Case], judges: Sequence[str], task: Task,
                      guidance: Any) -> dict[str, Any]:
    """The dry run's count of the judge calls: each juror's (``--judge-llm``) and each
    repeat's (``--judge-repeats``: other seeds, other calls) its own, the counts summed."""
    endpoints = task.jurors or (task.llm,)
    if (task.judge_repeats == 1 and len(endpoints) == 1) or endpoints[0] is None:
        return estimate(cases, judges, task.llm, guidance)
    heat = task.judge_temperature or DEFAULT_TEMPERATURE
    each = [estimate(cases, judges, e.repeat(r, heat) if task.judge_repeats > 1 else e,
                     guidance) for e in endpoints if e is not None
            for r in range(task.judge_repeats)]
    return {**repeated_summary(each), "questions": each[0]["questions"],
            "judge_repeats": task.judge_repeats,
            **({"jurors": [e.model for e in task.jurors]} if task.jurors else {})}


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
    by_id = (outputs is None or dataset.format not in LOGGED) and any(
        s.truth.kind == "ids" for s in samples)
    return external(samples, cfg, prog, outputs=outputs, with_answers=with_answers, fn=fn,
                    resolve=corpus_ids(dataset.corpus.documents) if by_id else None)
