"""``ragmark testset check``: what an evaluation set is worth before anyone pays for it —
near-duplicate questions, answers given away by their questions, answers their
passages do not hold, the corpus the questions cover, the spread of types, lengths and
answerability (:mod:`ragmark.testset.audit` has the rules) — and the gates on those
shares. Everything a check needs is read and every gate parsed before any embedding is
computed: bad input stops first (exit 2)."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ragmark.analysis.gates import metric_name
from ragmark.analysis.items import item_statistics, item_summary
from ragmark.data.detect import load_dataset
from ragmark.data.fingerprint import dataset_hash
from ragmark.data.leniency import Leniency
from ragmark.errors import ConfigError, MissingExtraError
from ragmark.history import history_path, list_runs, values
from ragmark.progress import Progress
from ragmark.results import TESTSET_CHECK, envelope
from ragmark.stats.paired import wilson_interval
from ragmark.testset.audit import SUPPORTED_SHARE as SUPPORTED
from ragmark.testset.audit import (
    answer_support,
    coverage,
    duplicate_pairs,
    kmeans,
    leaks_answer,
    repeating,
    spread,
)
from ragmark.testset.checks import source_reference
from ragmark.types import Dataset, Document, Sample

SHARES = ("duplicates", "leaked", "points_at_source", "unsupported", "uncovered_documents",
          "uncovered_clusters")
"""What ``--fail-on`` can name: each a share of the set (or of the corpus)."""
_GATE = re.compile(r"^\s*([a-z_]+)\s*(>=|<=|>|<)\s*([0-9]*\.?[0-9]+)\s*$")


@dataclass(frozen=True)
class Gate:
    """``--fail-on NAME>V``: fails when the share compares so with V."""

    name: str
    op: str
    value: float

    def failed(self, share: float) -> bool:
        return {">": share > self.value, ">=": share >= self.value,
                "<": share < self.value, "<=": share <= self.value}[self.op]

    @property
    def text(self) -> str:
        return f"{self.name}{self.op}{self.value:g}"


def parse_gate(text: str) -> Gate:
    """One ``--fail-on``; a ConfigError naming what was expected."""
    m = _GATE.match(text)
    if m is None or m.group(1) not in SHARES:
        raise ConfigError(f"--fail-on {text!r}: expected NAME>V (or >=, <, <=) with NAME "
                          f"one of {', '.join(SHARES)} and V a share, e.g. duplicates>0.02")
    return Gate(m.group(1), m.group(2), float(m.group(3)))


@dataclass(frozen=True)
class CheckPlan:
    """What the check will read and do."""

    dataset: Dataset
    with_corpus: bool
    """A corpus was given (or is the set's own): coverage is measured."""
    embeddings: bool
    clusters: int | None
    gates: tuple[Gate, ...]
    top: int
    seed: int
    warnings: tuple[str, ...]
    history: tuple[str, dict[str, dict[str, float | None]]] | None = None
    """(metric, config -> question id -> value): the newest run of each config on this
    set in the run history, for each question's difficulty and discrimination."""


@dataclass(frozen=True)
class CheckRequest:
    """``ragmark testset check``'s flags."""

    dataset: str
    corpus: str | None = None
    split: str = "test"
    words_only: bool = False
    clusters: int | None = None
    fail_on: tuple[str, ...] = ()
    top: int = 5
    seed: int = 0
    strict: bool = False
    encoding: str | None = None
    history: str | None = None
    metric: str | None = None


def plan_check(req: CheckRequest) -> CheckPlan:
    """The set read (with its corpus), the gates parsed: bad input is an error here."""
    gates = tuple(parse_gate(g) for g in req.fail_on)
    lenient = Leniency(strict=req.strict, encoding=req.encoding)
    ds = load_dataset(req.dataset, req.corpus, req.split, lenient)
    own_corpus = req.corpus is not None or ds.format in ("beir", "open-rag-bench", "keyword")
    if not ds.samples:
        raise ConfigError(f"{req.dataset}: the set has no question to check")
    if req.clusters is not None and req.clusters < 1:
        raise ConfigError(f"--clusters must be at least 1, got {req.clusters}")
    if not own_corpus and any(g.name.startswith("uncovered") for g in gates):
        raise ConfigError("--fail-on uncovered_...: coverage is of a corpus; give --corpus")
    past = None if req.metric is None else from_history(req, dataset_hash(ds))
    return CheckPlan(ds, own_corpus, not req.words_only, req.clusters, gates, req.top,
                     req.seed, ds.warnings, past)


def from_history(req: CheckRequest, on: str) -> tuple[str, dict[str, dict[str, Any]]]:
    """The newest value of ``req.metric`` for each config the history ran on this set
    (``on``: its hash; a metric named without its depth, ``mrr``, is the one a run
    computed at its ranking's depth, ``mrr@10``); a ConfigError when fewer than two
    configs have it, naming the metrics they do have."""
    metric = metric_name(str(req.metric))
    path = history_path(req.history)
    got: dict[str, dict[str, Any]] = {}
    seen: set[str] = set()
    for run in list_runs(path, dataset=on):
        if run.kind not in ("run", "compare") or run.dataset_hash != on:
            continue
        for config in run.configs:
            have = values(path, run.id, config)[1]
            seen |= set(have)
            name = metric if metric in have or "@" in metric else next(
                (k for k in have if k.startswith(metric + "@")), metric)
            if config not in got and name in have:
                got[config] = dict(have[name])
                metric = name
    if len(got) < 2:
        raise ConfigError(f"--metric {metric}: the run history {path} has {len(got)} config"
                          f"{'s' * (len(got) != 1)} with it on this set ({on[:12]}); a "
                          "question's discrimination needs at least 2 (run or compare "
                          "more configs on the same set first); the runs on it have: "
                          f"{', '.join(sorted(seen)) or 'none'}")
    return metric, got


def embedder() -> Any:
    """The packaged MiniLM through the embedding cache; a MissingExtraError without the
    dense extra."""
    from ragmark.embeddings.cache import CachedEmbedder
    from ragmark.embeddings.sentence_transformer import SentenceTransformerEmbedder

    return CachedEmbedder(SentenceTransformerEmbedder())


def execute_check(plan: CheckPlan, progress: Progress) -> dict[str, Any]:
    """Every check on the set; the report (JSON-ready), the gates' verdicts in it."""
    samples = plan.dataset.samples
    notes: list[str] = []
    embed = None
    if plan.embeddings:
        try:
            embed = embedder()
        except MissingExtraError as e:
            notes.append(f"near-duplicates by words alone: {e}")
    report: dict[str, Any] = {
        "envelope": envelope(TESTSET_CHECK, dataset_hash(plan.dataset), {
            "words_only": not plan.embeddings, "clusters": plan.clusters,
            "seed": plan.seed}),
        "set": plan.dataset.path, "questions": len(samples),
        **findings(samples, embed, progress), "spread": spread(samples), "notes": notes,
        "questions_text": {s.id: s.question for s in samples},
    }
    if plan.with_corpus:
        report["coverage"] = _coverage(plan, embed, progress)
    if plan.history is not None:
        metric, by_config = plan.history
        items, left_out = item_statistics(by_config, [s.id for s in samples])
        report["items"] = item_summary(items, left_out, list(by_config), metric)
    report["gates"] = _gates(plan.gates, report)
    return report


def findings(samples: Sequence[Sample], embed: Any, progress: Progress) -> dict[str, Any]:
    """The near-duplicates (by ``embed``'s vectors too, when given), the leaked answers,
    the questions that point at their source ("the passage") and the unsupported answers
    of ``samples``: counts, shares and the items."""
    vectors = None
    if embed is not None:
        with progress.task("embedding the questions", len(samples)) as advance:
            vectors = embed.encode([s.question for s in samples], advance)
    pairs = duplicate_pairs(samples, vectors)
    repeats = repeating(pairs)
    leaked = [s.id for s in samples if leaks_answer(s)]
    pointing = {s.id: w for s in samples if (w := source_reference(s.question)) is not None}
    support = {s.id: v for s in samples if (v := answer_support(s)) is not None}
    unsupported = [i for i, v in support.items() if v < SUPPORTED]
    n = len(samples)
    return {"duplicates": {**_share(len(repeats), n),
                           "rule": "embeddings and words" if vectors is not None else "words",
                           "pairs": [p.to_json() for p in pairs]},
            "leaked": {**_share(len(leaked), n), "ids": leaked},
            "points_at_source": {**_share(len(pointing), n), "items": [
                {"id": i, "words": w} for i, w in pointing.items()]},
            "unsupported": {**_share(len(unsupported), len(support)), "of": len(support),
                            "items": [{"id": i, "support": round(support[i], 4)}
                                      for i in unsupported]}}


def _share(count: int, of: int) -> dict[str, Any]:
    """A count, its share of ``of`` items and the share's Wilson 95% interval (what a
    generator that wrote the set would write again); None over no item."""
    iv = wilson_interval(count, of)
    return {"share": count / of if of else None, "count": count,
            "interval": None if iv is None else [round(iv.low, 4), round(iv.high, 4)]}


def corpus_clusters(documents: Sequence[Document], embed: Any, k: int | None, seed: int,
                    progress: Progress) -> list[int]:
    """Each document's cluster among ``k`` (default: the square root of half the
    documents) of their embeddings (title and text)."""
    k = k or max(2, round(math.sqrt(len(documents) / 2)))
    with progress.task(f"embedding {len(documents)} documents", len(documents)) as advance:
        vecs = embed.encode([f"{d.title}\n{d.text}".strip() for d in documents], advance)
    return [int(x) for x in kmeans(np.asarray(vecs, dtype=np.float64), k, seed)]


def _coverage(plan: CheckPlan, embed: Any, progress: Progress) -> dict[str, Any]:
    docs = plan.dataset.corpus.documents
    labels = None
    if embed is not None and docs:
        labels = corpus_clusters(docs, embed, plan.clusters, plan.seed, progress)
    return coverage(plan.dataset.samples, docs, labels, plan.top)


def shares(report: dict[str, Any]) -> dict[str, float | None]:
    """Each share ``--fail-on`` can name, as the report has it (None: not measured)."""
    cov = report.get("coverage") or {}
    return {"duplicates": report["duplicates"]["share"], "leaked": report["leaked"]["share"],
            "points_at_source": report["points_at_source"]["share"],
            "unsupported": report["unsupported"]["share"],
            "uncovered_documents": cov.get("uncovered_documents"),
            "uncovered_clusters": cov.get("uncovered_clusters")}


def _gates(gates: tuple[Gate, ...], report: dict[str, Any]) -> list[dict[str, Any]]:
    """Each gate held or failed, and why; a share that was not measured fails."""
    got = shares(report)
    out = []
    for g in gates:
        share = got[g.name]
        if share is None:
            out.append({"gate": g.text, "ok": False,
                        "why": f"{g.name} was not measured (no item it applies to)"})
            continue
        failed = g.failed(share)
        out.append({"gate": g.text, "ok": not failed,
                    "why": f"{g.name} = {share:.4f}"})
    return out


def write_check(report: dict[str, Any], path: Path, markdown: str) -> None:
    """The report as JSON (``.json``) or Markdown (any other suffix)."""
    import json

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n"
                    if path.suffix == ".json" else markdown, encoding="utf-8")
