"""The pytest plugin (entry point ``pytest11``): a ``ragmark_run`` fixture.

Nothing happens unless a test asks for the fixture::

    def test_rag(ragmark_run):
        report = ragmark_run(dataset="eval/set.json", config="rag.toml")
        report.assert_at_least(ndcg_10=0.6)
        report.assert_no_regression("last", metrics=["ndcg@10"])

``ragmark_run`` takes the arguments of ``ragmark run`` (``dataset``, ``corpus``,
``config``, ``outputs``, ``metrics``, ``judge_metrics``, ``top_k``, ``top_n``,
``max_queries``, ``split``, ``llm``, ``language``, ``input_format``) or an in-memory
``pipeline`` callable, runs it,
records it in the run history (``history``: True, a path, or False) and returns an
:class:`~ragmark.testing.Evaluated` with assertion helpers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

import pytest

from ragmark.api import _common, _config, _known

if TYPE_CHECKING:
    from typing import Unpack


class FixtureOptions(TypedDict, total=False):
    """What ``ragmark_run`` takes besides the dataset: the arguments of ``ragmark run``
    by their names, or an in-memory ``pipeline``."""

    corpus: str | Path | None
    config: str | Path | None
    outputs: str | Path | None
    pipeline: Callable[[str], Any] | None
    metrics: Sequence[str] | None
    judge_metrics: Sequence[str]
    top_k: int | None
    top_n: int | None
    max_queries: int | None
    split: str
    llm: Mapping[str, Any] | None
    history: bool | str | Path
    language: str | None
    input_format: str | None


def _run(dataset: str | Path | None = None, **options: Unpack[FixtureOptions]) -> Any:
    from ragmark.plan import RunRequest, execute, plan_run
    from ragmark.testing import Evaluated, metric_key

    _known(options, FixtureOptions, "ragmark_run")
    outputs, pipeline = options.get("outputs"), options.get("pipeline")
    if dataset is None and outputs is None:
        raise ValueError("ragmark_run needs dataset=... (or outputs=...)")
    cfg = options.get("config")
    if pipeline is not None:
        cfg = _config(getattr(pipeline, "__name__", "pipeline"), pipeline, 1, None)
    common = _common(options)
    if common["metrics"]:
        common["metrics"] = [metric_key(m) for m in common["metrics"]]
    else:
        common["metrics"] = None
    plan = plan_run(RunRequest(dataset=dataset, outputs=outputs, config=cfg, pipeline=pipeline,
                               top_k=options.get("top_k"), top_n=options.get("top_n"),
                               **common))
    outcome = execute(plan)
    return Evaluated(outcome.report, outcome.run_id, outcome.history)


@pytest.fixture
def ragmark_run() -> Callable[..., Any]:
    """Evaluate a RAG config or pipeline as ``ragmark run`` does; returns an
    :class:`~ragmark.testing.Evaluated` (the report, with ``assert_at_least`` and
    ``assert_no_regression``)."""
    return _run
