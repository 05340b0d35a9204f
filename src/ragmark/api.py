"""The Python API: evaluate RAG pipelines that live in memory.

A pipeline is any callable (a function, an ``async def``, an object with ``__call__``)
that takes a question and returns ``{"answer": str, "contexts": [...]}`` or ``(answer,
contexts)``, exactly as a ``[pipeline] kind = "python"`` config's target. The result is
the same report ``ragmark run`` makes (and the same comparison as ``ragmark compare``),
recorded in the run history like a CLI run unless ``history=False``::

    import ragmark

    def answer(question: str) -> dict:
        hits = my_index.search(question, k=5)
        return {"answer": my_llm(question, hits), "contexts": [h.text for h in hits]}

    report = ragmark.evaluate_pipeline(answer, "eval/questions.json")
    print(report.value("recall@5"), report.metrics[report.key("mrr")].n)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragmark.errors import ConfigError

if TYPE_CHECKING:
    from ragmark.llm import LLMSettings
    from ragmark.results.model import RunReport
    from ragmark.running.compare import Comparison, StatSettings
    from ragmark.types import Dataset

Pipeline = Callable[[str], Any]
"""question -> {"answer", "contexts"} or (answer, contexts); sync or async."""

_NAME = re.compile(r"[^A-Za-z0-9_]+")


def _name_of(pipeline: Pipeline) -> str:
    name = getattr(pipeline, "__name__", None) or type(pipeline).__name__
    return str(name)


def _config(name: str, pipeline: Pipeline, concurrency: int, timeout: float | None) -> Any:
    from ragmark.config import RunConfig
    from ragmark.pipelines.config import PythonPipelineConfig

    if not callable(pipeline):
        raise ConfigError(f"pipeline {name!r} is not callable: give a function or an object "
                          "with __call__(question)")
    module = _NAME.sub("_", str(getattr(pipeline, "__module__", None) or "memory")).strip("_")
    attr = _NAME.sub("_", _name_of(pipeline)).strip("_") or "pipeline"
    target = f"{module or 'memory'}:{attr if not attr[0].isdigit() else '_' + attr}"
    return RunConfig.model_validate({"name": name, "pipeline": PythonPipelineConfig(
        kind="python", target=target, concurrency=concurrency, timeout=timeout)})


def _history(history: bool | str | Path) -> dict[str, Any]:
    """``history`` (True: the default store, a path, or False) as a request's fields."""
    if history is False:
        return {"no_history": True}
    return {"history": None if history is True else history}


def evaluate_pipeline(
    pipeline: Pipeline,
    dataset: str | Path | Dataset,
    *,
    corpus: str | Path | None = None,
    split: str = "test",
    name: str | None = None,
    metrics: Sequence[str] | None = None,
    judge_metrics: Sequence[str] = (),
    llm: LLMSettings | Mapping[str, Any] | None = None,
    max_queries: int | None = None,
    concurrency: int = 1,
    timeout: float | None = None,
    history: bool | str | Path = True,
) -> RunReport:
    """Ask ``pipeline`` every question of ``dataset`` (a path, as ``--dataset`` takes, or
    a loaded :class:`~ragmark.types.Dataset`) and score its answers and contexts.

    ``metrics`` default to those the dataset allows; ``judge_metrics`` need ``llm`` (an
    :class:`~ragmark.llm.LLMSettings` or a dict of its fields, e.g. ``{"base_url":
    ..., "model": ...}``). ``concurrency`` questions are asked at a time (threads for a
    plain function; an ``async def`` runs on the event loop), each within ``timeout``
    seconds. A question the pipeline fails on has its metrics missing with the reason.
    The report is recorded in the run history (``history``: True for the default store,
    a path, or False).
    """
    from ragmark.plan import RunRequest, execute, plan_run

    cfg = _config(name or _name_of(pipeline), pipeline, concurrency, timeout)
    plan = plan_run(RunRequest(
        dataset=dataset, corpus=corpus, split=split, config=cfg, pipeline=pipeline,
        metrics=list(metrics) if metrics is not None else None,
        judge_metrics=list(judge_metrics), llm=llm, max_queries=max_queries,
        **_history(history)))
    return execute(plan).report


def compare_pipelines(
    pipelines: Mapping[str, Pipeline],
    dataset: str | Path | Dataset,
    *,
    corpus: str | Path | None = None,
    split: str = "test",
    baseline: str | None = None,
    metrics: Sequence[str] | None = None,
    compared: Sequence[str] | None = None,
    judge_metrics: Sequence[str] = (),
    llm: LLMSettings | Mapping[str, Any] | None = None,
    max_queries: int | None = None,
    concurrency: int = 1,
    timeout: float | None = None,
    settings: StatSettings | None = None,
    history: bool | str | Path = True,
) -> Comparison:
    """Every pipeline (name -> callable) on the same questions, compared with the
    baseline (default: the first) exactly as ``ragmark compare`` does."""
    from ragmark.plan import CompareRequest, execute, plan_compare
    from ragmark.running.compare import Comparison

    if not pipelines:
        raise ConfigError("no pipelines to compare")
    cfgs = [_config(n, p, concurrency, timeout) for n, p in pipelines.items()]
    plan, _ = plan_compare(CompareRequest(
        dataset=dataset, corpus=corpus, split=split, configs=cfgs, pipelines=pipelines,
        run_metrics=metrics, metrics=list(compared) if compared is not None else None,
        baseline=baseline, judge_metrics=list(judge_metrics), llm=llm,
        max_queries=max_queries, stats=settings, **_history(history)))
    result = execute(plan).result
    assert isinstance(result, Comparison)
    return result
