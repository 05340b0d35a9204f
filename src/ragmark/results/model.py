"""The report model: what one run computed, independent of how it is written. Pure.
``Aggregate`` lives in :mod:`ragmark.types` (an aggregate metric computes one) and is
re-exported here."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragmark.metrics.names import catalogue, read_name
from ragmark.types import Aggregate, Sample, Score

"""The report's ``llm`` block holds the judges' accounting at its top level and each of
these components' in a block of its own."""


@dataclass(frozen=True, slots=True)
class RetrievedRecord:
    """One retrieved item as reported: rank, chunk id, document, score (None: the source
    gave none; an external system's rank is its order, never an invented score), match."""

    rank: int
    id: str
    doc_id: str
    score: float | None
    grade: int = 0
    targets: tuple[str, ...] = ()
    rule: str | None = None


@dataclass(frozen=True, slots=True)
class HopRecord:
    """One retrieval step of a question (a trace's retriever span), judged on its own:
    its ``name`` and ``size`` (items), the share of the question's relevant targets it
    retrieved (``recall``), whether it retrieved any (``hit``), the reciprocal rank of its
    first relevant item (``mrr``; each None without a relevant target), and the relevant
    targets it was the first step to retrieve (``found``)."""

    name: str
    size: int
    recall: float | None
    hit: float | None
    mrr: float | None
    found: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "size": self.size, "recall": self.recall,
                "hit": self.hit, "mrr": self.mrr, "found": list(self.found)}


@dataclass(frozen=True, slots=True)
class HopSummary:
    """The ``hop``-th retrieval step over the questions that have one: how many
    (``questions``), its names, each measure's mean over the questions with a relevant
    target (``n`` of them), and how many relevant targets this step was the first to
    retrieve (``found``) of those any step retrieved (``found_any``)."""

    hop: int
    questions: int
    names: dict[str, int]
    recall: float | None
    hit: float | None
    mrr: float | None
    n: int
    found: int
    found_any: int

    @classmethod
    def of(cls, queries: Sequence[QueryRecord]) -> tuple[HopSummary, ...]:
        """Per step position, over the questions that have it; () when no question has
        more than one step."""
        if not any(len(q.hops) > 1 for q in queries):
            return ()
        found_any = sum(len(h.found) for q in queries for h in q.hops)
        out = []
        for i in range(max(len(q.hops) for q in queries)):
            hops = [q.hops[i] for q in queries if len(q.hops) > i]
            judged = [h for h in hops if h.recall is not None]
            out.append(cls(i + 1, len(hops), dict(Counter(h.name for h in hops)),
                           _mean([h.recall for h in judged if h.recall is not None]),
                           _mean([h.hit for h in judged if h.hit is not None]),
                           _mean([h.mrr for h in judged if h.mrr is not None]), len(judged),
                           sum(len(h.found) for h in hops), found_any))
        return tuple(out)

    def to_json(self) -> dict[str, Any]:
        return {"hop": self.hop, "questions": self.questions, "names": self.names,
                "recall": self.recall, "hit": self.hit, "mrr": self.mrr, "n": self.n,
                "found": self.found, "found_any": self.found_any}


QUERY_FIELDS = frozenset({"id", "question", "ground_truth", "retrieved", "answer", "contexts",
                          "metrics", "hops", "conversation", "trajectory", "recorded"})
"""The fields of a question's details, all ragmark's own: what its source gave beyond
what ragmark reads is under ``recorded`` (:attr:`QueryRecord.recorded`), never beside
them, so a source's field and a built-in one never meet."""

