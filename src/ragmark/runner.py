"""RunConfig -> pipeline -> per-query records -> aggregates.

One configuration over one dataset: the rankings and answers come from ragmark's own
pipeline (:mod:`ragmark.pipelines.own`), an external system (a config's ``[pipeline]``,
:mod:`ragmark.pipelines.source`) or its logged outputs; one tail (:func:`_score`)
matches, scores and judges every source alike. Which metrics are computed is decided in
:mod:`ragmark.metrics.selection`. Nothing here prints: progress goes through the ``progress`` object
the caller passes (the CLI's shows rich bars).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ragmark.config import RunConfig
from ragmark.data.fingerprint import dataset_hash
from ragmark.errors import ConfigError
from ragmark.generation.base import GenerationFailed
from ragmark.judging import NEEDS_ANSWER, estimate, judge, llm_total, parse_judge_metrics
from ragmark.llm import LLMSettings
from ragmark.metrics import answer as am
from ragmark.metrics.evaluate import compute_all
from ragmark.metrics.names import MetricName
from ragmark.metrics.selection import (  # noqa: F401  (re-exported: runner's API)
    DEFAULT_RETRIEVAL,
    check_depth,
    default_metrics,
    run_metrics,
    shorter_than,
    too_deep,
)
from ragmark.pipelines.base import Output, Sourced
from ragmark.pipelines.own import LATENCY_SAMPLE, own
from ragmark.progress import NullProgress, Progress
from ragmark.relevance import (
    JudgedItem,
    Matcher,
    judge_ranking,
    to_judged,
    unmatchable,
)
from ragmark.report.model import Aggregate, QueryRecord, RetrievedRecord, RunReport
from ragmark.types import Dataset, Document, Sample, Score

SKIPPED = "generation skipped"
"""The reason of answer metrics in a run told not to generate (--skip-generation)."""

def _gold_context(sample: Sample, docs: dict[str, Document]) -> list[str]:
    t = sample.truth
    if t.passages:
        return list(t.passages)
    if t.sections:
        out = []
        for d, s in t.sections:
            doc = docs.get(d)
            if doc is not None and 0 <= s < len(doc.sections):
                out.append(doc.sections[s])
        return out
    return [docs[d].text for d, g in t.doc_grades.items() if g > 0 and d in docs]


def _answer_scores(
    sample: Sample, answer: str, contexts: Sequence[str], gold: Sequence[str],
    metrics: Sequence[MetricName], cfg: RunConfig,
) -> dict[str, Score]:
    out: dict[str, Score] = {}
    wanted = {m.name for m in metrics}
    cov = ovl = None
    if wanted & {"keyword_coverage", "combined_score"}:
        cov = (am.keyword_coverage(answer, sample.expected_keywords)
               if sample.expected_keywords else Score.missing("no expected keywords"))
    if wanted & {"context_overlap", "combined_score"}:
        ovl = am.context_overlap(answer, list(gold)) if gold else Score.missing("no gold context")
    for m in metrics:
        n = m.name
        if n == "keyword_coverage" and cov is not None:
            out[n] = cov
        elif n == "context_overlap" and ovl is not None:
            out[n] = ovl
        elif n == "combined_score" and cov is not None and ovl is not None:
            out[n] = am.combined_score(cov, ovl, cfg.alpha)
        elif n == "groundedness":
            out[n] = am.groundedness(answer, list(contexts), cfg.grounded_threshold)
        elif n == "exact_match":
            out[n] = am.exact_match(answer, sample.expected_answer)
        elif n == "token_f1":
            out[n] = am.token_f1(answer, sample.expected_answer)
    return out


def _unit(cfg: RunConfig, dataset: Dataset) -> str:
    if cfg.unit != "auto":
        return cfg.unit
    kinds = {s.truth.kind for s in dataset.samples}
    return "document" if kinds <= {"ids", "none"} else "chunk"


def run(
    dataset: Dataset,
    cfg: RunConfig,
    metrics: Sequence[str | MetricName] | None = None,
    *,
    max_queries: int | None = None,
    skip_generation: bool = False,
    progress: Progress | None = None,
    judge_metrics: Sequence[str] = (),
    llm: LLMSettings | None = None,
    require_llm: bool = False,
    dry_run: bool = False,
    outputs: Mapping[str, Output] | None = None,
    allow_short_rankings: bool = False,
    pipeline_fn: Callable[..., Any] | None = None,
    index_cache: bool = True,
    latency_sample: int = LATENCY_SAMPLE,
) -> RunReport:
    """Run one configuration over a dataset and score it.

    The answers and contexts come from ragmark's own retriever and generator, from the
    config's external ``[pipeline]``, or from ``outputs`` (sample id -> a system's
    logged output; see :func:`ragmark.data.outputs.load_outputs`); all are scored alike.
    ``judge_metrics`` (faithfulness, answer_relevance, context_relevance,
    answer_correctness) are asked of the LLM endpoint ``llm``; without one, or when it
    does not answer, they are recorded as missing with the reason (an error with
    ``require_llm``). With ``dry_run`` nothing is asked: ``report.llm`` holds the number
    of calls the judges would make and their estimated tokens and cost.

    A metric whose cutoff exceeds ``cfg.top_k`` is a ConfigError before any work unless
    ``allow_short_rankings``; then ``report.short_metrics`` marks it. ``pipeline_fn`` is
    the callable of a ``python`` ``[pipeline]`` that lives in memory (the Python API).
    The index is loaded from ``RAGMARK_HOME/indexes`` when this corpus, chunker and
    retriever were indexed before (``index_cache=False`` rebuilds it and saves nothing);
    ``report.dataset["index"]`` says which. The first ``latency_sample`` questions are
    retrieved one at a time (their latency is reported), the rest in batches
    (``timings["questions_per_s"]`` is the throughput over all).
    """
    prog = progress or NullProgress()
    judge_names = parse_judge_metrics(judge_metrics)
    names = run_metrics(dataset, metrics)
    if outputs is None:
        check_depth([cfg], names, allow_short_rankings)
    samples = list(dataset.samples[:max_queries] if max_queries else dataset.samples)
    if not samples:
        raise ConfigError("no questions to evaluate (--max-queries 0?)")
    started = time.perf_counter()
    if outputs is not None or cfg.pipeline is not None:
        from ragmark.pipelines.source import external

        src = external(samples, cfg, prog, outputs=outputs, with_answers=not skip_generation,
                       dry_run=dry_run, fn=pipeline_fn)
    else:
        needs_answers = (any(m.kind == "answer" for m in names)
                         or bool(set(judge_names) & NEEDS_ANSWER))
        src = own(dataset, samples, cfg, prog, with_answers=needs_answers and not skip_generation,
                   dry_run=dry_run, index_cache=index_cache, latency_sample=latency_sample)
    report = _score(dataset, samples, src, cfg, names, judge_names, prog=prog, llm=llm,
                    require_llm=require_llm, dry_run=dry_run, started=started)
    if outputs is None:
        report.short_metrics = {str(m): cfg.top_k for m in too_deep(cfg, names)}
    if report.short_metrics:
        report.notes.append(
            f"{', '.join(report.short_metrics)} computed on rankings of top_k = {cfg.top_k} "
            "items, shorter than the cutoff (--allow-short-rankings): a cutoff past the "
            "ranking adds nothing, so these equal the metric at the ranking's depth")
    if outputs is not None or cfg.pipeline is not None:  # they return what they return
        ok = [len(p.chunks) for p in src.queries if p.failure is None]
        report.short_rankings = shorter_than(ok, names)
        if report.short_rankings:
            report.notes.append(
                "fewer contexts than a cutoff: "
                + ", ".join(f"@{k} for {c} of {len(ok)} questions"
                            for k, c in report.short_rankings.items())
                + "; places past the end of a ranking count as not relevant (as in "
                "trec_eval)")
    return report


def _score(
    dataset: Dataset, samples: Sequence[Sample], src: Sourced, cfg: RunConfig,
    names: Sequence[MetricName], judge_names: Sequence[str], *, prog: Progress,
    llm: LLMSettings | None, require_llm: bool, dry_run: bool, started: float,
) -> RunReport:
    """The tail every source shares: match rankings against the ground truth, score the
    answers, judge, compute the retrieval metrics and the aggregates. A question whose
    source failed has every metric missing with the failure's reason."""
    retrieval_names = [m for m in names if m.kind == "retrieval"]
    answer_names = [m for m in names if m.kind == "answer"]
    timings = dict(src.timings)
    unit = _unit(cfg, dataset)
    docs_by_id = dataset.corpus.by_id()
    failed = {qi: Score.missing(p.failure, **p.details)
              for qi, p in enumerate(src.queries) if p.failure is not None}
    records: list[QueryRecord] = []
    rankings: list[list[JudgedItem]] = []
    target_grades: list[dict[str, int]] = []
    with prog.task("matching against the ground truth", len(samples)) as advance:
        for s, p in zip(samples, src.queries, strict=True):
            matcher = Matcher(s.truth)
            ranking = judge_ranking(s.truth, p.chunks, p.scores, unit, matcher)
            rankings.append(ranking)
            target_grades.append(matcher.target_grades())
            records.append(QueryRecord(
                id=s.id, question=s.question, answer=None, metrics={}, sample=s,
                contexts=list(p.contexts),
                retrieved=[RetrievedRecord(it.rank, it.id, it.doc_id, it.score,
                                           it.match.grade if it.match else 0,
                                           it.match.targets if it.match else (),
                                           it.match.rule if it.match else None)
                           for it in ranking],
            ))
            advance(1)
    for qi, (s, rec, p) in enumerate(zip(samples, records, src.queries, strict=True)):
        if qi in failed:
            rec.metrics = {str(m): failed[qi] for m in answer_names}
        elif isinstance(p.answer, GenerationFailed):
            rec.metrics = {str(m): Score.missing(f"generation failed: {p.answer.reason}")
                           for m in answer_names}
        elif p.answer is None:
            rec.metrics = {str(m): Score.missing(SKIPPED) for m in answer_names}
        else:
            rec.answer = p.answer
            gold = _gold_context(s, docs_by_id)
            rec.metrics = _answer_scores(s, p.answer, p.contexts, gold, answer_names, cfg)
    llm_summary: dict[str, Any] = {}
    notes = list(src.notes)
    ok = [qi for qi in range(len(records)) if qi not in failed]
    judged_scores = [{n: failed[qi] for n in judge_names} if qi in failed else {}
                     for qi in range(len(records))]
    if judge_names and dry_run:
        llm_summary = {"dry_run": estimate([samples[i] for i in ok], [records[i] for i in ok],
                                           judge_names, llm)}
        for i in ok:
            judged_scores[i] = {n: Score.missing("dry run: not judged") for n in judge_names}
    elif judge_names and ok:
        t0 = time.perf_counter()
        with prog.task(f"judging ({', '.join(judge_names)})",
                       len(ok) * len(judge_names)) as advance:
            got, judge_notes, llm_summary = judge(
                [samples[i] for i in ok], [records[i] for i in ok], judge_names, llm,
                require=require_llm, advance=advance)
        for i, sc in zip(ok, got, strict=True):
            judged_scores[i] = sc
        notes += judge_notes
        timings["judge_s"] = time.perf_counter() - t0
    timings["total_s"] = time.perf_counter() - started

    judged = to_judged([s.id for s in samples], target_grades, rankings)
    values = compute_all(judged, retrieval_names)
    for qi, (s, rec) in enumerate(zip(samples, records, strict=True)):
        none = "no ground truth" if s.truth.kind == "none" else (
            "no relevant target in the ground truth")
        short = unmatchable(s.truth)
        for name, arr in values.items():
            v = float(arr[qi])
            rec.metrics[name] = failed.get(qi) or (Score.missing(short) if short else (
                Score(v) if not np.isnan(v) else Score.missing(none)))
        # keep the metric order the user asked for
        rec.metrics = {str(m): rec.metrics[str(m)] for m in names if str(m) in rec.metrics}
        if judge_names:
            rec.metrics.update(judged_scores[qi])

    all_names = [str(m) for m in names] + list(judge_names)
    aggregates = {m: Aggregate.of([r.metrics[m] for r in records]) for m in all_names}
    if "groundedness" in aggregates:
        flags = [Score(0.0 if r.metrics["groundedness"].details.get("ungrounded") else 1.0)
                 if r.metrics["groundedness"].ok else r.metrics["groundedness"] for r in records]
        aggregates["grounded_ratio"] = Aggregate.of(flags)

    cfg_json = {**src.config, "unit": unit}
    info = {"name": dataset.name, "path": dataset.path, "format": dataset.format,
            "queries": len(samples), "documents": len(dataset.corpus.documents), **src.dataset,
            "hash": dataset_hash(dataset)}
    if dataset.warnings:
        info["warnings"] = list(dataset.warnings)
        notes = [f"data loaded with warnings: {w}" for w in dataset.warnings] + notes
    failures = Counter(p.failure for p in src.queries if p.failure is not None)
    llm_all = {**llm_summary, **src.llm}
    if llm_all and "dry_run" not in llm_all:
        llm_all["total"] = llm_total(llm_all)
    return RunReport(config=cfg_json, dataset=info, metrics=aggregates, queries=records,
                     timings=timings, notes=notes, llm=llm_all, failures=dict(failures))
