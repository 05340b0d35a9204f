"""``ragmark.evaluate``: the library call IR people already know."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from ragmark.errors import UnknownComponentError
from ragmark.metrics import retrieval
from ragmark.metrics.judged import Judged
from ragmark.metrics.names import MetricName, parse_metrics
from ragmark.metrics.trec import Qrels, Run, judge_run


def compute_all(j: Judged, metrics: Iterable[str | MetricName]) -> dict[str, np.ndarray]:
    """Per-query arrays (NaN = query without a relevant target) for retrieval metrics."""
    out: dict[str, np.ndarray] = {}
    for m in parse_metrics(metrics):
        if m.kind != "retrieval":
            raise UnknownComponentError(
                f"{m} is an answer metric; evaluate() takes retrieval metrics only"
            )
        out[str(m)] = retrieval.compute(j, m)
    return out


def evaluate(
    qrels: Qrels,
    run: Run,
    metrics: Iterable[str | MetricName] | str,
    per_query: bool = False,
) -> dict[str, float] | dict[str, dict[str, float]]:
    """Evaluate a run against qrels, as trec_eval would.

    ``qrels``: ``{qid: {docid: grade}}``; ``run``: ``{qid: {docid: score}}``; ``metrics``:
    names such as ``["ndcg@10", "map", "mrr", "recall@100", "precision@10"]``.
    Returns ``{metric: mean}`` over the queries with at least one relevant document, or
    with ``per_query=True`` ``{qid: {metric: value}}`` for those queries. Queries of the
    qrels missing from the run score 0 (``trec_eval -c``). The inputs are not modified.

    >>> evaluate({"q": {"a": 1}}, {"q": {"a": 0.2, "b": 0.9}}, ["mrr", "precision@1"])
    {'mrr': 0.5, 'precision@1': 0.0}
    """
    j = judge_run(qrels, run)
    values = compute_all(j, [metrics] if isinstance(metrics, str) else metrics)
    keep = j.n_rel > 0
    if per_query:
        idx = np.flatnonzero(keep)
        return {j.qids[i]: {m: float(v[i]) for m, v in values.items()} for i in idx}
    return {m: float(v[keep].mean()) if keep.any() else float("nan") for m, v in values.items()}