@dataclass(frozen=True, slots=True)
class QueryRecord:
    """Everything computed for one question."""

    id: str
    question: str
    retrieved: list[RetrievedRecord]
    answer: str | None
    metrics: dict[str, Score]
    contexts: list[str] = field(default_factory=list)
    sample: Sample | None = None
    """The evaluation item answered: its ground truth, expected answer and keywords."""
    ground_truth: dict[str, Any] | None = None
    """Without ``sample`` (a report read from a file): the ground truth as written."""
    hops: tuple[HopRecord, ...] = ()
    """Its retrieval steps judged one by one, when its contexts came in steps."""
    conversation: dict[str, Any] | None = None
    """Without ``sample`` (a report read from a file): its place in a conversation."""
    trajectory: list[dict[str, Any]] | None = None
    """What the agent did, step by step (:meth:`ragmark.trajectory.Trajectory.to_json`),
    when its source told it."""
    recorded: Mapping[str, Any] = field(default_factory=dict)
    """The fields its source (the data set's item, the log's line, the trace's root)
    gave that ragmark does not read, by name and as given: written under ``recorded``
    with the question's details and read back unchanged."""

    @property
    def turn(self) -> dict[str, Any] | None:
        """Its place in a conversation, when it is a turn of one: ``{"id", "turn",
        "history": [{question, answer}, ...]}`` (the earlier turns)."""
        if self.sample is None:
            return self.conversation
        extra = self.sample.extra
        if "conversation_id" not in extra:
            return None
        return {"id": str(extra["conversation_id"]), "turn": extra.get("turn"),
                "history": list(extra.get("history") or [])}


_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def grouped_reasons(reasons: dict[str, int]) -> dict[str, tuple[int, int]]:
    """Reasons that differ only in their numbers (an HTTP 400 that quotes each prompt's
    token count) as one: the first such reason -> (questions, variants), most frequent
    first.

    >>> grouped_reasons({"needs 2100 tokens": 1, "needs 2300 tokens": 2, "no answer": 1})
    {'needs 2100 tokens': (3, 2), 'no answer': (1, 1)}
    """
    groups: dict[str, list[Any]] = {}
    for reason, n in reasons.items():
        g = groups.setdefault(_NUMBER.sub("#", reason), [reason, 0, 0])
        g[1] += n
        g[2] += 1
    ordered = sorted(groups.values(), key=lambda g: -g[1])
    return {g[0]: (g[1], g[2]) for g in ordered}


def reason_text(reason: str, variants: int) -> str:
    """A grouped reason as shown: the first one, and how many differ from it only in
    their numbers."""
    if variants == 1:
        return reason
    more = variants - 1
    return (f"{reason} [and {more} more reason{'s' if more > 1 else ''} that "
            f"differ{'' if more > 1 else 's'} only in {'their' if more > 1 else 'its'} "
            "numbers]")


@dataclass(frozen=True, slots=True)
class EmptyRankings:
    """The questions that retrieved nothing (their source did not fail: the ranking is
    empty), why, and each retrieval metric's mean over the questions that retrieved
    something (``over_retrieved``), beside the run's mean over all (``over_all``, as
    ``trec_eval -c``: an empty ranking scores 0)."""

    ids: tuple[str, ...]
    cause: str
    of: int
    """Questions in the run."""
    over_all: dict[str, Aggregate]
    over_retrieved: dict[str, Aggregate]
    like_pytrec_eval: dict[str, Aggregate] | None = None
    """Each metric's mean as pytrec_eval (and BEIR) report it: over the questions that
    retrieved something and that the qrels judge, one judged without a relevant document
    as 0 (None: the ground truth is not qrels)."""

    def note(self) -> str:
        n = len(self.ids)
        said = (f"{n} of {self.of} question{'s' if self.of != 1 else ''} retrieved nothing "
                f"({self.cause}): they score 0, as trec_eval -c; ")
        both = " (both means: empty_rankings.means in the JSON)"
        first = next(iter(self.like_pytrec_eval or {}), None)
        if first is not None and self.like_pytrec_eval is not None:
            agg = self.like_pytrec_eval[first]
            value = "no value" if agg.value is None else f"{first} {agg.value:.4f}"
            return (said + "pytrec_eval and BEIR average only over the questions in the run "
                    "that the qrels judge (one without a relevant document as 0): over "
                    f"{agg.n}, {value}" + both)
        covered = next(iter(self.over_retrieved.values()), None)
        where = (f"tools that average only over the questions that retrieved something "
                 f"report over {covered.n}" if covered is not None else
                 "tools that average only over the questions in the run report without them")
        return said + where + both

    def to_json(self) -> dict[str, Any]:
        like = self.like_pytrec_eval or {}
        return {
            "count": len(self.ids), "of": self.of, "cause": self.cause,
            "questions": list(self.ids),
            "means": {m: {"over_all": a.value, "n_all": a.n,
                          "over_retrieved": self.over_retrieved[m].value,
                          "n_retrieved": self.over_retrieved[m].n,
                          **({"like_pytrec_eval": like[m].value,
                              "n_like_pytrec_eval": like[m].n} if m in like else {})}
                      for m, a in self.over_all.items()},
        }


