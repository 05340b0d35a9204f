"""ragmark's own pipeline as a source: the stages of :mod:`ragmark.running.stages`
(chunk -> index -> retrieve, and rerank) composed into the rankings (:func:`retrieval`,
or :func:`estimate_retrieval` for a dry run), then generate from the top_n chunks.
LLM calls (an LLM reranker, the LLM generator) stay on the driver. A sibling of the
external sources (:mod:`ragmark.running.source`); what it makes is scored by the
runner's one tail like theirs.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ragmark.case import Context, Output
from ragmark.config import RunConfig
from ragmark.embeddings.usage import (
    api_embedders,
    dry_estimate,
    embedding_notes,
    embedding_usage,
    sentence_texts,
)
from ragmark.generation.base import GenerationFailed
from ragmark.llm.config import display_url
from ragmark.matching import trec_order
from ragmark.pipelines.base import Produced, Sourced, StageReport
from ragmark.progress import Progress
from ragmark.retrieval.access import visible
from ragmark.running.stages import (  # noqa: F401  (LATENCY_SAMPLE: the runner's)
    LATENCY_SAMPLE,
    Components,
    Ranked,
    chunk_stage,
    components,
    estimable,
    index_stage,
    retrieve_stage,
)
from ragmark.types import Chunk, Dataset, Sample


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
    with_answers: bool, index_cache: bool = True, latency_sample: int = LATENCY_SAMPLE,
) -> Retrieval:
    """Build the components, chunk, index, retrieve (and rerank); only what the config's
    user may see (``access``) is indexed."""
    parts = components(dataset, cfg, with_answers=with_answers)
    seen = visible(dataset.corpus, cfg.access)
    chunks, stats = chunk_stage(dataset if seen is dataset.corpus else replace(
        dataset, corpus=seen), parts, prog)
    got = _ranked(parts, chunks, samples, cfg, prog, index_cache, latency_sample)
    stats = stats.merge(got.stats)
    used = embedding_usage(parts.chunker, parts.retriever)
    if used:
        stats = stats.merge(StageReport({}, tuple(embedding_notes(used)), {"embeddings": used}))
    return replace(got, stats=stats)


def estimate_retrieval(
    dataset: Dataset, samples: Sequence[Sample], cfg: RunConfig, prog: Progress, *,
    with_answers: bool, index_cache: bool = True, latency_sample: int = LATENCY_SAMPLE,
) -> Retrieval:
    """:func:`retrieval` for a dry run: the components must be estimable (no model call
    decides a ranking or an answer), and an embedding API is not called: its calls are
    estimated, and the retrieval stops (``stopped``) when its vectors are not all in the
    cache yet."""
    parts = components(dataset, cfg, with_answers=with_answers)
    estimable(cfg, parts)
    if not any(api_embedders(parts.chunker, parts.retriever)):
        chunks, stats = chunk_stage(dataset, parts, prog)
    else:
        chunks, stats, stopped = _dry_embeddings(dataset, samples, parts, prog)
        if stopped:
            ranked = Ranked(np.full((len(samples), 1), -1, dtype=np.int64),
                            np.zeros((len(samples), 1), dtype=np.float32))
            return Retrieval(parts, chunks, ranked, "not built", stats, stopped)
    got = _ranked(parts, chunks, samples, cfg, prog, index_cache, latency_sample)
    return replace(got, stats=stats.merge(got.stats))


def _ranked(parts: Components, chunks: list[Chunk], samples: Sequence[Sample],
            cfg: RunConfig, prog: Progress, index_cache: bool, latency_sample: int
            ) -> Retrieval:
    """Index the chunks and rank them for every question (the stages' report holds the
    index and retrieval timings only)."""
    index_source, stats = index_stage(parts, chunks, prog, cfg.retriever.name,
                                      use_cache=index_cache)
    what = "retrieving" if cfg.reranker is None else (
        f"retrieving and reranking ({cfg.reranker.name})")
    ranked, st = retrieve_stage(parts, chunks, [s.question for s in samples], cfg.top_k, prog,
                                what, latency_sample=latency_sample)
    return Retrieval(parts, chunks, ranked, index_source, stats.merge(st))


def own(
    dataset: Dataset, samples: Sequence[Sample], cfg: RunConfig, prog: Progress, *,
    with_answers: bool, index_cache: bool = True, latency_sample: int = LATENCY_SAMPLE,
    done: Retrieval | None = None,
) -> Sourced:
    """ragmark's own pipeline: :func:`retrieval` (unless ``done`` holds it), then
    generate from the top_n chunks."""
    got = done or retrieval(dataset, samples, cfg, prog, with_answers=with_answers,
                            index_cache=index_cache, latency_sample=latency_sample)
    parts = got.parts
    # refusal patterns, a language, a match rule are recorded when given (a config
    # without them records as before)
    cfg_json = without_credentials(cfg.model_dump(mode="json", exclude={"pipeline"} | (
        set() if cfg.refusal_patterns else {"refusal_patterns"}) | (
        set() if cfg.refusal_judge else {"refusal_judge"}) | (
        set() if cfg.language else {"language"}) | (
        set() if cfg.context_match != "contains" else {"context_match"}) | (
        set() if cfg.access is not None else {"access"}) | (
        set() if cfg.simulator is not None else {"simulator"}) | {"judges"}))
    if cfg.judges:  # which people's examples and rules the judges were given
        cfg_json["judges"] = cfg.judges_json()
    cfg_json["chunker"] = without_credentials({"name": parts.chunker_name,
                                               **parts.chunker_params})
    facts = {"chunks": len(got.chunks), "index": got.index_source}
    if got.stopped:
        return Sourced([Produced([], [], Output(), None, failure=got.stopped)
                        for _ in samples],
                       got.stats.timings, cfg_json, facts, list(got.stats.notes),
                       got.stats.llm)
    rankings, tops = top_n_chunks(got.chunks, got.ranked, cfg.top_n)
    answers, st = generate_stage(parts, [s.question for s in samples], tops, prog,
                                 cfg.generator.name)
    stats = got.stats.merge(st)
    produced = [Produced(g, sc, Output(ans if isinstance(ans, str) else None, tuple(
                    Context(c.text, c.id, c.doc_id) for c in top)), ans)
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
