"""``ragmark.evaluate``: the library call IR people already know."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from ragmark.errors import ConfigError, RagmarkWarning, UnknownComponentError
from ragmark.metrics.graded import Graded
from ragmark.metrics.names import MetricName, parse_metrics
from ragmark.metrics.trec import Qrels, Run, grade_run


def compute_all(j: Graded, metrics: Iterable[str | MetricName]) -> dict[str, np.ndarray]:
    """Per-query arrays (NaN = query without a relevant target) for retrieval metrics."""
    out: dict[str, np.ndarray] = {}
    for m in parse_metrics(metrics):
        if m.kind != "retrieval":
            raise UnknownComponentError(
                f"{m} is an answer metric; evaluate() takes retrieval metrics only"
            )
        out[str(m)] = m.spec.compute(j, m.k, **m.settings())  # type: ignore[misc]
    return out


MEANS = ("relevant", "trec_eval")


def evaluate(
    qrels: Qrels,
    run: Run,
    metrics: Iterable[str | MetricName] | str,
    per_query: bool = False,
    mean: str = "relevant",
) -> dict[str, float] | dict[str, dict[str, float]]:
    """Evaluate a run against qrels, as trec_eval would.

    ``qrels``: ``{qid: {docid: grade}}``; ``run``: ``{qid: {docid: score}}``; ``metrics``:
    names such as ``["ndcg@10", "map", "mrr", "recall@100", "precision@10"]``.
    Returns ``{metric: mean}``, or with ``per_query=True`` ``{qid: {metric: value}}``.
    Queries of the qrels missing from the run score 0 (``trec_eval -c``). ``mean``:
    ``"relevant"`` (default) takes the queries with at least one relevant document and
    leaves the others out, with a :class:`~ragmark.errors.RagmarkWarning` that counts
    them; ``"trec_eval"`` takes every query of the qrels, one without a relevant
    document scoring 0, as trec_eval does. A NaN score ranks last (see
    :func:`~ragmark.metrics.trec.grade_run`). The inputs are not modified.

    >>> evaluate({"q": {"a": 1}}, {"q": {"a": 0.2, "b": 0.9}}, ["mrr", "precision@1"])
    {'mrr': 0.5, 'precision@1': 0.0}
    """
    if mean not in MEANS:
        raise ConfigError(f"mean must be one of {', '.join(MEANS)}, got {mean!r}")
    j = grade_run(qrels, run)
    values = compute_all(j, [metrics] if isinstance(metrics, str) else metrics)
    keep = j.n_rel > 0
    if mean == "trec_eval":
        values = {m: np.where(np.isnan(v), 0.0, v) for m, v in values.items()}
        keep = np.ones(len(keep), dtype=bool)
    elif not keep.all():
        import warnings

        left = int((~keep).sum())
        warnings.warn(f"{left} of {len(keep)} queries have no relevant document in the qrels "
                      f"and are left out of the {'values' if per_query else 'means'} "
                      "(trec_eval counts them as 0: pass "
                      "mean='trec_eval')", RagmarkWarning, stacklevel=2)
    if per_query:
        idx = np.flatnonzero(keep)
        return {j.qids[i]: {m: float(v[i]) for m, v in values.items()} for i in idx}
    return {m: float(v[keep].mean()) if keep.any() else float("nan") for m, v in values.items()}
