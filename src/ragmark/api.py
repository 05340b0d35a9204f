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
    from ragmark.compare import Comparison, StatSettings
    from ragmark.llm import LLMSettings
    from ragmark.results.model import RunReport
    from ragmark.types import Dataset

Pipeline = Callable[[str], Any]
"""question -> {"answer", "contexts"} or (answer, contexts); sync or async."""

_NAME = re.compile(r"[^A-Za-z0-9_]+")


def _dataset(dataset: str | Path | Dataset, corpus: str | Path | None, split: str) -> Dataset:
    from ragmark.data import load_dataset
    from ragmark.types import Dataset

    if isinstance(dataset, Dataset):
        return dataset
    return load_dataset(dataset, corpus, split)


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


def _llm(llm: LLMSettings | Mapping[str, Any] | None) -> LLMSettings | None:
    from ragmark.llm import LLMSettings

    if llm is None or isinstance(llm, LLMSettings):
        return llm
    try:
        return LLMSettings.model_validate(dict(llm))
    except ValueError as e:
        raise ConfigError(f"llm: {e}") from None


def _record(history: bool | str | Path, kind: str, result: Any) -> None:
    if history is False:
        return
    from ragmark.history import history_path, record_results
    from ragmark.report.json_writer import comparison_json, report_json

    data = report_json(result) if kind == "run" else comparison_json(result)
    record_results(history_path(None if history is True else history), data["envelope"],
                   result)


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
    from ragmark.runner import run

    cfg = _config(name or _name_of(pipeline), pipeline, concurrency, timeout)
    report = run(_dataset(dataset, corpus, split), cfg, metrics, max_queries=max_queries,
                 judge_metrics=judge_metrics, llm=_llm(llm), pipeline_fn=pipeline)
    _record(history, "run", report)
    return report


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
    from ragmark.compare import compare

    if not pipelines:
        raise ConfigError("no pipelines to compare")
    cfgs = [_config(n, p, concurrency, timeout) for n, p in pipelines.items()]
    result = compare(_dataset(dataset, corpus, split), cfgs, metrics, baseline,
                     compared=compared, settings=settings, max_queries=max_queries,
                     judge_metrics=judge_metrics, llm=_llm(llm), pipeline_fns=pipelines)
    _record(history, "compare", result)
    return result
