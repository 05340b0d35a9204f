"""ragmark's own pipeline as a source: a plan of batch stages.

Components are built from the config once (:func:`components`); then each stage takes
columnar inputs and returns a new value plus its :class:`StageReport`, and changes nothing it
was given: chunk -> index -> retrieve (and rerank) -> generate. The retrieval stage
times the first ``latency_sample`` questions one at a time (a service's latency), and
retrieves the rest in blocks, spread over the active executor's workers in shards
(:mod:`ragmark.executors`). LLM calls (an LLM reranker, the LLM generator) stay here on
the driver. A sibling of the external sources (:mod:`ragmark.running.source`); what it
makes is scored by the runner's one tail like theirs.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ragmark.chunking import chunk_corpus
from ragmark.config import RunConfig
from ragmark.embeddings.usage import (
    api_embedders,
    dry_estimate,
    embedding_notes,
    embedding_usage,
    sentence_texts,
)
from ragmark.errors import ConfigError
from ragmark.executors import active
from ragmark.generation.base import GenerationFailed
from ragmark.llm.config import display_url
from ragmark.pipelines.base import Produced, Sourced, StageReport
from ragmark.progress import Progress
from ragmark.registry import registry
from ragmark.relevance import trec_order
from ragmark.retrieval.base import prepare, retrieve_prepared, slice_prepared
from ragmark.retrieval.index_cache import build_index
from ragmark.types import Chunk, Dataset, Sample

LATENCY_SAMPLE = 100
"""Questions retrieved one at a time to measure the per-question latency; the rest go in
blocks of RETRIEVE_BATCH."""
RETRIEVE_BATCH = 1024
SHARD = 256
"""Questions per work item when an executor spreads retrieval: a multiple of the dense
search's query block, so a shard is searched exactly as the local run searches it."""


@dataclass(frozen=True)
class Ranked:
    """The rankings of n questions, columnar: ``(n, top_k)`` chunk indices (``-1``
    padded) and float32 scores (``-inf`` padded), best first."""

    ids: NDArray[np.int64]
    scores: NDArray[np.float32]


@dataclass(frozen=True)
class Components:
    """Everything a config builds, built once before any stage runs."""

    chunker_name: str
    chunker_params: dict[str, Any]
    chunker: Any
    retriever: Any
    reranker: Any
    generator: Any


def components(dataset: Dataset, cfg: RunConfig, *, with_answers: bool,
               dry_run: bool) -> Components:
    """The chunker, retriever, reranker and generator of ``cfg`` (a ConfigError before any
    work when one cannot be built, or cannot run in a dry run)."""
    chunker_cfg = cfg.chunker
    chunker_name = chunker_cfg.name if chunker_cfg else dataset.default_chunker
    chunker_params = dict(chunker_cfg.params) if chunker_cfg else {}
    chunker = registry("chunker").create(chunker_name, **chunker_params)
    retriever = registry("retriever").create(cfg.retriever.name, **cfg.retriever.params)
    reranker = None if cfg.reranker is None else registry("reranker").create(
        cfg.reranker.name, **cfg.llm_params(cfg.reranker))
    if dry_run and reranker is not None and hasattr(reranker, "summary"):
        raise ConfigError(f"--dry-run cannot run reranker {cfg.reranker.name!r}: its "  # type: ignore[union-attr]
                          "scores need calls to a model's endpoint")
    generator = None if not with_answers else registry("generator").create(
        cfg.generator.name, **cfg.llm_params(cfg.generator))
    if dry_run and hasattr(generator, "generate_many"):
        if reranker is not None and hasattr(reranker, "close"):
            reranker.close()
        raise ConfigError(
            f"--dry-run cannot estimate the judges of generator {cfg.generator.name!r}: its "
            "answers need LLM calls; dry-run with an extractive generator or --skip-generation"
        )
    return Components(chunker_name, chunker_params, chunker, retriever, reranker, generator)


def chunk_stage(dataset: Dataset, parts: Components, prog: Progress
                ) -> tuple[list[Chunk], StageReport]:
    t0 = time.perf_counter()
    chunks: list[Chunk] = []
    with prog.task("chunking", len(dataset.corpus.documents)) as advance:
        step = 500
        docs = dataset.corpus.documents
        remote = getattr(getattr(parts.chunker, "embedder", None), "remote", False)
        warm = getattr(parts.chunker, "warm", None) if active().distributed or remote else None
        for i in range(0, len(docs), step):
            if warm is not None:  # a semantic chunker's sentences, embedded on the workers
                # (or by an embedding API, many requests at once)
                warm(docs[i : i + step])
            chunks.extend(chunk_corpus(docs[i : i + step], parts.chunker))
            advance(len(docs[i : i + step]))
    if not chunks:
        raise ConfigError(f"chunker {parts.chunker_name!r} produced no chunks from the corpus")
    return chunks, StageReport({"chunk_s": time.perf_counter() - t0})


