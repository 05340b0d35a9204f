"""``ragmark label``: the top K of every config, labelled by an LLM judge, and the
metrics at every k.

Each config's top K comes from the runner (retrieval only, per chunk, ``top_k = top_n =
K``). Every distinct (question, passage text) is labelled once, concurrently, through
one :class:`LLMClient` (cache, retries, concurrency limit): configs that retrieve the
same passage share its label. A label the judge could not give is missing with its
reason, counted, and excluded from that query's metrics (see
:mod:`ragmark.passage_labels.metrics`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragmark.aio import run_sync
from ragmark.config import RunConfig
from ragmark.errors import ConfigError
from ragmark.executors import Executor
from ragmark.judges import JudgeCounts, relevance_label
from ragmark.judges.checks import one_value
from ragmark.judges.prompt import is_reask
from ragmark.judges.relevance import relevance_prompt
from ragmark.llm import LLMClient, LLMSettings, open_client
from ragmark.llm.accounting import llm_summary
from ragmark.llm.dry import NotCached
from ragmark.llm.factory import dry_client
from ragmark.llm.fields import SET_ENDPOINT
from ragmark.llm.protocol import estimate_tokens
from ragmark.matching import unmatchable
from ragmark.passage_labels.metrics import METRICS, Agreement, per_k_metrics
from ragmark.progress import NullProgress, Progress
from ragmark.results.model import Aggregate, QueryRecord, RunReport
from ragmark.running.runner import run
from ragmark.running.scoring import UNJUDGED
from ragmark.running.task import Task
from ragmark.types import Dataset, Sample, Score

Pair = tuple[str, str]
"""(question, passage text): what one label is about."""


@dataclass(frozen=True)
class TopK:
    """Every config's top K for the same questions: ``reports`` by config name."""

    top_k: int
    samples: list[Sample]
    reports: dict[str, RunReport]

    def pairs(self) -> list[Pair]:
        """Every distinct (question, passage) to label, in first-seen order."""
        seen: dict[Pair, None] = {}
        for r in self.reports.values():
            for q in r.queries:
                for text in q.contexts[: self.top_k]:
                    seen.setdefault((q.question, text))
        return list(seen)


@dataclass(frozen=True)
class LabelledItem:
    """One passage of a query's top K with its label (1.0, 0.0 or missing) and its
    ground-truth grade (None when the query has no ground truth)."""

    rank: int
    id: str
    doc_id: str
    text: str
    label: Score
    grade: int | None


@dataclass(frozen=True)
class LabelledQuery:
    """One question of one config; ``failure`` says why its pipeline gave nothing to
    label (an external system's error), and then every metric is missing with it."""

    id: str
    question: str
    items: list[LabelledItem]
    metrics: dict[str, Score]
    failure: str | None = None


@dataclass(frozen=True)
class ConfigLabels:
    """One config: per-query labels and metrics, their means (``name@k`` ->
    :class:`Aggregate`), and the judge's agreement with the ground truth."""

    name: str
    config: dict[str, Any]
    chunks: int | None
    queries: list[LabelledQuery]
    metrics: dict[str, Aggregate]
    agreement: Agreement | None

    def count(self, label: float | None) -> int:
        """Passages labelled ``label`` (None: failed labels)."""
        return sum(1 for q in self.queries for it in q.items if it.label.value == label)


@dataclass(frozen=True)
class LabelRun:
    """The result of ``ragmark label``. ``agreement`` is over every distinct labelled
    (question, passage) of all configs; ``llm`` the accounting of the calls."""

    top_k: int
    dataset: dict[str, Any]
    configs: dict[str, ConfigLabels]
    agreement: Agreement | None
    llm: dict[str, Any]
    template: str | None
    executor: dict[str, Any] = field(default_factory=dict)
    """Where the retrieval ran (see :attr:`RunReport.executor`)."""
    notes: list[str] = field(default_factory=list)
    """A judge that gave one label to (nearly) every passage, said here."""
    envelope: dict[str, Any] | None = None
    """The envelope of the file it was read from (None: a label run made now)."""
    versions: dict[str, str] | None = None
    """The versions the file it was read from recorded."""


