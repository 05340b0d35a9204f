"""One question and what one system made of it: the :class:`Case` every metric, judge and
plugin reads, made once per question from whatever source answered it (ragmark's own
pipeline, an external one, a log, a trace).

A metric states what it reads of the case by its kind: a retrieval metric reads the
ranking as matched against the ground truth (not the case), an answer metric
``compute(case) -> Score``, a judge ``compute(client, case, counts) -> awaitable`` of a
Score, or of its metrics' Scores when one judge produces several (the claim, nugget and
support metrics): :class:`AnswerCompute` and :class:`JudgeCompute`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from types import MappingProxyType
from typing import Any, Protocol, get_origin, get_type_hints

from ragmark.trajectory import Trajectory
from ragmark.types import MetricSpec, Nugget, Param, Sample, Score, Sentences

_EMPTY: Mapping[str, float] = MappingProxyType({})

Turns = tuple[tuple[str, str | None], ...]
"""The earlier turns of a conversation, oldest first: (question, answer or None)."""


@dataclass(frozen=True, slots=True)
class Context:
    """One context as the system returned it. ``doc_id`` defaults to ``id``; ``score``
    is kept as given but does not change the order (the position is the rank)."""

    text: str
    id: str | None = None
    doc_id: str | None = None
    score: float | None = None


RECORDED = "no answer recorded"
"""How every reason a source gives for a missing answer begins (:attr:`Output.no_answer`)."""
NO_ANSWER = f"{RECORDED} (the trace has no LLM span, and its root is a retriever)"


@dataclass(frozen=True, slots=True)
class Output:
    """The system's answer to one question, or why there is none.

    ``error`` set: the question failed (timeout, HTTP error, exception, bad shape) and
    ``details`` may hold the response that caused it; ``shape_error`` tells a response
    of the wrong shape from a call that failed. ``latency_s`` is the time the answer took
    (None when not measured). ``hops``: when the contexts came in several retrieval
    steps (a trace's retriever spans), each step's name and number of contexts, in
    order (the contexts are the steps' in turn). ``facts``: what a log or trace recorded
    of the question beyond its answer (the keys of
    :data:`ragmark.metrics.production.FACTS`).
    """

    answer: str | None = None
    contexts: tuple[Context, ...] = ()
    latency_s: float | None = None
    error: str | None = None
    shape_error: bool = False
    details: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    hops: tuple[tuple[str, int], ...] = ()
    facts: Mapping[str, float] = field(default_factory=lambda: _EMPTY)
    sentences: Sentences | None = None
    """The answer's sentences with the contexts each cites (numbers from 1), when the
    log gives them as its units (TREC RAG's answer objects); else the judges read them
    from the answer's ``[n]`` markers."""
    trajectory: Trajectory | None = None
    """What the agent did to answer, step by step, when the source tells it (a log's
    ``messages`` or ``tool_calls``, a trace's tool and agent spans)."""
    no_answer: str | None = None
    """Why ``answer`` is None, when the source says (a trace whose agent failed): its
    answer metrics are missing with it."""

    @classmethod
    def failed(cls, error: str, *, shape: bool = False, latency_s: float | None = None,
               **details: Any) -> Output:
        return cls(answer=None, contexts=(), latency_s=latency_s, error=error,
                   shape_error=shape, details=MappingProxyType(details))

    def trajectory_json(self) -> list[dict[str, Any]] | None:
        """Its trajectory as the results hold it, when it has one."""
        return None if self.trajectory is None else self.trajectory.to_json()

    def recorded(self) -> dict[str, Any]:
        """What the results keep of this output beyond what ragmark reads, by name, each
        a JSON value: written under the question's ``recorded`` (with the fields its
        data set item gave) and read back as it was. A source whose outputs carry a
        field of their own says so here, in its subclass; none by default."""
        return {}


@dataclass(frozen=True, slots=True)
class Params:
    """The run's values of the metrics' parameters, typed (the config's keys of the same
    names); a metric's spec declares those it reads (:func:`param`), which ``ragmark
    metrics`` lists with their type, default and meaning."""

    alpha: float = field(default=0.5, metadata={
        "desc": "the weight of keyword coverage (1 - alpha: that of context overlap)"})
    grounded_threshold: float = field(default=0.10, metadata={
        "desc": "the share of an answer's content tokens found in the retrieved text at "
                "and above which it is grounded"})
    refusal_patterns: tuple[str, ...] = field(default=(), metadata={
        "desc": "the config's own refusal patterns (regular expressions), besides the "
                "default phrases"})


def param(name: str) -> Param:
    """The declaration of the parameter ``name`` (a field of :class:`Params`): its type,
    default and meaning, for a metric's spec."""
    f = next(f for f in fields(Params) if f.name == name)
    hint = get_type_hints(Params)[name]
    return Param(name, get_origin(hint) or hint, f.default, f.metadata["desc"])


def reading(spec: MetricSpec, *names: str) -> MetricSpec:
    """``spec`` declaring the parameters it reads (fields of :class:`Params`)."""
    return replace(spec, params=tuple(param(n) for n in names))


def params_of(config: Any) -> Params:
    """The parameters' values a config gives (its keys of the same names)."""
    return Params(**{f.name: getattr(config, f.name) for f in fields(Params)})


@dataclass(frozen=True, slots=True)
class Case:
    """One question (``sample``: its text, ground truth, expected answer, nuggets) and
    what one system made of it: its ``answer`` (empty when there is none, and then
    ``no_answer`` says why), the ``contexts`` it was made from, the answer's
    ``sentences`` with the contexts each cites when the source gave them as its units,
    the ``facts`` the source measured or logged (``latency_s``, tokens, cost, feedback,
    the refusal judge's ``refused``), all read from the source's whole ``output``; with
    what the run knows around it: the earlier ``history`` of its conversation, the
    data's ``language``, the ``gold`` contexts of its ground truth and the metrics'
    ``params``."""

    sample: Sample
    answer: str = ""
    contexts: tuple[str, ...] = ()
    no_answer: str | None = None
    """Why there is no answer to read (generation skipped or failed, none recorded);
    None when there is one, even an empty one."""
    history: Turns = ()
    language: str | None = None
    """The data's language (a config's ``language``): every judge is told it, and what a
    judge writes (claims, statements) is written in it."""
    gold: tuple[str, ...] = ()
    """The gold contexts of the ground truth: its passages, sections, or the texts of
    its relevant documents (the answer metrics' reference context)."""
    params: Params = field(default_factory=Params)
    output: Output = field(default_factory=Output)
    """What the source gave, whole (contexts with their ids and scores, hops, latency,
    sentences, facts, and whatever a source adds)."""

    @classmethod
    def of(cls, question: str, answer: str | None, contexts: Sequence[str] = (),
           expected_answer: str | None = None, *, nuggets: tuple[Nugget, ...] | None = None,
           relevant: tuple[str, ...] = (), sentences: Sentences | None = None,
           **more: Any) -> Case:
        """A case from texts alone (judge-eval's items, tests): the question with the
        ``expected_answer``, ``nuggets`` and ``relevant`` passages its sample would
        carry; ``answer`` None: there is none; ``sentences``: the answer's, as a source
        would give them."""
        sample = Sample("", question, expected_answer=expected_answer, nuggets=nuggets,
                        relevant_texts=relevant)
        if answer is None:
            more.setdefault("no_answer", "no answer")
        output = Output(answer, tuple(Context(c) for c in contexts), sentences=sentences)
        return cls(sample, answer or "", tuple(contexts), output=output, **more)

    @property
    def sentences(self) -> Sentences | None:
        """The answer's sentences with the contexts each cites (from 1), when its source
        gave them as its units (TREC RAG's answer objects); else the judges that read
        citations find them from the answer's ``[n]`` markers."""
        return self.output.sentences

    @property
    def facts(self) -> Mapping[str, float]:
        """What the source measured or logged of the question (``latency_s``, tokens,
        cost, feedback, the refusal judge's ``refused``)."""
        return self.output.facts

    @property
    def answer_or_none(self) -> str | None:
        """The answer, None when there is none (:attr:`no_answer` says why)."""
        return None if self.no_answer is not None else self.answer

    @property
    def question(self) -> str:
        return self.sample.question

    @property
    def expected_answer(self) -> str | None:
        return self.sample.expected_answer

    @property
    def nuggets(self) -> tuple[Nugget, ...] | None:
        """The facts a good answer holds, when the set gives them (TREC RAG's nuggets)."""
        return self.sample.nuggets

    @property
    def relevant(self) -> tuple[str, ...]:
        """The texts of the relevant passages, when the ground truth has them (its
        passages, else the qrels' relevant documents, best first): with the expected
        answer, what the nugget judge creates nuggets from."""
        return self.sample.truth.passages or self.sample.relevant_texts


def earlier_turns(samples: Sequence[Sample], answers: Sequence[str | None]) -> list[Turns]:
    """Each question's earlier turns (question, answer) when it is a turn of a
    conversation (its sample's ``conversation_id`` and ``history``), else (): the
    ``answers`` this run got for them (a pipeline's, a log's; None where there is none),
    else the answers the set logged."""
    got = {s.id: a for s, a in zip(samples, answers, strict=True)}
    out: list[Turns] = []
    for s in samples:
        cid, earlier = s.extra.get("conversation_id"), s.extra.get("history")
        if cid is None or not isinstance(earlier, list) or not earlier:
            out.append(())
            continue
        out.append(tuple(
            (str(t.get("question") or ""),
             got.get(f"{cid}#{n}") or (t.get("answer") if isinstance(
                 t.get("answer"), str) else None))
            for n, t in enumerate(earlier, start=1) if isinstance(t, dict)))
    return out


class ChatClient(Protocol):
    """What a judge asks through: an OpenAI-style chat (``LLMClient``, a dry run's
    client)."""

    async def chat(self, messages: Sequence[Mapping[str, Any]], **params: Any) -> Any: ...


@dataclass
class JudgeCounts:
    """Running counts of judge calls: ``asked`` items, ``reasked`` (second tries),
    ``failed`` (items that ended in a JudgeFailure), ``cut`` (calls whose texts were cut
    to fit the context ``window``)."""

    asked: int = 0
    reasked: int = 0
    failed: int = 0
    cut: int = 0
    """Calls whose texts were cut to fit the model's context window."""
    window: int | None = None
    """That window, when some were."""
    guidance_cut: int = 0
    """Calls whose alignment (examples, rules) was shortened to fit the window."""
    examples_shortened: int = 0
    examples_dropped: int = 0
    """Over those calls, the alignment's examples shortened and dropped."""

    def add(self, other: JudgeCounts) -> None:
        """Count ``other``'s calls too (a judge of several calls counts its own first)."""
        self.asked += other.asked
        self.reasked += other.reasked
        self.failed += other.failed
        self.cut += other.cut
        self.window = other.window or self.window
        self.guidance_cut += other.guidance_cut
        self.examples_shortened += other.examples_shortened
        self.examples_dropped += other.examples_dropped


class AnswerCompute(Protocol):
    """An answer metric: reads the case, returns its Score (missing with the reason when
    it cannot be computed)."""

    def __call__(self, case: Case, /) -> Score: ...


class JudgeCompute(Protocol):
    """A judge: asks ``client`` about the case, counting its calls in ``counts``; the
    awaitable gives its metric's Score, or the Scores of every metric it produces by
    name (one judge, several metrics: claims, nuggets, support)."""

    def __call__(self, client: ChatClient, case: Case, counts: JudgeCounts, /
                 ) -> Awaitable[Score | Mapping[str, Score]]: ...
