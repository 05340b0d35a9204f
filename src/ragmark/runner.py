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
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ragmark.config import RunConfig
from ragmark.data.fingerprint import dataset_hash
from ragmark.errors import ConfigError
from ragmark.executors import Executor, active, using
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
from ragmark.pipelines.base import Output, Produced, Sourced
from ragmark.pipelines.own import LATENCY_SAMPLE, Retrieval, Stats, own, retrieval
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

def _gold_context(sample: Sample, docs: Mapping[str, Document]) -> list[str]:
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
    executor: Executor | None = None,
    done: Retrieval | None = None,
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
    (``timings["questions_per_s"]`` is the throughput over all). ``executor`` spreads the
    CPU-bound stages (default: the active one, local unless set; see
    :mod:`ragmark.executors`); ``report.executor`` records it. ``done``: this config's
    retrieval already computed (:func:`retrieval_of`).
    """
    with using(executor) as ex:
        report = _run(dataset, cfg, metrics, max_queries=max_queries,
                      skip_generation=skip_generation, progress=progress,
                      judge_metrics=judge_metrics, llm=llm, require_llm=require_llm,
                      dry_run=dry_run, outputs=outputs,
                      allow_short_rankings=allow_short_rankings, pipeline_fn=pipeline_fn,
                      index_cache=index_cache, latency_sample=latency_sample, done=done)
        report.executor = ex.info()
    return report


def _needs_answers(names: Sequence[MetricName], judge_names: Sequence[str],
                   skip_generation: bool) -> bool:
    return not skip_generation and (any(m.kind == "answer" for m in names)
                                    or bool(set(judge_names) & NEEDS_ANSWER))


def _samples(dataset: Dataset, max_queries: int | None) -> list[Sample]:
    samples = list(dataset.samples[:max_queries] if max_queries else dataset.samples)
    if not samples:
        raise ConfigError("no questions to evaluate (--max-queries 0?)")
    return samples


def retrieval_of(
    dataset: Dataset, cfg: RunConfig, metrics: Sequence[str | MetricName] | None = None, *,
    max_queries: int | None = None, skip_generation: bool = False,
    progress: Progress | None = None, judge_metrics: Sequence[str] = (),
    dry_run: bool = False, index_cache: bool = True, latency_sample: int = LATENCY_SAMPLE,
) -> Retrieval:
    """The retrieval stages of ``cfg``'s own pipeline, as :func:`run` would compute them
    with the same arguments (pass the result to it as ``done``)."""
    names = run_metrics(dataset, metrics)
    return retrieval(dataset, _samples(dataset, max_queries), cfg, progress or NullProgress(),
                     with_answers=_needs_answers(names, parse_judge_metrics(judge_metrics),
                                                 skip_generation),
                     dry_run=dry_run, index_cache=index_cache, latency_sample=latency_sample)


def _run(
    dataset: Dataset, cfg: RunConfig, metrics: Sequence[str | MetricName] | None, *,
    max_queries: int | None, skip_generation: bool, progress: Progress | None,
    judge_metrics: Sequence[str], llm: LLMSettings | None, require_llm: bool, dry_run: bool,
    outputs: Mapping[str, Output] | None, allow_short_rankings: bool,
    pipeline_fn: Callable[..., Any] | None, index_cache: bool, latency_sample: int,
    done: Retrieval | None,
) -> RunReport:
    prog = progress or NullProgress()
    judge_names = parse_judge_metrics(judge_metrics)
    names = run_metrics(dataset, metrics)
    if outputs is None:
        check_depth([cfg], names, allow_short_rankings)
    samples = _samples(dataset, max_queries)
    started = time.perf_counter()
    if outputs is not None or cfg.pipeline is not None:
        from ragmark.pipelines.source import external

        src = external(samples, cfg, prog, outputs=outputs, with_answers=not skip_generation,
                       dry_run=dry_run, fn=pipeline_fn)
    else:
        src = own(dataset, samples, cfg, prog,
                  with_answers=_needs_answers(names, judge_names, skip_generation),
                  dry_run=dry_run, index_cache=index_cache, latency_sample=latency_sample,
                  done=done)
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


MATCH_SHARD = 512
"""Questions matched (and their retrieval metrics computed) per work item."""


@dataclass(frozen=True)
class Matched:
    """Matching, columnar over questions: each judged ranking, each question's relevant
    targets with their grades, and each retrieval metric's per-question values (NaN:
    no relevant target)."""

    rankings: list[list[JudgedItem]]
    target_grades: list[dict[str, int]]
    values: dict[str, NDArray[np.float64]]


def match_shard(shared: tuple[str, Sequence[MetricName]],
                item: tuple[Sequence[Sample], Sequence[Produced]]) -> Matched:
    """One work item: match a shard of questions' rankings against their ground truth
    and compute their retrieval metrics (each question's values depend on it alone)."""
    unit, names = shared
    samples, produced = item
    rankings: list[list[JudgedItem]] = []
    grades: list[dict[str, int]] = []
    for s, p in zip(samples, produced, strict=True):
        matcher = Matcher(s.truth)
        rankings.append(judge_ranking(s.truth, p.chunks, p.scores, unit, matcher))
        grades.append(matcher.target_grades())
    values = compute_all(to_judged([s.id for s in samples], grades, rankings), names)
    return Matched(rankings, grades, values)


def match_stage(samples: Sequence[Sample], produced: Sequence[Produced], unit: str,
                names: Sequence[MetricName], prog: Progress) -> Matched:
    """:func:`match_shard` over every question, in shards on the active executor."""
    items = [(samples[a : a + MATCH_SHARD], produced[a : a + MATCH_SHARD])
             for a in range(0, len(samples), MATCH_SHARD)]
    with prog.task("matching against the ground truth", len(samples)) as advance:
        parts = active().map(match_shard, (unit, list(names)), items,
                             on_done=lambda i, r: advance(len(items[i][0])))
    return Matched([r for m in parts for r in m.rankings],
                   [g for m in parts for g in m.target_grades],
                   {str(n): np.concatenate([m.values[str(n)] for m in parts]) for n in names})


@dataclass(frozen=True)
class _Answer:
    """A question's answer as the judges read it (None: no usable answer)."""

    answer: str | None
    contexts: Sequence[str]


def answer_stage(samples: Sequence[Sample], produced: Sequence[Produced],
                 failed: Mapping[int, Score], names: Sequence[MetricName], cfg: RunConfig,
                 docs: Mapping[str, Document]) -> tuple[list[_Answer], list[dict[str, Score]]]:
    """Each question's usable answer and its answer metrics (missing with the reason
    when the question failed, generation failed or was skipped)."""
    answers: list[_Answer] = []
    scores: list[dict[str, Score]] = []
    for qi, (s, p) in enumerate(zip(samples, produced, strict=True)):
        text = p.answer if isinstance(p.answer, str) and qi not in failed else None
        answers.append(_Answer(text, list(p.contexts)))
        if qi in failed:
            scores.append({str(m): failed[qi] for m in names})
        elif isinstance(p.answer, GenerationFailed):
            scores.append({str(m): Score.missing(f"generation failed: {p.answer.reason}")
                           for m in names})
        elif p.answer is None:
            scores.append({str(m): Score.missing(SKIPPED) for m in names})
        else:
            scores.append(_answer_scores(s, p.answer, p.contexts, _gold_context(s, docs),
                                         names, cfg))
    return answers, scores


def judge_stage(samples: Sequence[Sample], answers: Sequence[_Answer],
                failed: Mapping[int, Score], judge_names: Sequence[str], *, prog: Progress,
                llm: LLMSettings | None, require_llm: bool, dry_run: bool,
                ) -> tuple[list[dict[str, Score]], Stats]:
    """Each question's judge scores (on the driver's LLM client), or in a dry run the
    estimate of the calls (``Stats.llm["dry_run"]``)."""
    ok = [qi for qi in range(len(samples)) if qi not in failed]
    scores = [{n: failed[qi] for n in judge_names} if qi in failed else {}
              for qi in range(len(samples))]
    if not judge_names:
        return scores, Stats()
    if dry_run:
        est = estimate([samples[i] for i in ok], [answers[i] for i in ok], judge_names, llm)
        for i in ok:
            scores[i] = {n: Score.missing("dry run: not judged") for n in judge_names}
        return scores, Stats(llm={"dry_run": est})
    if not ok:
        return scores, Stats()
    t0 = time.perf_counter()
    with prog.task(f"judging ({', '.join(judge_names)})", len(ok) * len(judge_names)) as adv:
        got, notes, summary = judge([samples[i] for i in ok], [answers[i] for i in ok],
                                    judge_names, llm, require=require_llm, advance=adv)
    for i, sc in zip(ok, got, strict=True):
        scores[i] = sc
    return scores, Stats({"judge_s": time.perf_counter() - t0}, tuple(notes), summary)


def _retrieval_scores(s: Sample, qi: int, values: Mapping[str, NDArray[np.float64]],
                      failed: Mapping[int, Score]) -> dict[str, Score]:
    none = "no ground truth" if s.truth.kind == "none" else (
        "no relevant target in the ground truth")
    short = unmatchable(s.truth)
    out = {}
    for name, arr in values.items():
        v = float(arr[qi])
        out[name] = failed.get(qi) or (Score.missing(short) if short else (
            Score(v) if not np.isnan(v) else Score.missing(none)))
    return out


def _score(
    dataset: Dataset, samples: Sequence[Sample], src: Sourced, cfg: RunConfig,
    names: Sequence[MetricName], judge_names: Sequence[str], *, prog: Progress,
    llm: LLMSettings | None, require_llm: bool, dry_run: bool, started: float,
) -> RunReport:
    """The tail every source shares, as stages: match rankings against the ground truth
    (with the retrieval metrics), score the answers, judge; then one reduce builds the
    records and the aggregates. A question whose source failed has every metric missing
    with the failure's reason."""
    unit = _unit(cfg, dataset)
    failed = {qi: Score.missing(p.failure, **p.details)
              for qi, p in enumerate(src.queries) if p.failure is not None}
    matched = match_stage(samples, src.queries, unit,
                          [m for m in names if m.kind == "retrieval"], prog)
    answers, answer_scores = answer_stage(samples, src.queries, failed,
                                          [m for m in names if m.kind == "answer"], cfg,
                                          dataset.corpus.by_id())
    judged, stats = judge_stage(samples, answers, failed, judge_names, prog=prog, llm=llm,
                                require_llm=require_llm, dry_run=dry_run)
    timings = {**src.timings, **stats.timings, "total_s": time.perf_counter() - started}

    records = []
    for qi, (s, p) in enumerate(zip(samples, src.queries, strict=True)):
        got = {**answer_scores[qi], **_retrieval_scores(s, qi, matched.values, failed)}
        # the metric order the user asked for, then the judges
        metrics = {str(m): got[str(m)] for m in names if str(m) in got} | judged[qi]
        records.append(QueryRecord(
            id=s.id, question=s.question, answer=answers[qi].answer, metrics=metrics,
            sample=s, contexts=list(p.contexts),
            retrieved=[RetrievedRecord(it.rank, it.id, it.doc_id, it.score,
                                       it.match.grade if it.match else 0,
                                       it.match.targets if it.match else (),
                                       it.match.rule if it.match else None)
                       for it in matched.rankings[qi]]))

    all_names = [str(m) for m in names] + list(judge_names)
    aggregates = {m: Aggregate.of([r.metrics[m] for r in records]) for m in all_names}
    if "groundedness" in aggregates:
        flags = [Score(0.0 if r.metrics["groundedness"].details.get("ungrounded") else 1.0)
                 if r.metrics["groundedness"].ok else r.metrics["groundedness"] for r in records]
        aggregates["grounded_ratio"] = Aggregate.of(flags)

    notes = list(src.notes) + list(stats.notes)
    info = {"name": dataset.name, "path": dataset.path, "format": dataset.format,
            "queries": len(samples), "documents": len(dataset.corpus.documents), **src.dataset,
            "hash": dataset_hash(dataset)}
    if dataset.warnings:
        info["warnings"] = list(dataset.warnings)
        notes = [f"data loaded with warnings: {w}" for w in dataset.warnings] + notes
    failures = Counter(p.failure for p in src.queries if p.failure is not None)
    llm_all = {**stats.llm, **src.llm}
    if llm_all and "dry_run" not in llm_all:
        llm_all["total"] = llm_total(llm_all)
    return RunReport(config={**src.config, "unit": unit}, dataset=info, metrics=aggregates,
                     queries=records, timings=timings, notes=notes, llm=llm_all,
                     failures=dict(failures))
