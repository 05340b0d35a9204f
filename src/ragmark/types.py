"""Frozen value types shared by every part of ragmark.

Data flows one way: Corpus/Dataset (data) -> Chunk (chunking) -> Retrieved (retrieval)
-> answer (generation) -> grades and metric values (relevance, metrics) -> report.
"""

from __future__ import annotations

import copyreg
import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragmark.trajectory import Expected

_EMPTY: Mapping[str, Any] = MappingProxyType({})


def read_only(d: dict[Any, Any]) -> Mapping[Any, Any]:
    """``MappingProxyType(d)``: the name pickle rebuilds a read-only mapping with."""
    return MappingProxyType(d)


def _reduce_mappingproxy(m: MappingProxyType[Any, Any]) -> tuple[Any, tuple[dict[Any, Any]]]:
    return read_only, (dict(m),)


# The read-only mappings of these types pickle as copies (an executor's workers get
# samples and chunks; the standard library cannot pickle a mappingproxy by itself).
copyreg.pickle(MappingProxyType, _reduce_mappingproxy)


@dataclass(frozen=True, slots=True)
class Document:
    """One corpus document.

    ``sections`` is set for Open RAG Benchmark documents: the texts of the sections in
    order (``section_id`` is the position); ``text`` is then the sections joined by a
    blank line.
    """

    id: str
    text: str
    title: str = ""
    sections: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)


@dataclass(frozen=True, slots=True)
class Chunk:
    """A piece of a document that a retriever indexes and returns.

    ``section`` is the section index the chunk lies in, or None when the chunk is not
    tied to one section (a whole document, or a document without sections).
    ``start`` is the character offset of the chunk in its section (or document) text.
    """

    id: str
    doc_id: str
    text: str
    section: int | None = None
    start: int = 0


@dataclass(frozen=True, slots=True)
class Corpus:
    """The documents of a corpus, in load order, with a lookup by id.

    ``left_out``: ids of documents the loader found but left out of the index (empty
    documents and files): a ground truth may still name them, and they count as relevant
    targets that are never retrieved, as trec_eval scores them.
    """

    documents: tuple[Document, ...]
    source: str = ""
    left_out: frozenset[str] = frozenset()

    def __len__(self) -> int:
        return len(self.documents)

    def by_id(self) -> dict[str, Document]:
        return {d.id: d for d in self.documents}


@dataclass(frozen=True, slots=True)
class GroundTruth:
    """What counts as relevant for one question (SPEC section 3).

    Exactly one of the three kinds is normally set:
    - ``doc_grades``: document id (or file name) -> graded relevance (BEIR, keyword set);
    - ``sections``: (document id, section index) pairs (Open RAG Benchmark);
    - ``passages``: ground-truth passage texts, matched by normalised containment
      (context set).
    """

    doc_grades: Mapping[str, int] = field(default_factory=lambda: _EMPTY)
    sections: tuple[tuple[str, int], ...] = ()
    passages: tuple[str, ...] = ()

    @property
    def kind(self) -> str:
        if self.passages:
            return "passages"
        if self.sections:
            return "sections"
        if self.doc_grades:
            return "ids"
        return "none"

    @property
    def n_targets(self) -> int:
        """Number of distinct relevant targets (grade > 0)."""
        if self.passages:
            return len(self.passages)
        if self.sections:
            return len(set(self.sections))
        return sum(1 for g in self.doc_grades.values() if g > 0)


IMPORTANCE = ("vital", "okay")
"""A nugget's importance (TREC RAG): vital, a fact a good answer must hold; okay, worth
having but not essential."""


Sentences = tuple[tuple[str, tuple[int, ...]], ...]
"""An answer's sentences, each with the numbers (from 1) of the contexts it cites."""


@dataclass(frozen=True, slots=True)
class Nugget:
    """One fact a good answer to a question holds (TREC RAG's nuggets), with its
    ``importance``, one of :data:`IMPORTANCE`."""

    text: str
    importance: str = "okay"


@dataclass(frozen=True, slots=True)
class Sample:
    """One evaluation item: a question, its ground truth, and optional references.
    ``answerable`` False marks a question the corpus has no answer to (the system should
    decline): its answer metrics are missing, "unanswerable by design", and the
    abstention metrics count it."""

    id: str
    question: str
    truth: GroundTruth = field(default_factory=GroundTruth)
    expected_answer: str | None = None
    expected_keywords: tuple[str, ...] | None = None
    extra: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    answerable: bool = True
    nuggets: tuple[Nugget, ...] | None = None
    """The facts a good answer holds, when the set gives them (``nuggets``); else the
    nugget judge creates them from the expected answer and the relevant passages."""
    relevant_texts: tuple[str, ...] = ()
    """The texts of the documents the qrels judge relevant (BEIR and TREC RAG folders),
    best grade first: the relevant passages the nugget judge creates nuggets from."""
    expected_calls: Expected | None = None
    """The tool calls an agent should make (``expected_tool_calls``), when the set says."""


