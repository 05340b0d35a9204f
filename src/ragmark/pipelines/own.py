"""ragmark's own pipeline as a source: chunk the corpus, index it (or load the saved
index), retrieve (and rerank) every question, generate answers from the top_n chunks.

A sibling of the external sources (:mod:`ragmark.pipelines.source`); what it makes is
scored by the runner's one tail like theirs.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from ragmark.chunking import chunk_corpus
from ragmark.config import RunConfig
from ragmark.errors import ConfigError
from ragmark.generation.base import GenerationFailed
from ragmark.llm.config import display_url
from ragmark.pipelines.base import Produced, Sourced
from ragmark.progress import Progress
from ragmark.registry import registry
from ragmark.relevance import trec_order
from ragmark.retrieval.index_cache import build_index
from ragmark.types import Chunk, Dataset, Sample

LATENCY_SAMPLE = 100
"""Questions retrieved one at a time to measure the per-question latency; the rest go in
batches of RETRIEVE_BATCH."""
RETRIEVE_BATCH = 1024


def generate(
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


def own(
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
    answers = generate(generator, samples, tops, prog, cfg.generator.name)
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