def index_stage(parts: Components, chunks: Sequence[Chunk], prog: Progress, name: str, *,
                use_cache: bool) -> tuple[str, StageReport]:
    """Index the chunks (or load the saved index): ``"loaded"``, ``"built"`` or ``"not
    cached"``."""
    t0 = time.perf_counter()
    passes = int(getattr(parts.retriever, "index_passes", 1))
    with prog.task(f"indexing {len(chunks):,} chunks ({name})", len(chunks) * passes) as adv:
        source = build_index(parts.retriever, chunks, adv, use_cache=use_cache)
    return source, StageReport({"index_s": time.perf_counter() - t0})


def _llm_reranker(reranker: Any) -> bool:
    return reranker is not None and hasattr(reranker, "summary")


def _rerank(reranker: Any, question: str, ids: NDArray[np.int64], scores: NDArray[np.float32],
            texts: Sequence[str]) -> NDArray[np.float32]:
    """The scores of one question's ranking after reranking (a new array)."""
    out = scores.copy()
    keep = ids >= 0
    out[keep] = reranker.score(question, [texts[i] for i in ids[keep]])
    return out


def rerank_block(reranker: Any, questions: Sequence[str], ranked: Ranked,
                 texts: Sequence[str]) -> NDArray[np.float32]:
    """The scores of a block of questions after reranking: through the reranker's
    ``score_many`` when it has one (its calls for the block then go out concurrently),
    else one question at a time."""
    if not len(questions):
        return ranked.scores
    many = getattr(reranker, "score_many", None)
    if many is None:
        return np.stack([_rerank(reranker, q, ranked.ids[i], ranked.scores[i], texts)
                         for i, q in enumerate(questions)])
    keep = ranked.ids >= 0
    got = many(questions, [[texts[j] for j in ranked.ids[i][keep[i]]]
                           for i in range(len(questions))])
    out = ranked.scores.copy()
    for i, scores in enumerate(got):
        out[i][keep[i]] = scores
    return out


def retrieve_shard(shared: tuple[Any, Any, Sequence[str], int],
                   item: tuple[Sequence[str], object]) -> tuple[Ranked, float]:
    """One executor work item: retrieve (and rerank, unless the reranker calls an LLM)
    a shard of questions. ``shared``: the retriever, the reranker (or None), the chunk
    texts, top_k; ``item``: the questions and their prepared queries."""
    retriever, reranker, texts, top_k = shared
    questions, prepared = item
    ids, scores = retrieve_prepared(retriever, questions, prepared, top_k)
    t0 = time.perf_counter()
    if reranker is not None:
        scores = rerank_block(reranker, questions, Ranked(ids, scores), texts)
    return Ranked(ids, scores), time.perf_counter() - t0