NO_ENDPOINT = ("ragmark label needs an LLM endpoint to label passages: give --llm-base-url "
               f"and --llm-model, or {SET_ENDPOINT}")


def check_template(template: str | None, source: str = "prompt template") -> None:
    """A ConfigError naming ``source`` when ``template`` lacks a placeholder."""
    try:
        relevance_prompt(template)
    except ConfigError as e:
        raise ConfigError(f"{source}: {e}; the template must contain {{question}} and "
                          "{passage} (or {query} and {document})") from None


def top_k_passages(
    dataset: Dataset, configs: Sequence[RunConfig], top_k: int, *,
    max_queries: int | None = None, progress: Progress | None = None,
    executor: Executor | None = None,
) -> TopK:
    """Run every config's retrieval with ``top_k = top_n = K`` per chunk: each report's
    ``contexts`` are the texts of the top K chunks best first, ``retrieved`` the same
    chunks with their ground-truth grades. ``executor``: where the retrieval runs."""
    names = [c.name for c in configs]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ConfigError(f"config names must be distinct; repeated: {', '.join(dup)}")
    reports = {}
    for c in configs:
        cfg = c.model_copy(update={"top_k": top_k, "top_n": top_k, "unit": "chunk"})
        task = Task([f"recall@{top_k}"], max_queries=max_queries, skip_generation=True,
                    executor=executor)
        reports[c.name] = run(dataset, cfg, task, progress=progress)
    samples = list(dataset.samples[:max_queries] if max_queries else dataset.samples)
    return TopK(top_k, samples, reports)


def estimate(pairs: Sequence[Pair], settings: LLMSettings | None,
             template: str | None = None) -> dict[str, Any]:
    """A dry run: the label calls not in the cache yet (``calls``; ``at_most`` adds a
    re-ask for each, made only after an unusable answer), the cached ones, their prompt
    tokens (characters / 4) and cost (prompt tokens, with prices); nothing is called.
    The real label code runs against a client that answers only from the cache."""
    if settings is None:
        raise ConfigError(NO_ENDPOINT)
    dry = dry_client(settings)

    async def walk() -> None:
        for q, p in pairs:
            try:
                await relevance_label(dry, q, p, template=template)
            except NotCached as e:
                if not e.shared and not is_reask(e.messages):
                    dry.follow(0, 1, estimate_tokens(e.messages) + 60)

    run_sync(walk())
    return dry.summary()


async def _label_all(client: LLMClient, pairs: Sequence[Pair], template: str | None,
                     counts: JudgeCounts, advance: Callable[[int], None]) -> list[Score]:
    try:
        ok, reason = await client.probe()
        if not ok:
            raise ConfigError(f"the LLM endpoint did not answer: {reason}")

        async def one(q: str, p: str) -> Score:
            s = await relevance_label(client, q, p, template=template, counts=counts)
            advance(1)
            return s

        return list(await asyncio.gather(*(one(q, p) for q, p in pairs)))
    finally:
        await client.aclose()


def label_pairs(pairs: Sequence[Pair], settings: LLMSettings | None,
                template: str | None = None, progress: Progress | None = None
                ) -> tuple[dict[Pair, Score], dict[str, Any]]:
    """Each pair's label, and the LLM accounting. Probes the endpoint first: without
    one, or when it does not answer, a ConfigError (labels are the point of the
    command)."""
    if settings is None:
        raise ConfigError(NO_ENDPOINT)
    client = open_client(settings)
    counts = JudgeCounts()
    prog = progress or NullProgress()
    with prog.task(f"labelling {len(pairs):,} passages ({settings.model})",
                   len(pairs)) as advance:
        scores = run_sync(_label_all(client, pairs, template, counts, advance))
    return dict(zip(pairs, scores, strict=True)), llm_summary(settings, client, counts)