@dataclass(frozen=True, slots=True)
class Dataset:
    """An evaluation set with the corpus it is evaluated against.

    ``format`` is one of ``beir``, ``open-rag-bench``, ``keyword``, ``context``.
    ``default_chunker`` is the chunker name that suits the corpus (``whole`` for BEIR,
    ``fixed`` for a folder of text files).
    """

    name: str
    path: str
    format: str
    samples: tuple[Sample, ...]
    corpus: Corpus
    default_chunker: str = "whole"
    warnings: tuple[str, ...] = ()
    """What the loaders let through with a warning, one line per kind with a count."""


@dataclass(frozen=True, slots=True)
class Retrieved:
    """One retrieved chunk with its score and 1-based rank."""

    chunk: Chunk
    score: float
    rank: int


@dataclass(frozen=True, slots=True)
class Score:
    """A metric value for one query, or the reason it could not be computed.

    ``value`` is None exactly when the metric is missing; ``reason`` then says why
    (never 0 in place of a missing value). ``details`` holds per-metric extras, such as
    the flag ``ungrounded`` or the unsupported claims of a judge.
    """

    value: float | None
    reason: str | None = None
    details: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)

    @classmethod
    def missing(cls, reason: str, **details: Any) -> Score:
        return cls(None, reason, MappingProxyType(dict(details)) if details else _EMPTY)

    @property
    def ok(self) -> bool:
        return self.value is not None

    @property
    def hard(self) -> float | None:
        """The value the judge's hard verdicts give: ``hard_value`` in the details where
        the value is weighted by the judge's probabilities (issue 63), else the value.
        A yes/no verdict from a threshold reads this; rankings and AUCs read ``value``."""
        got = self.details.get("hard_value") if self.value is not None else None
        return float(got) if isinstance(got, int | float) else self.value


# ---------------------------------------------------------------- a metric of the catalogue

NEEDS = ("ground_truth", "qrels", "keywords", "gold_context", "expected_answer", "answer",
         "contexts", "llm", "embeddings", "logged", "unanswerable", "expected_calls",
         "trajectory")
"""What a metric can need from a question or a run: a ground truth (any kind), judged
documents (qrels), expected keywords, a gold context, an expected answer, an answer, the
retrieved contexts, an LLM endpoint, an embedding model, facts a log or trace recorded
(tokens, cost, feedback), questions marked unanswerable in the set, the tool calls a
question expects, an agent's trajectory (assumed where calls are expected)."""


@dataclass(frozen=True, slots=True)
class Aggregate:
    """Mean of one metric over the queries where it was computed.

    ``n`` queries covered, ``missing`` not covered, ``reasons`` why (reason -> count).
    ``value`` is None when no query has a value. ``detail``: what an aggregate metric
    computed beside its value (the risk-coverage curve of ``aurc``), not compared.
    """

    value: float | None
    n: int
    missing: int
    reasons: dict[str, int]
    detail: dict[str, Any] | None = field(default=None, compare=False)

    @classmethod
    def of(cls, scores: Sequence[Score]) -> Aggregate:
        vals = [s.value for s in scores if s.value is not None and not math.isnan(s.value)]
        reasons = Counter(s.reason or "unknown" for s in scores if s.value is None)
        value = math.fsum(vals) / len(vals) if vals else None
        return cls(value, len(vals), len(scores) - len(vals), dict(reasons))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"n": self.n, "missing": self.missing}
        if self.reasons:
            out["reasons"] = self.reasons
        return out


@dataclass(frozen=True)
class RunView:
    """What an aggregate metric reads of a whole run, question by question: the sample,
    the answer (None: none), what the source recorded (``facts``: a confidence, a
    refusal verdict) and the metric values; and the config's refusal patterns."""

    samples: Sequence[Sample]
    answers: Sequence[str | None]
    facts: Sequence[Mapping[str, Any]]
    scores: Sequence[Mapping[str, Score]]
    refusal_patterns: Sequence[str] = ()


class Kind(StrEnum):
    """What kind of metric a catalogue entry is (a str: ``spec.kind == "judge"`` holds)."""

    RETRIEVAL = "retrieval"
    ANSWER = "answer"
    JUDGE = "judge"
    AGGREGATE = "aggregate"
    LABEL = "label"


class Cutoff(StrEnum):
    """Whether a metric takes a cutoff ``@k``: required, optional or none."""

    REQUIRED = "required"
    OPTIONAL = "optional"
    NONE = "none"


@dataclass(frozen=True, slots=True)
class Param:
    """A parameter a metric reads, as ir_measures' ``ParamInfo`` declares one: its
    ``name`` (the config key that sets it), its ``dtype``, its ``default`` and what it
    means (``desc``)."""

    name: str
    dtype: type
    default: Any
    desc: str