def retrieve_stage(parts: Components, chunks: Sequence[Chunk], questions: Sequence[str],
                   top_k: int, prog: Progress, what: str, *,
                   latency_sample: int) -> tuple[Ranked, StageReport]:
    """Every question's ranking. The first ``latency_sample`` questions are retrieved
    (and reranked) one at a time and timed; the rest in blocks of RETRIEVE_BATCH, in
    shards of SHARD questions on the executor's workers when it spreads work (an LLM
    reranker then runs here after them). Throughput is over all questions."""
    n = len(questions)
    texts = [c.text for c in chunks]
    ex = active()
    llm_rerank = _llm_reranker(parts.reranker)
    shared = (parts.retriever, None if llm_rerank else parts.reranker, texts, top_k)
    n_timed = min(max(latency_sample, 1), n)
    latency = np.empty(n_timed, dtype=np.float64)
    got: list[Ranked] = []
    rerank_s = 0.0
    notes: tuple[str, ...] = ()
    llm: dict[str, Any] = {}
    t0 = time.perf_counter()
    try:
        with prog.task(what, n) as advance:
            local = (parts.retriever, parts.reranker, texts, top_k)
            for qi in range(n_timed):
                t = time.perf_counter()
                ranked, r_s = retrieve_shard(local, ([questions[qi]], None))
                latency[qi] = time.perf_counter() - t
                got.append(ranked)
                rerank_s += r_s
                advance(1)
            blocks = [(s, min(s + RETRIEVE_BATCH, n)) for s in range(n_timed, n, RETRIEVE_BATCH)]
            if not ex.distributed:
                for start, stop in blocks:
                    ranked, r_s = retrieve_shard(local, (questions[start:stop], None))
                    got.append(ranked)
                    rerank_s += r_s
                    advance(stop - start)
            else:
                items: list[tuple[Sequence[str], object]] = []
                for start, stop in blocks:  # queries prepared block by block, as locally
                    prepared = prepare(parts.retriever, questions[start:stop])
                    for s in range(start, stop, SHARD):
                        e = min(s + SHARD, stop)
                        items.append((questions[s:e], slice_prepared(prepared, s - start,
                                                                     e - start)))
                results = ex.map(retrieve_shard, shared, items,
                                 on_done=lambda i, r: advance(len(items[i][0])))
                got.extend(r for r, _ in results)
                rerank_s += sum(s for _, s in results)
                if llm_rerank and results:
                    rest = Ranked(np.concatenate([r.ids for r, _ in results]),
                                  np.concatenate([r.scores for r, _ in results]))
                    t_r = time.perf_counter()
                    scores = rerank_block(parts.reranker, questions[n_timed:], rest, texts)
                    rerank_s += time.perf_counter() - t_r
                    got = got[:n_timed] + [Ranked(rest.ids, scores)]
    finally:
        if llm_rerank:  # its accounting and notes
            reranker_notes, llm["reranker"] = parts.reranker.summary()
            notes = tuple(reranker_notes)
            parts.reranker.close()
    ranked = Ranked(np.concatenate([r.ids for r in got]),
                    np.concatenate([r.scores for r in got]))
    timings = {"retrieve_s": time.perf_counter() - t0}
    if parts.reranker is not None:
        timings["rerank_s"] = rerank_s
    timings["latency_p50_ms"] = float(np.percentile(latency, 50)) * 1000
    timings["latency_p95_ms"] = float(np.percentile(latency, 95)) * 1000
    timings["latency_sample"] = float(n_timed)
    timings["questions_per_s"] = n / max(timings["retrieve_s"], 1e-9)
    return ranked, StageReport(timings, notes, llm)


def generate_stage(parts: Components, questions: Sequence[str], tops: Sequence[list[Chunk]],
                   prog: Progress, name: str
                   ) -> tuple[list[str | GenerationFailed | None], StageReport]:
    """One answer per question (None when generation is skipped); a generator with
    ``generate_many`` (the LLM one) answers all questions concurrently."""
    generator = parts.generator
    if generator is None:
        return [None] * len(questions), StageReport({"answer_s": 0.0})
    t0 = time.perf_counter()
    with prog.task(f"answering ({name})", len(questions)) as advance:
        many = getattr(generator, "generate_many", None)
        if many is not None:
            answers: list[str | GenerationFailed | None] = list(many(questions, tops, advance))
        else:
            answers = []
            for q, top in zip(questions, tops, strict=True):
                answers.append(generator.generate(q, top))
                advance(1)
    stats = StageReport({"answer_s": time.perf_counter() - t0})
    if hasattr(generator, "summary"):  # the LLM generator: its accounting and notes
        gen_notes, gen_llm = generator.summary()
        stats = stats.merge(StageReport({}, tuple(gen_notes),
                                        {"generator": gen_llm} if gen_llm else {}))
    return answers, stats


def top_n_chunks(chunks: Sequence[Chunk], ranked: Ranked, top_n: int
                 ) -> tuple[list[tuple[list[Chunk], list[float]]], list[list[Chunk]]]:
    """Each question's retrieved chunks with their scores, and the ``top_n`` the
    generator sees, best first in trec order."""
    out: list[tuple[list[Chunk], list[float]]] = []
    tops: list[list[Chunk]] = []
    for ids, scores in zip(ranked.ids, ranked.scores, strict=True):
        keep = ids >= 0
        got = [chunks[i] for i in ids[keep]]
        sc = scores[keep].tolist()
        out.append((got, sc))
        tops.append([got[i] for i in trec_order([c.id for c in got], sc)[:top_n]])
    return out, tops


@dataclass(frozen=True)
class Retrieval:
    """The stages of ragmark's own pipeline up to the rankings: what ``own`` finishes
    with generation (a compare on a cluster computes these for its configs side by
    side)."""

    parts: Components
    chunks: list[Chunk]
    ranked: Ranked
    index_source: str
    stats: StageReport
    stopped: str | None = None
    """Set when a dry run stopped before retrieval (embeddings not cached): why."""