@dataclass(frozen=True, slots=True)
class RunReport:
    """One configuration over one dataset: per-query records and aggregates. Built once
    (the runner's reduce); what comes later makes a new one (``dataclasses.replace``)."""

    config: dict[str, Any]
    dataset: dict[str, Any]
    metrics: dict[str, Aggregate]
    queries: list[QueryRecord]
    timings: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    llm: dict[str, Any] = field(default_factory=dict)
    """LLM accounting of the judge calls (calls, cache hits, retries, failures, tokens,
    estimated cost); empty when nothing was judged."""
    failures: dict[str, int] = field(default_factory=dict)
    """Questions that failed as a whole (the pipeline gave no answer): reason -> count."""
    short_metrics: dict[str, int] = field(default_factory=dict)
    """Metric -> the ranking depth (top_k) it was computed on, for the metrics whose
    cutoff exceeds it (run with ``allow_short_rankings``)."""
    short_rankings: dict[int, int] = field(default_factory=dict)
    """Cutoff k -> number of questions whose ranking had fewer than k items (external
    pipelines and logged outputs, which return what they return); only k with some."""
    corrected: dict[str, Any] = field(default_factory=dict)
    """Judge metric -> its corrected estimate from human labels (``--human-labels``,
    :mod:`ragmark.analysis.human_labels`)."""
    executor: dict[str, Any] = field(default_factory=dict)
    """Where the CPU-bound work ran: ``name`` (local, ray), and for Ray the address and
    the nodes and worker processes that took part."""
    empty: EmptyRankings | None = None
    """The questions that retrieved nothing, with the retrieval metrics' means both ways
    (None when the run computed no retrieval metric)."""
    at_depth: dict[str, str] = field(default_factory=dict)
    """A retrieval metric asked for without a cutoff -> the name it was computed under,
    the depth of ragmark's own ranking (``map`` -> ``map@10``)."""
    envelope: dict[str, Any] | None = None
    """A report read from a results file: its envelope (None: made when written)."""
    versions: dict[str, Any] | None = None
    """A report read from a results file: the versions it was made with."""
    hops: tuple[HopSummary, ...] = ()
    """Retrieval by step (hop), when some question's contexts came in several steps."""
    conversations: dict[str, Any] | None = None
    """When the questions are the turns of conversations: each metric per turn position,
    per conversation (mean, last turn, first failing turn) and over them
    (:func:`conversation_summary`)."""
    risk_coverage: dict[str, Any] | None = None
    """The risk-coverage curve (``points`` [coverage, risk], ``aurc``, ``n`` of ``of``)
    when the answers came with a confidence
    (:func:`ragmark.metrics.abstention.risk_coverage`)."""
    gated: dict[str, Any] | None = None
    """The regression gates' verdicts as recorded with the results (``gates``: per config
    its baseline and each gated metric's row; ``trend``: the recorded runs of each gated
    metric; see :func:`ragmark.plan.gating.gates_json`); None without a regression gate."""

    def trajectories(self) -> dict[str, list[dict[str, Any]]]:
        """question id -> an agent's steps as the results hold them, for the questions
        that have a trajectory."""
        return {q.id: q.trajectory for q in self.queries if q.trajectory is not None}

    def key(self, name: str) -> str:
        """The name under which metric ``name`` was computed (``map`` -> ``map@10`` when
        it was asked for without a cutoff on a ranking of 10)."""
        return self.at_depth.get(name, name)

    def value(self, name: str) -> float | None:
        agg = self.metrics.get(self.key(name))
        return agg.value if agg else None


