"""Empty rankings: why a question's ranking can be empty, from where it came, and each
retrieval metric's mean over every question and over those that retrieved something."""

from __future__ import annotations

from collections.abc import Sequence

from ragmark.config import RunConfig
from ragmark.pipelines.base import Sourced
from ragmark.results.model import Aggregate, EmptyRankings, QueryRecord
from ragmark.types import Sample, Score


def empty_cause(cfg: RunConfig, source: str) -> str:
    """Why a question's ranking can be empty, from where it came: ``own`` (ragmark's
    retriever: BM25 finds nothing when no query term is in the index), ``pipeline`` or
    ``outputs``."""
    if source == "outputs":
        return "the logged output has no contexts"
    if source == "run_file":
        return "the run file has no line for it"
    if source == "pipeline":
        return "the pipeline returned no contexts"
    names = {cfg.retriever.name, *(r.get("name") for r in
                                   cfg.retriever.params.get("retrievers") or [])}
    if names <= {"bm25"}:
        return "no query term in the index"
    return "the retriever returned nothing"


def empty_rankings(src: Sourced, samples: Sequence[Sample], records: Sequence[QueryRecord],
                    retrieval_names: Sequence[str], cfg: RunConfig) -> EmptyRankings | None:
    """The questions whose source did not fail but ranked nothing, and each retrieval
    metric's mean over all questions and over those that retrieved something."""
    if not retrieval_names:
        return None
    empty = [qi for qi, p in enumerate(src.queries) if p.failure is None and not p.chunks]
    gone = set(empty)
    kept = [r for qi, r in enumerate(records) if qi not in gone]
    judged = [(r, samples[qi]) for qi, r in enumerate(records) if qi not in gone]
    return EmptyRankings(
        ids=tuple(samples[qi].id for qi in empty),
        cause=empty_cause(cfg, str(src.config["source"]) if "source" in src.config else
                          "pipeline" if cfg.pipeline is not None else "own"),
        of=len(samples),
        over_all={m: Aggregate.of([r.metrics[m] for r in records]) for m in retrieval_names},
        over_retrieved={m: Aggregate.of([r.metrics[m] for r in kept])
                        for m in retrieval_names},
        like_pytrec_eval=({m: Aggregate.of([s for r, sample in judged if (
            s := _as_pytrec_eval(r.metrics[m], sample)) is not None])
            for m in retrieval_names}
            if all(s.truth.kind in ("ids", "none") for s in samples) else None))


def _as_pytrec_eval(score: Score, sample: Sample) -> Score | None:
    """A question's score as pytrec_eval (and BEIR, which calls it) counts it: a question
    the qrels do not judge is not counted (None); one they judge without a relevant
    document scores 0 (ragmark's default mean leaves it missing)."""
    grades = sample.truth.doc_grades
    if not grades:
        return None
    if score.value is None and not any(g > 0 for g in grades.values()):
        return Score(0.0)
    return score
