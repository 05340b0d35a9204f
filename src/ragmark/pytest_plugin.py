"""The pytest plugin (entry point ``pytest11``): a ``ragmark_run`` fixture.

Nothing happens unless a test asks for the fixture::

    def test_rag(ragmark_run):
        report = ragmark_run(dataset="eval/set.json", config="rag.toml")
        report.assert_at_least(ndcg_10=0.6)
        report.assert_no_regression("last", metrics=["ndcg@10"])

``ragmark_run`` takes the arguments of ``ragmark run`` (``dataset``, ``corpus``,
``config``, ``outputs``, ``metrics``, ``judge_metrics``, ``top_k``, ``top_n``,
``max_queries``, ``split``, ``llm``) or an in-memory ``pipeline`` callable, runs it,
records it in the run history (``history``: True, a path, or False) and returns an
:class:`~ragmark.testing.Evaluated` with assertion helpers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest


def _run(dataset: str | Path | None = None, *, corpus: str | Path | None = None,
         config: str | Path | None = None, outputs: str | Path | None = None,
         pipeline: Callable[[str], Any] | None = None, metrics: Sequence[str] | None = None,
         judge_metrics: Sequence[str] = (), top_k: int | None = None,
         top_n: int | None = None, max_queries: int | None = None, split: str = "test",
         llm: Mapping[str, Any] | None = None, history: bool | str | Path = True) -> Any:
    from ragmark.api import _config, _history
    from ragmark.plan import RunRequest, execute, plan_run
    from ragmark.testing import Evaluated, metric_key

    if dataset is None and outputs is None:
        raise ValueError("ragmark_run needs dataset=... (or outputs=...)")
    cfg = config
    if pipeline is not None:
        cfg = _config(getattr(pipeline, "__name__", "pipeline"), pipeline, 1, None)
    plan = plan_run(RunRequest(
        dataset=dataset, outputs=outputs, corpus=corpus, split=split, config=cfg,
        pipeline=pipeline,
        metrics=[metric_key(m) for m in metrics] if metrics else None,
        judge_metrics=list(judge_metrics), top_k=top_k, top_n=top_n,
        max_queries=max_queries, llm=llm, **_history(history)))
    outcome = execute(plan)
    return Evaluated(outcome.report, outcome.run_id, outcome.history)


@pytest.fixture
def ragmark_run() -> Callable[..., Any]:
    """Evaluate a RAG config or pipeline as ``ragmark run`` does; returns an
    :class:`~ragmark.testing.Evaluated` (the report, with ``assert_at_least`` and
    ``assert_no_regression``)."""
    return _run
