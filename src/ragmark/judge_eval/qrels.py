"""The context judges measured against the qrels, without a person
(``ragmark judge-eval RESULTS --against-qrels``).

Where a set has qrels, whether each context a question was given is relevant is known:
it is the relevance grade of the document it came from. So the context judges' truth is
known too, by the judges' own definitions:

- ``context_relevance``: the share of the contexts that are relevant;
- ``context_precision``: the rank-weighted precision of the relevant contexts
  (:func:`ragmark.judges.reference.rank_weighted_precision`: the mean of precision@k at
  each relevant rank, 0 when none is; RAGAS's context precision with the qrels as the
  verdicts), for questions with an expected answer (the judge needs one).

The report gives, per judge, over the questions it valued: the means of the judge and
of the truth, the mean absolute error with its bootstrap interval, and Spearman's rank
correlation with its interval (:func:`ragmark.stats.feedback.association`); and over
the passages, the judge's verdict (relevant or useful) against the qrels: accuracy with
its interval and ROC AUC with its interval, over the judge's probability of each verdict
where the endpoint gave log-probabilities (issue 63), else over the hard verdicts (then
it is the balanced accuracy).

The questions and contexts come from a run's results file with details (``ragmark run
--include-details``): each question's contexts are its first retrieved items, in order,
with their grades (ragmark's own pipeline; logged outputs whose contexts carry document
ids, joined to a dataset with qrels).
"""

from __future__ import annotations

import asyncio
import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ragmark.aio import run_sync
from ragmark.case import Case
from ragmark.errors import ConfigError
from ragmark.judges.prompt import JudgeCounts
from ragmark.judges.reference import rank_weighted_precision
from ragmark.llm import open_client
from ragmark.llm.accounting import llm_summary
from ragmark.results import read_results
from ragmark.results.codec import run_from_json
from ragmark.running.judging import judge_metric
from ragmark.stats import mean_ci
from ragmark.stats.feedback import association
from ragmark.types import Sample, Score

METRICS = ("context_relevance", "context_precision")
"""The judges the qrels can check, each with its passage verdicts' detail: the passages
it found irrelevant (context_relevance) or useful (context_precision)."""


@dataclass(frozen=True, slots=True)
class QrelsItem:
    """One question: its contexts in order and whether the qrels call each relevant."""

    id: str
    question: str
    contexts: tuple[str, ...]
    relevant: tuple[bool, ...]
    expected_answer: str | None = None


def truth(metric: str, relevant: Sequence[bool]) -> float:
    """The metric's value when the qrels give the verdicts.

    >>> truth("context_relevance", [True, False, False, True])
    0.5
    >>> round(truth("context_precision", [False, True, False, True]), 4)
    0.5
    """
    if metric == "context_relevance":
        return sum(relevant) / len(relevant)
    return rank_weighted_precision(relevant)


def verdicts(metric: str, score: Score, n: int) -> list[bool] | None:
    """The judge's verdict on each of the ``n`` passages, from its score's details."""
    details = score.details or {}
    key = "irrelevant" if metric == "context_relevance" else "useful"
    marked = details.get(key)
    if score.value is None or not isinstance(marked, list):
        return None
    named = {int(i) for i in marked}
    if metric == "context_relevance":
        return [i not in named for i in range(1, n + 1)]
    return [i in named for i in range(1, n + 1)]


def chances(metric: str, score: Score, n: int) -> list[float] | None:
    """The judge's probability that each of the ``n`` passages is relevant (useful),
    where its endpoint gave log-probabilities; else its hard verdicts as 1 and 0."""
    got = (score.details or {}).get("chances")
    if score.value is not None and isinstance(got, list) and len(got) == n:
        return [float(c) for c in got]
    hard = verdicts(metric, score, n)
    return None if hard is None else [float(v) for v in hard]


def items_of(path: str | Path) -> tuple[list[QrelsItem], dict[str, int]]:
    """The questions of a run's results file with their contexts' relevance, and the
    questions left out by reason; a ConfigError when none can be measured."""
    if Path(path).suffix.lower() in (".jsonl", ".csv", ".tsv"):
        raise ConfigError(f"{path}: this is a file of items or labels, not a run's results "
                          "file: --against-qrels reads what `ragmark run --include-details` "
                          "writes (JSON); to measure a judge against these labels, drop "
                          "--against-qrels")
    kind, data = read_results(path)
    if kind != "run":
        raise ConfigError(f"{path}: --against-qrels reads a run's results file (this is a "
                          f"{kind} file)")
    if not data.get("queries"):
        raise ConfigError(f"{path}: the run was written without its questions' details; "
                          "run it again with --include-details")
    report = run_from_json(data, str(path))
    out: list[QrelsItem] = []
    left: dict[str, int] = {}
    for q in report.queries:
        truth_of = q.ground_truth or {}
        why = (None if q.contexts else "no context")
        targets = truth_of.get("targets") or {}
        if why is None and not any(g > 0 for g in targets.values()):
            why = "no relevant document in the qrels"
        if why is None and len(q.retrieved) < len(q.contexts):
            why = "its contexts are not its retrieved items"
        if why is not None:
            left[why] = left.get(why, 0) + 1
            continue
        expected = truth_of.get("expected_answer")
        out.append(QrelsItem(q.id, q.question, tuple(q.contexts),
                             tuple(r.grade > 0 for r in q.retrieved[: len(q.contexts)]),
                             expected if isinstance(expected, str) else None))
    if not out:
        why = "; ".join(f"{n} {w}" for w, n in left.items()) or "no question"
        raise ConfigError(f"{path}: no question has both contexts and qrels ({why}); "
                          "--against-qrels needs a run on a set with qrels, with details")
    return out, left


