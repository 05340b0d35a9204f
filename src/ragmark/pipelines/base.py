"""What an external RAG system answers, and how it becomes a ranking. Pure.

An external system (a Python callable, an HTTP service, or the logged outputs of one)
gives, per question, an answer and the contexts it was made from. The contexts are the
ranking, in the order given: the first is rank 1.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ragmark.case import NO_ANSWER, RECORDED  # noqa: F401 (the runners' names for them)
from ragmark.data.logged import (  # noqa: F401 (the pipelines' names for them)
    _EMPTY,
    CONTEXT_ITEM,
    Context,
    Logged,
    Output,
    ShapeError,
    parse_answer,
    parse_confidence,
    parse_context,
    parse_contexts,
    parse_hops,
    parse_result,
)
from ragmark.generation.base import (  # noqa: F401 (the pipelines' names for them)
    GenerationFailed,
    Turn,
    as_messages,
)
from ragmark.text import normalise
from ragmark.types import Chunk, Sentences


@dataclass(frozen=True, slots=True)
class Produced:
    """What any source (ragmark's own retriever and generator, an external system, an
    outputs set) made of one question, before it is scored: its ``given`` output whole,
    with the ranking made of it.

    ``chunks`` and ``scores``: the ranking (any order; it is sorted as trec_eval does).
    ``answer``: the answer, None when no answer was asked for, or why generation gave
    none. ``failure``: the question failed as a whole; every metric of it is missing
    with this reason (``details`` go with it).
    """

    chunks: Sequence[Chunk]
    scores: Sequence[float]
    given: Output
    answer: str | GenerationFailed | None
    failure: str | None = None
    details: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    by_text: int = 0
    """Contexts without an id that were given a corpus document's id by their text."""
    anonymous: int = 0
    """Contexts with neither an id nor a corpus document of the same text."""
    given_scores: tuple[float | None, ...] | None = None
    """The score the source gave each chunk (None where it gave none), when ``scores``
    only order them (made from the rank: a pipeline's or a log's contexts); None when
    ``scores`` are the source's own (ragmark's retrievers)."""

    @property
    def contexts(self) -> list[str]:
        """The texts the answer was made from."""
        return [c.text for c in self.given.contexts]

    @property
    def hops(self) -> tuple[tuple[str, int], ...]:
        """The retrieval steps the chunks came in (name, number of chunks), in order."""
        return self.given.hops

    @property
    def facts(self) -> Mapping[str, float]:
        """What the source measured or logged of the question (``latency_s`` and
        :data:`~ragmark.metrics.production.FACTS`)."""
        return self.given.facts

    @property
    def sentences(self) -> Sentences | None:
        """The answer's sentences with the contexts each cites, when the source gives
        them (TREC RAG's answer objects)."""
        return self.given.sentences




Resolve = Callable[[str], "str | None"]
"""A context's text -> the id of the corpus document with that text, or None."""


def corpus_ids(documents: Sequence[Any]) -> Resolve:
    """Look a context's text up in the corpus: the document whose text (or title and
    text) equals it after lower-casing and collapsing white space, when exactly one
    document has that text."""
    seen: dict[str, str | None] = {}
    for d in documents:
        keys = {normalise(d.text)}
        if getattr(d, "title", ""):
            keys.add(normalise(f"{d.title} {d.text}"))
        for k in keys:
            if k:
                seen[k] = d.id if seen.get(k, d.id) == d.id else None  # ambiguous: None
    return lambda text: seen.get(normalise(text))


@dataclass(frozen=True)
class StageReport:
    """What a stage adds to the report: timings, notes, LLM accounting by part (every
    source's stages and the scoring stages merge them)."""

    timings: dict[str, float] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    llm: dict[str, Any] = field(default_factory=dict)

    def merge(self, other: StageReport) -> StageReport:
        return StageReport({**self.timings, **other.timings}, self.notes + other.notes,
                     {**self.llm, **other.llm})