@dataclass(frozen=True, slots=True)
class MetricSpec:
    """One metric of the catalogue: canonical ``name``, ``kind`` (retrieval, answer,
    judge), ``cutoff`` rule (required, optional, none), a one-line ``summary`` (its
    formula), the console ``label`` (the name when empty), what it ``needs`` (see
    :data:`NEEDS`), the cutoffs it is computed at by ``default`` (``None`` for no cutoff;
    empty: only when asked for), and ``compute``, what computes it: for a retrieval
    metric ``compute(graded, k) -> per-query values`` (:mod:`ragmark.metrics.retrieval`),
    for an answer metric ``compute(case) -> Score``, for a judge
    ``compute(client, case, counts) ->`` an awaitable Score, or the Scores of every
    metric it gives by name (the case: :class:`ragmark.case.Case`; the protocols:
    :class:`~ragmark.case.AnswerCompute`, :class:`~ragmark.case.JudgeCompute`). An
    ``aggregate`` has no per-question value: it is computed over the run from ``of``,
    the metric whose values it summarises (or from what the questions recorded, ``of``
    None), when that is there. Retrieval metrics are declared in
    :mod:`ragmark.metrics.retrieval`, answer metrics in :mod:`ragmark.metrics.answer`,
    judge metrics in their modules of :mod:`ragmark.judges`; :mod:`ragmark.metrics.names`
    gathers them."""

    name: str
    kind: Kind
    cutoff: Cutoff
    summary: str
    label: str = ""
    needs: tuple[str, ...] = ()
    default: tuple[int | None, ...] = ()
    compute: Callable[..., Any] | None = field(default=None, compare=False)
    of: str | None = None
    better: str = "higher"
    """Which way is better: "higher" (recall, faithfulness) or "lower" (refusal,
    latency, hallucination): drift, conversations' failing turns and reports read it."""
    bounded: bool = True
    """Values in [0, 1] (a share, a rate, a 0/1 flag); False for measures on their own
    scale (seconds, tokens, dollars, a feedback score), which have no "failing" value."""
    absent: str = ""
    """An aggregate's reason when it is asked for and what it summarises is not there."""
    report: str | None = None
    """The field of the run's report an aggregate's ``detail`` fills (``aurc``: the
    risk-coverage curve)."""
    ask: str = ""
    """What people answer yes or no to about a question when they check this metric's
    judge (``annotate``, ``review``, ``judge-eval``'s alignment); empty: the generic
    question (:func:`ragmark.metrics.names.ask_of`)."""
    verdict_at: float = 0.5
    """The value at and above which the metric's verdict is *yes* (faithfulness: 1, every
    claim supported): the strata of an annotation sample and judge-eval's verdicts."""
    scale: str = ""
    """What people are asked when they label this metric on a five-point scale instead
    of yes or no (answer_correctness); empty: yes or no."""
    group: str = ""
    """The name that stands for this metric and the others of its group in a list of
    metrics (``claims``, ``nuggets``, ``support``); empty: none."""
    params: tuple[Param, ...] = ()
    """The run's parameters it reads (besides its cutoff), typed: each a field of
    :class:`ragmark.case.Params`, the case's values of them (``combined_score``:
    ``alpha``)."""
    options: tuple[Param, ...] = ()
    """The options its name takes (``rbp(p=0.8)@10``: ``p``), typed, with defaults: part
    of the metric's identity (two values of ``p`` are two metrics), given to
    ``compute`` by keyword (:mod:`ragmark.metrics.metric_name`)."""

    def __post_init__(self) -> None:
        """The kind and the cutoff rule as their enums (a plugin may give the words): a
        word that is neither is an error naming the metric."""
        try:
            object.__setattr__(self, "kind", Kind(self.kind))
            object.__setattr__(self, "cutoff", Cutoff(self.cutoff))
        except ValueError as e:
            raise ValueError(f"metric {self.name!r}: {e} (kinds: "
                             f"{', '.join(Kind)}; cutoffs: {', '.join(Cutoff)})") from None

    def title(self, k: int | None = None) -> str:
        """The console label, with the cutoff: ``nDCG@10``."""
        base = self.label or self.name
        return base if k is None else f"{base}@{k}"


def lower_better(specs: tuple[MetricSpec, ...], names: frozenset[str] | None = None,
                 bounded: bool = True) -> tuple[MetricSpec, ...]:
    """``specs`` with ``names`` (all when None) marked lower-is-better (and, unless
    ``bounded``, measures on their own scale)."""
    return tuple(replace(s, better="lower", bounded=bounded)
                 if names is None or s.name in names else s for s in specs)


def spec(name: str, kind: Kind | str, cutoff: Cutoff | str, summary: str, label: str = "",
          needs: tuple[str, ...] = (), default: tuple[int | None, ...] = (),
          compute: Callable[..., Any] | None = None) -> MetricSpec:
    return MetricSpec(name, Kind(kind), Cutoff(cutoff), summary, label, needs, default,
                      compute)