def _config_labels(name: str, report: RunReport, samples: Sequence[Sample], top_k: int,
                   labels: dict[Pair, Score]) -> tuple[ConfigLabels, dict[Pair, bool]]:
    queries = []
    truth_of: dict[Pair, bool] = {}  # (question id, passage) -> relevant in the ground truth
    judged: list[tuple[bool, bool]] = []
    for s, q in zip(samples, report.queries, strict=True):
        failure = _failure(s, q, top_k)
        if failure is not None:
            queries.append(LabelledQuery(q.id, q.question, [], {
                f"{m}@{k}": Score.missing(failure) for m in METRICS
                for k in range(1, top_k + 1)}, failure))
            continue
        texts = q.contexts[:top_k]
        ranked = q.retrieved[: len(texts)]
        # ragmark's own pipeline, and an external one (its contexts in the order given),
        # rank the contexts' own chunks best first: their ids and grades go with them
        aligned = len(ranked) == len(texts)
        has_truth = s.truth.kind != "none" and aligned and not _unjudged(q, top_k)
        items = [LabelledItem(i + 1, ranked[i].id if aligned else f"ctx{i + 1}",
                              ranked[i].doc_id if aligned else "", text,
                              labels[(q.question, text)],
                              ranked[i].grade if has_truth else None)
                 for i, text in enumerate(texts)]
        truth = [it.grade is not None and it.grade > 0 for it in items]
        queries.append(LabelledQuery(q.id, q.question, items, per_k_metrics(
            [it.label for it in items], top_k, truth if has_truth else None)))
        for it, t in zip(items, truth, strict=True):
            if has_truth and it.label.ok:
                judged.append((it.label.value == 1.0, t))
                truth_of[(q.id, it.text)] = t
    agg = {f"{m}@{k}": Aggregate.of([q.metrics[f"{m}@{k}"] for q in queries])
           for m in METRICS for k in range(1, top_k + 1)}
    return ConfigLabels(name, report.config, report.dataset.get("chunks"), queries, agg,
                        Agreement.of(judged) if judged else None), truth_of


def _failure(s: Sample, q: QueryRecord, top_k: int) -> str | None:
    """Why the question's pipeline failed as a whole, else None: its recall@K is missing
    although the question has relevant targets (the runner records a source failure
    that way)."""
    recall = q.metrics.get(f"recall@{top_k}")
    if recall is None or recall.ok or s.truth.n_targets == 0 or unmatchable(s.truth):
        return None
    if _unjudged(q, top_k):  # passages without ids: labelled, not compared with the truth
        return None
    return recall.reason or "the pipeline gave no passages"


def _unjudged(q: QueryRecord, top_k: int) -> bool:
    """The question's passages carry no ids the ground truth could judge them by."""
    recall = q.metrics.get(f"recall@{top_k}")
    return recall is not None and recall.reason == UNJUDGED


def label(top: TopK, settings: LLMSettings | None, template: str | None = None,
          progress: Progress | None = None) -> LabelRun:
    """Label every distinct (question, passage) of ``top`` and compute, per config, the
    metrics at every k averaged over the queries."""
    labels, llm = label_pairs(top.pairs(), settings, template, progress)
    return labelled(top, labels, llm, template)


def labelled(top: TopK, labels: dict[Pair, Score], llm: dict[str, Any],
             template: str | None = None) -> LabelRun:
    """The :class:`LabelRun` of ``top`` from labels already asked for."""
    configs: dict[str, ConfigLabels] = {}
    truth_of: dict[Pair, bool] = {}
    for name, report in top.reports.items():
        configs[name], seen = _config_labels(name, report, top.samples, top.top_k, labels)
        truth_of.update(seen)
    question = {s.id: s.question for s in top.samples}
    overall = [(labels[(question[qid], text)].value == 1.0, t)
               for (qid, text), t in truth_of.items()]
    first = next(iter(top.reports.values()))
    dataset = {k: v for k, v in first.dataset.items() if k != "chunks"}  # per config
    last = list(top.reports.values())[-1]

    given = [float(s.value) for s in labels.values() if s.value is not None]
    same = one_value("the relevance judge", given, "distinct passages")
    return LabelRun(top.top_k, dataset, configs,
                    Agreement.of(overall) if overall else None, llm, template, last.executor,
                    [same] if same else [])