@dataclass(slots=True)
class Sourced:
    """Every question's :class:`Produced`, with what the source adds to the report:
    ``timings``, ``config`` (the config as recorded), ``dataset`` (extra dataset facts),
    ``notes``, ``llm`` (accounting of LLM calls the source made, e.g. ``reranker``)."""

    queries: list[Produced]
    timings: dict[str, float]
    config: dict[str, Any]
    dataset: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    llm: dict[str, Any] = field(default_factory=dict)


def to_ranking(contexts: Sequence[Context], resolve: Resolve | None = None
               ) -> tuple[list[Chunk], list[float]]:
    """Chunks and scores that rank the contexts in the order given.

    A context without an id takes the id of the corpus document of the same text
    (``resolve``, see :func:`corpus_ids`), else it is ``ctx<rank>``; ids that repeat get
    ``#<rank>`` so every chunk id is distinct. The score is ``n - rank + 1``: exact in
    float32, so trec_eval's order (score descending) is the given order.
    """
    n = len(contexts)
    ids = [c.id if c.id is not None or resolve is None else resolve(c.text)
           for c in contexts]
    seen = Counter(ids)
    chunks = []
    for rank, (c, given) in enumerate(zip(contexts, ids, strict=True), start=1):
        cid = given if given is not None and seen[given] == 1 else (
            f"ctx{rank}" if given is None else f"{given}#{rank}")
        chunks.append(Chunk(id=cid, doc_id=c.doc_id or given or cid, text=c.text))
    return chunks, [float(n - i) for i in range(n)]





def produced(out: Output, with_answer: bool = True, resolve: Resolve | None = None
             ) -> Produced:
    """The :class:`Produced` of one external output (the answer dropped unless asked);
    contexts without an id are looked up in the corpus by their text with ``resolve``."""
    if out.error is not None:
        return Produced((), (), Output(), None, out.error, out.details)
    bare = [c for c in out.contexts if c.id is None and c.doc_id is None]
    found_ids = ({c.text: resolve(c.text) for c in out.contexts if c.id is None}
                 if resolve is not None else {})  # each text looked up once
    chunks, scores = to_ranking(out.contexts, found_ids.get if resolve is not None else None)
    answer: str | GenerationFailed | None = None
    if with_answer:  # None: the source recorded no answer (a retrieval-only trace)
        answer = out.answer if out.answer is not None else GenerationFailed(
            out.no_answer or NO_ANSWER)
    found = sum(1 for c in bare if found_ids.get(c.text) is not None)
    facts = dict(out.facts)
    if out.latency_s is not None:
        facts["latency_s"] = out.latency_s
    return Produced(chunks, scores, replace(out, facts=facts), answer, by_text=found,
                    anonymous=len(bare) - found,
                    given_scores=tuple(c.score for c in out.contexts))


def recorded_scores(p: Produced, unit: str) -> dict[str, float | None] | None:
    """The score to record for each ranked item (a chunk id, or at document unit a
    document id): the source's own for a chunk, a document's at its first (best-ranked)
    chunk; None when the ranking scores are the source's own."""
    if p.given_scores is None:
        return None
    out: dict[str, float | None] = {}
    for c, given in zip(p.chunks, p.given_scores, strict=True):
        out.setdefault(c.id if unit == "chunk" else c.doc_id, given)
    return out


def folded_documents(p: Produced) -> int:
    """How many documents came more than once in a question's ranking (several of their
    chunks): at document unit each counts once, at its best rank."""
    seen = Counter(c.doc_id for c in p.chunks)
    return sum(1 for n in seen.values() if n > 1)


def folded_note(made: Sequence[Produced], unit: str) -> list[str]:
    """At document unit, the documents that came more than once in a question's
    external ranking (several of their chunks), said: each counts once, at its best
    rank."""
    folded = sum(folded_documents(p) for p in made if p.given_scores is not None)
    if unit != "document" or not folded:
        return []
    return [f"{folded} document{'s' if folded != 1 else ''} came more than once in a "
            "question's contexts (several of their chunks): at document unit each counts "
            "once, at its best rank"]
