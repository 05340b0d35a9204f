"""What an external RAG system answers, and how it becomes a ranking. Pure.

An external system (a Python callable, an HTTP service, or the logged outputs of one)
gives, per question, an answer and the contexts it was made from. The contexts are the
ranking, in the order given: the first is rank 1.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ragmark.data._read import kind_of
from ragmark.generation.base import GenerationFailed
from ragmark.types import Chunk

_EMPTY: Mapping[str, Any] = MappingProxyType({})
CONTEXT_ITEM = "a non-empty string or an object with a non-empty string 'text'"


class ShapeError(ValueError):
    """A value that does not have the shape of an answer or of its contexts.

    ``field`` is where in the value (``contexts[2].text``), for error messages.
    """

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message if field is None else f"{field}: {message}")
        self.message = message
        self.field = field


@dataclass(frozen=True, slots=True)
class Context:
    """One context as the system returned it. ``doc_id`` defaults to ``id``; ``score``
    is kept as given but does not change the order (the position is the rank)."""

    text: str
    id: str | None = None
    doc_id: str | None = None
    score: float | None = None


@dataclass(frozen=True, slots=True)
class Output:
    """The system's answer to one question, or why there is none.

    ``error`` set: the question failed (timeout, HTTP error, exception, bad shape) and
    ``details`` may hold the response that caused it; ``shape_error`` tells a response
    of the wrong shape from a call that failed. ``latency_s`` is the time the answer took
    (None when not measured).
    """

    answer: str | None = None
    contexts: tuple[Context, ...] = ()
    latency_s: float | None = None
    error: str | None = None
    shape_error: bool = False
    details: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)

    @classmethod
    def failed(cls, error: str, *, shape: bool = False, latency_s: float | None = None,
               **details: Any) -> Output:
        return cls(None, (), latency_s, error, shape, MappingProxyType(details))


class Logged(dict[str, Output]):
    """Outputs by sample id, with where they came from (``source``: ``outputs`` for a
    logged outputs file, ``run_file`` for a TREC run file), as the results record it."""

    def __init__(self, items: Mapping[str, Output], source: str = "outputs") -> None:
        super().__init__(items)
        self.source = source


@dataclass(frozen=True, slots=True)
class Produced:
    """What any source (ragmark's own retriever and generator, an external system, an
    outputs set) made of one question, before it is scored.

    ``chunks`` and ``scores``: the ranking (any order; it is sorted as trec_eval does).
    ``contexts``: the texts the answer was made from. ``answer``: None when no answer
    was asked for. ``failure``: the question failed as a whole; every metric of it is
    missing with this reason (``details`` go with it).
    """

    chunks: Sequence[Chunk]
    scores: Sequence[float]
    contexts: Sequence[str]
    answer: str | GenerationFailed | None
    failure: str | None = None
    details: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    by_text: int = 0
    """Contexts without an id that were given a corpus document's id by their text."""
    anonymous: int = 0
    """Contexts with neither an id nor a corpus document of the same text."""


Resolve = Callable[[str], "str | None"]
"""A context's text -> the id of the corpus document with that text, or None."""


def corpus_ids(documents: Sequence[Any]) -> Resolve:
    """Look a context's text up in the corpus: the document whose text (or title and
    text) equals it after lower-casing and collapsing white space, when exactly one
    document has that text."""
    from ragmark.text import normalise

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
class Stats:
    """What a stage adds to the report: timings, notes, LLM accounting by part (every
    source's stages and the scoring stages merge them)."""

    timings: dict[str, float] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    llm: dict[str, Any] = field(default_factory=dict)

    def merge(self, other: Stats) -> Stats:
        return Stats({**self.timings, **other.timings}, self.notes + other.notes,
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


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ShapeError(f"expected {CONTEXT_ITEM}, got {kind_of(value)}", where)
    return value


def _ident(value: Any, where: str) -> str | None:
    if value is None:
        return None
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise ShapeError(f"expected a non-empty string or an integer, got {kind_of(value)}", where)


def parse_context(value: Any, where: str) -> Context:
    """A context from a string, or from an object with ``text`` (and optionally ``id``,
    ``doc_id``, ``score``)."""
    if isinstance(value, str):
        return Context(_text(value, where))
    if not isinstance(value, Mapping):
        raise ShapeError(f"expected {CONTEXT_ITEM}, got {kind_of(value)}", where)
    if "text" not in value:
        keys = ", ".join(repr(k) for k in value) or "none"
        raise ShapeError(f"an object context needs a 'text'; its keys: {keys}", where)
    score = value.get("score")
    if score is not None and (isinstance(score, bool) or not isinstance(score, int | float)):
        raise ShapeError(f"expected a number, got {kind_of(score)}", f"{where}.score")
    return Context(
        _text(value["text"], f"{where}.text"),
        _ident(value.get("id"), f"{where}.id"),
        _ident(value.get("doc_id"), f"{where}.doc_id"),
        None if score is None else float(score),
    )


def parse_contexts(value: Any, where: str = "contexts") -> tuple[Context, ...]:
    """A list (possibly empty) of contexts; each a string or an object with ``text``."""
    if not isinstance(value, list | tuple):
        raise ShapeError(f"expected a list of contexts, got {kind_of(value)}", where)
    return tuple(parse_context(v, f"{where}[{i}]") for i, v in enumerate(value))


def parse_answer(value: Any, where: str = "answer") -> str:
    """The answer: a string; null counts as an empty answer (its metrics are missing)."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ShapeError(f"expected a string, got {kind_of(value)}", where)
    return value


def parse_result(value: Any) -> tuple[str, tuple[Context, ...]]:
    """(answer, contexts) from what a Python pipeline returned: a mapping
    ``{"answer": ..., "contexts": [...]}`` or a pair ``(answer, contexts)``."""
    if isinstance(value, Mapping):
        missing = [k for k in ("answer", "contexts") if k not in value]
        if missing:
            keys = ", ".join(repr(k) for k in value) or "none"
            raise ShapeError(f"the returned mapping has no {' and no '.join(map(repr, missing))}"
                             f" (its keys: {keys}); expected {{'answer': str, 'contexts': list}}")
        return parse_answer(value["answer"]), parse_contexts(value["contexts"])
    if isinstance(value, tuple | list) and len(value) == 2:
        return parse_answer(value[0], "[0] (answer)"), parse_contexts(value[1], "[1] (contexts)")
    raise ShapeError("expected a mapping {'answer': str, 'contexts': [...]} or a pair "
                     f"(answer, contexts), got {kind_of(value)}")


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
        return Produced((), (), (), None, out.error, out.details)
    bare = [c for c in out.contexts if c.id is None and c.doc_id is None]
    found_ids = ({c.text: resolve(c.text) for c in out.contexts if c.id is None}
                 if resolve is not None else {})  # each text looked up once
    chunks, scores = to_ranking(out.contexts, found_ids.get if resolve is not None else None)
    answer = (out.answer or "") if with_answer else None
    found = sum(1 for c in bare if found_ids.get(c.text) is not None)
    return Produced(chunks, scores, [c.text for c in out.contexts], answer,
                    by_text=found, anonymous=len(bare) - found)