def _dry_embeddings(dataset: Dataset, samples: Sequence[Sample], parts: Components,
                    prog: Progress) -> tuple[list[Chunk], StageReport, str | None]:
    """A dry run's chunking when an embedding API is involved: what the chunker's and
    the retriever's embeddings would need. Stops (the reason) at the first that is not
    all cached, since what follows depends on those vectors."""
    docs = dataset.corpus.documents
    est = dry_estimate([parts.chunker], sentence_texts(parts.chunker, docs))
    why = ("dry run: the embeddings are not in the cache yet, so nothing after them "
           "(retrieval, answers, judge calls) can be estimated")
    if est.get("calls"):
        return [], StageReport(llm={"embeddings": est}), why
    chunks, stats = chunk_stage(dataset, parts, prog)
    texts = [c.text for c in chunks] + [s.question for s in samples]
    more = dry_estimate([parts.retriever], texts)
    if more.get("calls"):
        return chunks, stats.merge(StageReport(llm={"embeddings": more})), why
    return chunks, stats.merge(StageReport(llm={"embeddings": more or est})), None


def retrieval(
    dataset: Dataset, samples: Sequence[Sample], cfg: RunConfig, prog: Progress, *,
    with_answers: bool, dry_run: bool, index_cache: bool = True,
    latency_sample: int = LATENCY_SAMPLE,
) -> Retrieval:
    """Build the components, chunk, index, retrieve (and rerank)."""
    parts = components(dataset, cfg, with_answers=with_answers, dry_run=dry_run)
    if dry_run and any(api_embedders(parts.chunker, parts.retriever)):
        chunks, stats, stopped = _dry_embeddings(dataset, samples, parts, prog)
        if stopped:
            ranked = Ranked(np.full((len(samples), 1), -1, dtype=np.int64),
                            np.zeros((len(samples), 1), dtype=np.float32))
            return Retrieval(parts, chunks, ranked, "not built", stats, stopped)
    else:
        chunks, stats = chunk_stage(dataset, parts, prog)
    index_source, st = index_stage(parts, chunks, prog, cfg.retriever.name,
                                   use_cache=index_cache)
    stats = stats.merge(st)
    what = "retrieving" if cfg.reranker is None else (
        f"retrieving and reranking ({cfg.reranker.name})")
    ranked, st = retrieve_stage(parts, chunks, [s.question for s in samples], cfg.top_k, prog,
                                what, latency_sample=latency_sample)
    stats = stats.merge(st)
    used = embedding_usage(parts.chunker, parts.retriever)
    if used and not dry_run:
        stats = stats.merge(StageReport({}, tuple(embedding_notes(used)), {"embeddings": used}))
    return Retrieval(parts, chunks, ranked, index_source, stats)


def own(
    dataset: Dataset, samples: Sequence[Sample], cfg: RunConfig, prog: Progress, *,
    with_answers: bool, dry_run: bool, index_cache: bool = True,
    latency_sample: int = LATENCY_SAMPLE, done: Retrieval | None = None,
) -> Sourced:
    """ragmark's own pipeline: :func:`retrieval` (unless ``done`` holds it), then
    generate from the top_n chunks."""
    got = done or retrieval(dataset, samples, cfg, prog, with_answers=with_answers,
                            dry_run=dry_run, index_cache=index_cache,
                            latency_sample=latency_sample)
    parts = got.parts
    cfg_json = without_credentials(cfg.model_dump(mode="json", exclude={"pipeline"}))
    cfg_json["chunker"] = without_credentials({"name": parts.chunker_name,
                                               **parts.chunker_params})
    facts = {"chunks": len(got.chunks), "index": got.index_source}
    if got.stopped:
        return Sourced([Produced([], [], [], None, failure=got.stopped) for _ in samples],
                       got.stats.timings, cfg_json, facts, list(got.stats.notes),
                       got.stats.llm)
    rankings, tops = top_n_chunks(got.chunks, got.ranked, cfg.top_n)
    answers, st = generate_stage(parts, [s.question for s in samples], tops, prog,
                                 cfg.generator.name)
    stats = got.stats.merge(st)
    produced = [Produced(g, sc, [c.text for c in top], ans)
                for (g, sc), top, ans in zip(rankings, tops, answers, strict=True)]
    return Sourced(produced, stats.timings, cfg_json, facts, list(stats.notes), stats.llm)


def without_credentials(value: Any) -> Any:
    """A config as recorded: every ``base_url`` (the [llm] table's, an embedding or
    rerank endpoint's) without a user:password part."""
    if isinstance(value, dict):
        return {k: display_url(v) if k == "base_url" and isinstance(v, str)
                else without_credentials(v) for k, v in value.items()}
    if isinstance(value, list):
        return [without_credentials(v) for v in value]
    return value
