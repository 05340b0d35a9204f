"""RunConfig -> pipeline -> per-query records -> aggregates.

One configuration over one dataset: chunk the corpus, index it, retrieve for every
question, judge the rankings, generate answers, score them. The rankings and answers may
instead come from an external system (a config's ``[pipeline]``, see
:mod:`ragmark.pipelines`) or from its logged outputs; one tail (:func:`_score`) scores
every source alike. Nothing here prints: progress goes through the ``progress`` object
the caller passes (the CLI's shows rich bars).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ragmark.chunking import chunk_corpus
from ragmark.config import RunConfig
from ragmark.data.fingerprint import dataset_hash
from ragmark.errors import ConfigError
from ragmark.generation.base import GenerationFailed
from ragmark.judging import NEEDS_ANSWER, estimate, judge, llm_total, parse_judge_metrics
from ragmark.llm import LLMSettings
from ragmark.llm.config import display_url
from ragmark.metrics import answer as am
from ragmark.metrics.evaluate import compute_all
from ragmark.metrics.names import MetricName, parse_metrics
from ragmark.pipelines.base import Output, Produced, Sourced
from ragmark.progress import NullProgress, Progress
from ragmark.registry import registry
from ragmark.relevance import (
    JudgedItem,
    Matcher,
    judge_ranking,
    to_judged,
    trec_order,
    unmatchable,
)
from ragmark.report.model import Aggregate, QueryRecord, RetrievedRecord, RunReport
from ragmark.retrieval.index_cache import build_index
from ragmark.types import Chunk, Dataset, Document, Sample, Score

SKIPPED = "generation skipped"
"""The reason of answer metrics in a run told not to generate (--skip-generation)."""

LATENCY_SAMPLE = 100
"""Questions retrieved one at a time to measure the per-question latency; the rest go in
batches of RETRIEVE_BATCH."""
RETRIEVE_BATCH = 1024

DEFAULT_RETRIEVAL = ["recall@3", "recall@5", "recall@10", "precision@5", "hit@5", "mrr",
                     "ndcg@10", "map"]


def default_metrics(dataset: Dataset) -> list[MetricName]:
    """The metrics the dataset's references allow: retrieval metrics when some question
    has a ground truth, and the answer metrics its gold context, keywords and expected
    answers allow; so a default metric can get a value for some question."""
    names: list[str] = []
    truth = [s.truth.kind != "none" for s in dataset.samples]
    keywords = [bool(s.expected_keywords) for s in dataset.samples]
    if any(truth):
        names += DEFAULT_RETRIEVAL
    if any(keywords):
        names.append("keyword_coverage")
    if any(truth):
        names.append("context_overlap")
    if any(t and k for t, k in zip(truth, keywords, strict=True)):
        names.append("combined_score")
    names.append("groundedness")
    if any(s.expected_answer for s in dataset.samples):
        names += ["exact_match", "token_f1"]
    return parse_metrics(names)


def too_deep(cfg: RunConfig, names: Sequence[MetricName]) -> list[MetricName]:
    """The retrieval metrics whose cutoff exceeds what ``cfg`` retrieves (its ``top_k``);
    an external pipeline returns what it returns, so none of its metrics is."""
    if cfg.pipeline is not None:
        return []
    return [m for m in names if m.kind == "retrieval" and m.k is not None and m.k > cfg.top_k]


def check_depth(configs: Sequence[RunConfig], names: Sequence[MetricName],
                allow_short_rankings: bool = False) -> None:
    """A ConfigError, before any work, when a metric cuts deeper than a config's ranking:
    recall@10 on a top-3 ranking is recall@3 under another name. With
    ``allow_short_rankings`` such metrics are computed and marked in every output."""
    if allow_short_rankings:
        return
    lines = []
    for cfg in configs:
        deep = too_deep(cfg, names)
        if deep:
            lines.append(f"config {cfg.name!r} retrieves top_k = {cfg.top_k} items, but "
                         f"{', '.join(str(m) for m in deep)} "
                         f"{'cuts' if len(deep) == 1 else 'cut'} at "
                         f"{', '.join(sorted({str(m.k) for m in deep}, key=int))}")
    if lines:
        deepest = max(m.k or 0 for cfg in configs for m in too_deep(cfg, names))
        raise ConfigError(
            "\n".join(lines) + f"\nsuch a metric would be computed on a ranking shorter than "
            f"its cutoff and silently equal a shallower one. Fix: retrieve deeper (--top-k "
            f"{deepest}, or top_k = {deepest} in the config), ask for cutoffs within top_k "
            "(--metrics), or pass --allow-short-rankings to compute them anyway, marked in "
            "every output")


def shorter_than(lengths: Sequence[int], names: Sequence[MetricName]) -> dict[int, int]:
    """Cutoff k -> how many rankings (of the given lengths) have fewer than k items, for
    every cutoff of ``names`` where some do."""
    cuts = sorted({m.k for m in names if m.kind == "retrieval" and m.k is not None})
    counts = {k: sum(1 for n in lengths if n < k) for k in cuts}
    return {k: c for k, c in counts.items() if c}


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


def _generate(
    generator: Any, samples: Sequence[Sample], tops: Sequence[list[Chunk]], prog: Progress,
    name: str,
) -> list[str | GenerationFailed | None]:
    """One answer per question (None when generation is skipped); a generator with
    ``generate_many`` (the LLM one) answers all questions concurrently."""
    if generator is None:
        return [None] * len(samples)
    with prog.task(f"answering ({name})", len(samples)) as advance:
        many = getattr(generator, "generate_many", None)
        if many is not None:
            return list(many([s.question for s in samples], tops, advance))
        out: list[str | GenerationFailed | None] = []
        for s, top in zip(samples, tops, strict=True):
            out.append(generator.generate(s.question, top))
            advance(1)
        return out


def _unit(cfg: RunConfig, dataset: Dataset) -> str:
    if cfg.unit != "auto":
        return cfg.unit
    kinds = {s.truth.kind for s in dataset.samples}
    return "document" if kinds <= {"ids", "none"} else "chunk"


def _own(
    dataset: Dataset, samples: Sequence[Sample], cfg: RunConfig, prog: Progress, *,
    with_answers: bool, dry_run: bool, index_cache: bool = True,
    latency_sample: int = LATENCY_SAMPLE,
) -> Sourced:
    """ragmark's own pipeline: chunk, index, retrieve (and rerank) one question at a time,
    then generate from the top_n chunks."""
    timings: dict[str, float] = {}
    chunker_cfg = cfg.chunker
    chunker_name = chunker_cfg.name if chunker_cfg else dataset.default_chunker
    chunker_params = chunker_cfg.params if chunker_cfg else {}
    chunker = registry("chunker").create(chunker_name, **chunker_params)
    t0 = time.perf_counter()
    chunks: list[Chunk] = []
    with prog.task("chunking", len(dataset.corpus.documents)) as advance:
        step = 500
        docs = dataset.corpus.documents
        for i in range(0, len(docs), step):
            chunks.extend(chunk_corpus(docs[i : i + step], chunker))
            advance(len(docs[i : i + step]))
    if not chunks:
        raise ConfigError(f"chunker {chunker_name!r} produced no chunks from the corpus")
    timings["chunk_s"] = time.perf_counter() - t0
    retriever = registry("retriever").create(cfg.retriever.name, **cfg.retriever.params)
    reranker = None if cfg.reranker is None else registry("reranker").create(
        cfg.reranker.name, **cfg.llm_params(cfg.reranker))
    t0 = time.perf_counter()
    passes = int(getattr(retriever, "index_passes", 1))
    with prog.task(f"indexing {len(chunks):,} chunks ({cfg.retriever.name})",
                   len(chunks) * passes) as advance:
        index_source = build_index(retriever, chunks, advance, use_cache=index_cache)
    timings["index_s"] = time.perf_counter() - t0

    # The first `latency_sample` questions one at a time, as a service answers them: the
    # per-question latency is real; the rest in batches, for throughput.
    ids = np.full((len(samples), cfg.top_k), -1, dtype=np.int64)
    scores = np.full((len(samples), cfg.top_k), -np.inf, dtype=np.float32)
    n_timed = min(max(latency_sample, 1), len(samples))
    latency = np.empty(n_timed, dtype=np.float64)
    rerank_s = 0.0
    t0 = time.perf_counter()
    what = "retrieving"
    if cfg.reranker is not None:
        what = f"retrieving and reranking ({cfg.reranker.name})"
    if dry_run and hasattr(reranker, "summary"):
        raise ConfigError(f"--dry-run cannot run reranker {cfg.reranker.name!r}: its "  # type: ignore[union-attr]
                          "scores need LLM calls")
    notes: list[str] = []
    llm: dict[str, Any] = {}

    def rerank(qi: int) -> None:
        nonlocal rerank_s
        if reranker is None:
            return
        t_r = time.perf_counter()
        keep = ids[qi] >= 0
        scores[qi][keep] = reranker.score(samples[qi].question,
                                          [chunks[i].text for i in ids[qi][keep]])
        rerank_s += time.perf_counter() - t_r

    try:
        with prog.task(what, len(samples)) as advance:
            for qi in range(n_timed):
                t = time.perf_counter()
                got_i, got_s = retriever.retrieve([samples[qi].question], cfg.top_k)
                ids[qi], scores[qi] = got_i[0], got_s[0]
                rerank(qi)
                latency[qi] = time.perf_counter() - t
                advance(1)
            for start in range(n_timed, len(samples), RETRIEVE_BATCH):
                stop = min(start + RETRIEVE_BATCH, len(samples))
                got_i, got_s = retriever.retrieve(
                    [s.question for s in samples[start:stop]], cfg.top_k)
                ids[start:stop], scores[start:stop] = got_i, got_s
                for qi in range(start, stop):
                    rerank(qi)
                advance(stop - start)
    finally:
        if reranker is not None and hasattr(reranker, "summary"):  # the LLM reranker
            notes, llm["reranker"] = reranker.summary()  # its accounting and notes
            reranker.close()
    timings["retrieve_s"] = time.perf_counter() - t0
    if reranker is not None:
        timings["rerank_s"] = rerank_s
    timings["latency_p50_ms"] = float(np.percentile(latency, 50)) * 1000
    timings["latency_p95_ms"] = float(np.percentile(latency, 95)) * 1000
    timings["latency_sample"] = float(n_timed)
    timings["questions_per_s"] = len(samples) / max(timings["retrieve_s"], 1e-9)

    generator = None if not with_answers else registry("generator").create(
        cfg.generator.name, **cfg.llm_params(cfg.generator))
    if dry_run and hasattr(generator, "generate_many"):
        raise ConfigError(
            f"--dry-run cannot estimate the judges of generator {cfg.generator.name!r}: its "
            "answers need LLM calls; dry-run with an extractive generator or --skip-generation"
        )
    ranked: list[tuple[list[Chunk], list[float]]] = []
    tops: list[list[Chunk]] = []
    for qi in range(len(samples)):
        keep = ids[qi] >= 0
        got = [chunks[i] for i in ids[qi][keep]]
        sc = scores[qi][keep].tolist()
        ranked.append((got, sc))
        # the generator sees the chunks best first, in trec order
        tops.append([got[i] for i in trec_order([c.id for c in got], sc)[: cfg.top_n]])
    t0 = time.perf_counter()
    answers = _generate(generator, samples, tops, prog, cfg.generator.name)
    timings["answer_s"] = time.perf_counter() - t0
    if generator is not None and hasattr(generator, "summary"):  # the LLM generator
        gen_notes, gen_llm = generator.summary()  # its accounting and notes
        notes += gen_notes
        if gen_llm:
            llm["generator"] = gen_llm
    cfg_json: dict[str, Any] = cfg.model_dump(mode="json", exclude={"pipeline"})
    if cfg.llm is not None and cfg.llm.base_url:  # never a user:password in a results file
        cfg_json["llm"]["base_url"] = display_url(cfg.llm.base_url)
    cfg_json["chunker"] = {"name": chunker_name, **chunker_params}
    produced = [Produced(got, sc, [c.text for c in top], ans)
                for (got, sc), top, ans in zip(ranked, tops, answers, strict=True)]
    return Sourced(produced, timings, cfg_json, {"chunks": len(chunks), "index": index_source},
                   notes, llm)


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
        src = _own(dataset, samples, cfg, prog, with_answers=needs_answers and not skip_generation,
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


def run_metrics(dataset: Dataset, metrics: Sequence[str | MetricName] | None
                ) -> list[MetricName]:
    """The metrics a run computes: those asked for, else the dataset's defaults."""
    return parse_metrics(metrics) if metrics else default_metrics(dataset)


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