async def judge_items(client: Any, items: Sequence[QrelsItem], metrics: Sequence[str],
                      counts: Any, advance: Callable[[int], None]
                      ) -> dict[str, list[Score]]:
    """Each metric's score of each item, judged by ``client``."""
    async def one(metric: str, it: QrelsItem) -> Score:
        try:
            case = Case(Sample(it.id, it.question, expected_answer=it.expected_answer), "",
                        it.contexts)
            return await judge_metric(client, metric, case, counts)
        finally:
            advance(1)

    got = await asyncio.gather(*(one(m, it) for m in metrics for it in items))
    return {m: list(got[i * len(items):(i + 1) * len(items)]) for i, m in enumerate(metrics)}


def _interval(values: Sequence[float], resamples: int, seed: int) -> list[float] | None:
    iv = mean_ci(np.asarray(values, dtype=np.float64), 0.95, resamples, seed)
    return None if iv is None else [iv.low, iv.high]


def _passages(metric: str, items: Sequence[QrelsItem], scores: Sequence[Score],
              resamples: int, seed: int) -> dict[str, Any]:
    said: list[float] = []
    weighed: list[float] = []
    true: list[float] = []
    for it, s in zip(items, scores, strict=True):
        got = verdicts(metric, s, len(it.contexts))
        if got is not None:
            said += [float(v) for v in got]
            weighed += chances(metric, s, len(it.contexts)) or []
            true += [float(v) for v in it.relevant]
    if not said:
        return {"n": 0}
    hits = [float(a == b) for a, b in zip(said, true, strict=True)]
    # the AUC over the judge's probabilities where it gave them (ties: hard verdicts)
    auc = association(metric, weighed, true, seed, resamples)
    return {"n": len(said), "relevant_by_qrels": int(sum(true)),
            "relevant_by_judge": int(sum(said)), "accuracy": sum(hits) / len(hits),
            "accuracy_interval": _interval(hits, resamples, seed),
            "roc_auc": auc.value, "roc_auc_interval": None if auc.low is None else [
                auc.low, auc.high], **({"note": auc.note} if auc.note else {})}


def against_qrels(items: Sequence[QrelsItem], scores: dict[str, list[Score]],
                  resamples: int = 2000, seed: int = 0) -> dict[str, Any]:
    """Per metric: the judge against the qrels' truth (see the module)."""
    out: dict[str, Any] = {}
    for metric, got in scores.items():
        pairs = [(s.value, truth(metric, it.relevant)) for it, s in zip(items, got, strict=True)
                 if s.value is not None and not math.isnan(s.value)]
        missing = Counter(s.reason or "no value" for s in got if s.value is None)
        row: dict[str, Any] = {"questions": len(pairs), "missing": dict(missing)}
        if pairs:
            judged = [float(p[0]) for p in pairs]
            true = [p[1] for p in pairs]
            errors = [abs(a - b) for a, b in pairs]
            rho = association(metric, judged, true, seed, resamples)
            row |= {"judge_mean": sum(judged) / len(judged),
                    "truth_mean": sum(true) / len(true),
                    "mean_absolute_error": sum(errors) / len(errors),
                    "mae_interval": _interval(errors, resamples, seed),
                    "spearman": rho.value,
                    "spearman_interval": None if rho.low is None else [rho.low, rho.high],
                    **({"spearman_note": rho.note} if rho.note else {})}
        row["passages"] = _passages(metric, items, got, resamples, seed)
        row["per_item"] = [{"id": it.id, "judge": s.value, "truth": truth(metric, it.relevant),
                            "relevant": list(it.relevant),
                            **({} if s.value is not None else {"reason": s.reason or
                                                              "no value"})}
                           for it, s in zip(items, got, strict=True)]
        out[metric] = row
    return out


def measure(settings: Any, items: Sequence[QrelsItem], metrics: Sequence[str],
            advance: Callable[[int], None], resamples: int = 2000, seed: int = 0
            ) -> dict[str, Any]:
    """Judge every item with each metric at the endpoint of ``settings``; the report of
    :func:`against_qrels` with the calls' accounting (``llm``)."""
    async def go() -> tuple[dict[str, list[Score]], dict[str, Any]]:
        client = open_client(settings)
        counts = JudgeCounts()
        ok, why = await client.probe()
        if not ok:
            raise ConfigError(f"the judge's endpoint {settings.display_url} did not "
                              f"answer: {why}")
        try:
            scores = await judge_items(client, items, metrics, counts, advance)
        finally:
            await client.aclose()
        return scores, llm_summary(settings, client, counts)

    scores, llm = run_sync(go())
    return {"metrics": against_qrels(items, scores, resamples, seed), "llm": llm,
            "model": settings.model, "questions": len(items)}