FAILING = 0.5
"""A turn fails a metric on a [0, 1] scale when its value is on the worse side of this
(under it where higher is better, over it where lower is: a refusal, a hallucination
rate); a measure on its own scale (seconds, tokens) has no failing turn."""


def failing_rule(metric: str) -> tuple[str, float] | None:
    """("<", 0.5) or (">", 0.5): when a turn fails ``metric``, by the way the catalogue
    says is better; None for a measure on its own scale."""
    spec = catalogue().get(read_name(metric).name)
    if spec is not None and not spec.bounded:
        return None
    return (">" if spec is not None and spec.better == "lower" else "<"), FAILING


def failing_cell(overall: dict[str, Any]) -> str:
    """A metric's count of failing conversations with its rule (``2 (< 0.5)``), or "-"
    for a measure without one."""
    rule = overall.get("failing_when")
    return "-" if rule is None else f"{overall['failing_conversations']} ({rule})"


def _mean(vals: Sequence[float]) -> float | None:
    return math.fsum(vals) / len(vals) if vals else None


def conversation_summary(queries: Sequence[QueryRecord]) -> dict[str, Any] | None:
    """Per turn position, each metric's mean over the conversations that have that turn;
    per conversation, each metric's mean over its turns, its last turn's value and its
    first failing turn (value under :data:`FAILING`); and over the conversations the
    means of those. None when the questions are not turns of conversations."""
    convs: dict[str, list[QueryRecord]] = {}
    for q in queries:
        extra = q.sample.extra if q.sample is not None else {}
        if "conversation_id" not in extra:
            return None
        convs.setdefault(str(extra["conversation_id"]), []).append(q)
    if not convs:
        return None
    metrics = list(dict.fromkeys(m for q in queries for m in q.metrics))

    def value(q: QueryRecord, m: str) -> float | None:
        s = q.metrics.get(m)
        return None if s is None or s.value is None or math.isnan(s.value) else s.value

    by_turn = []
    for n in range(max(len(t) for t in convs.values())):
        here = [t[n] for t in convs.values() if len(t) > n]
        by_turn.append({"turn": n + 1, "questions": len(here), "metrics": {
            m: {"mean": _mean([v for q in here if (v := value(q, m)) is not None]),
                "n": sum(1 for q in here if value(q, m) is not None)} for m in metrics}})
    rows: list[dict[str, Any]] = []
    rules = {m: failing_rule(m) for m in metrics}

    def fails(m: str, v: float | None) -> bool:
        rule = rules[m]
        return v is not None and rule is not None and (
            v < rule[1] if rule[0] == "<" else v > rule[1])

    for cid, turns in convs.items():
        per: dict[str, Any] = {}
        for m in metrics:
            vals = [value(q, m) for q in turns]
            known = [v for v in vals if v is not None]
            failing = next((i + 1 for i, v in enumerate(vals) if fails(m, v)), None)
            per[m] = {"mean": _mean(known), "last": vals[-1], "first_failing_turn": failing}
        rows.append({"conversation_id": cid, "turns": len(turns), "metrics": per})
    overall: dict[str, Any] = {}
    for m in metrics:
        means = [r["metrics"][m]["mean"] for r in rows if r["metrics"][m]["mean"] is not None]
        lasts = [r["metrics"][m]["last"] for r in rows if r["metrics"][m]["last"] is not None]
        firsts = [r["metrics"][m]["first_failing_turn"] for r in rows
                  if r["metrics"][m]["first_failing_turn"] is not None]
        rule = rules[m]
        overall[m] = {"mean_of_conversations": _mean(means), "n": len(means),
                      "last_turn": _mean(lasts), "n_last": len(lasts),
                      "failing_when": None if rule is None else f"{rule[0]} {rule[1]:g}",
                      "failing_conversations": None if rule is None else len(firsts),
                      "mean_first_failing_turn": _mean([float(f) for f in firsts])}
    return {"conversations": len(rows), "overall": overall,
            "by_turn": by_turn, "by_conversation": rows}
