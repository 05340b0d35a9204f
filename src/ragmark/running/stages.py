"""The batch stages of ragmark's own pipeline up to the rankings, each a function of
columnar inputs that returns a new value and its :class:`StageReport` and changes
nothing it was given: the components built once from the config, then chunk -> index ->
retrieve (and rerank). The retrieval stage times the first ``latency_sample`` questions
one at a time (a service's latency), and retrieves the rest in blocks, spread over the
active executor's workers in shards (:mod:`ragmark.executors`); an LLM reranker's calls
stay on the driver."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ragmark.chunking import chunk_corpus
from ragmark.config import RunConfig
from ragmark.errors import ConfigError
from ragmark.executors import active
from ragmark.pipelines.base import StageReport
from ragmark.progress import Progress
from ragmark.registry import registry
from ragmark.retrieval.base import prepare, retrieve_prepared, slice_prepared
from ragmark.retrieval.index_cache import build_index
from ragmark.retrieval.rerank import Reranker
from ragmark.types import Chunk, Dataset

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
    reranker: Reranker | None
    generator: Any


def components(dataset: Dataset, cfg: RunConfig, *, with_answers: bool) -> Components:
    """The chunker, retriever, reranker and generator of ``cfg`` (a ConfigError before any
    work when one cannot be built)."""
    chunker_cfg = cfg.chunker
    chunker_name = chunker_cfg.name if chunker_cfg else dataset.default_chunker
    chunker_params = dict(chunker_cfg.params) if chunker_cfg else {}
    chunker = registry("chunker").create(chunker_name, **chunker_params)
    retriever = registry("retriever").create(cfg.retriever.name, **cfg.retriever.params)
    reranker = None if cfg.reranker is None else registry("reranker").create(
        cfg.reranker.name, **cfg.llm_params(cfg.reranker))
    generator = None if not with_answers else registry("generator").create(
        cfg.generator.name, **cfg.llm_params(cfg.generator))
    return Components(chunker_name, chunker_params, chunker, retriever, reranker, generator)


def estimable(cfg: RunConfig, parts: Components) -> None:
    """A ConfigError when a dry run cannot foresee what ``cfg`` would do without calling
    a model: an LLM reranker's scores, or an LLM generator's answers (the judges judge
    them)."""
    if parts.reranker is not None and hasattr(parts.reranker, "summary"):
        raise ConfigError(f"--dry-run cannot run reranker {cfg.reranker.name!r}: its "  # type: ignore[union-attr]
                          "scores need calls to a model's endpoint")
    if hasattr(parts.generator, "generate_many"):
        if parts.reranker is not None and hasattr(parts.reranker, "close"):
            parts.reranker.close()
        raise ConfigError(
            f"--dry-run cannot estimate the judges of generator {cfg.generator.name!r}: its "
            "answers need LLM calls; dry-run with an extractive generator or --skip-generation"
        )


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
        if llm_rerank:  # its accounting and notes (a reranker that calls a model)
            calls_model: Any = parts.reranker
            reranker_notes, llm["reranker"] = calls_model.summary()
            notes = tuple(reranker_notes)
            calls_model.close()
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
