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
from typing import TYPE_CHECKING, Any, TypedDict

from ragmark.errors import ConfigError

if TYPE_CHECKING:
    from typing import Unpack

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


class RunOptions(TypedDict, total=False):
    """The keyword options :func:`evaluate_pipeline` and :func:`compare_pipelines` share,
    with their defaults."""

    corpus: str | Path | None
    """The corpus, when ``dataset`` is a questions file without one (default: None)."""
    split: str
    """The BEIR qrels split (default: ``test``)."""
    metrics: Sequence[str] | None
    """The metrics (default: those the dataset allows)."""
    judge_metrics: Sequence[str]
    """LLM-judged metrics, asked of ``llm`` (default: none)."""
    llm: LLMSettings | Mapping[str, Any] | None
    """The judges' endpoint: settings or a dict of their fields (default: the ``[llm]``
    table or ``RAGMARK_LLM_*``)."""
    max_queries: int | None
    """The first N questions only (default: all)."""
    concurrency: int
    """Questions asked at a time (default: 1)."""
    timeout: float | None
    """Seconds a question may take (default: none)."""
    history: bool | str | Path
    """Record the result in the run history: True (the default store), a path, or
    False (default: True)."""
    language: str | None
    """The data's language (``"de"``, ``"german"``): the judges are told it and write
    their claims in it (default: none stated)."""
    input_format: str | None
    """Read ``dataset`` as ``ragmark``, ``ragas``, ``deepeval`` or ``llamaindex`` instead
    of telling the format from its fields (default: told from its fields)."""


class PipelineOptions(RunOptions, total=False):
    name: str | None
    """The system's name in the report and the history (default: the callable's)."""


class CompareOptions(RunOptions, total=False):
    baseline: str | None
    """The pipeline the others are compared with (default: the first)."""
    compared: Sequence[str] | None
    """The metrics compared (default: the comparison table's)."""
    settings: StatSettings | None
    """The statistics: test, confidence, resamples, seed, correction (default: the
    defaults of ``ragmark compare``)."""


def _known(options: Mapping[str, Any], kind: Any, fn: str) -> None:
    """A TypeError for an option ``fn`` does not take, as for any Python function."""
    unknown = sorted(set(options) - set(kind.__optional_keys__))
    if unknown:
        raise TypeError(f"{fn}() got an unexpected keyword argument {unknown[0]!r}; it takes "
                        f"{', '.join(sorted(kind.__optional_keys__))}")


def _common(options: Mapping[str, Any]) -> dict[str, Any]:
    """The request fields every API call shares."""
    metrics = options.get("metrics")
    return {"corpus": options.get("corpus"), "split": options.get("split", "test"),
            "judge_metrics": list(options.get("judge_metrics", ())),
            "llm": options.get("llm"), "max_queries": options.get("max_queries"),
            "metrics": list(metrics) if metrics is not None else None,
            "language": options.get("language"), "input_format": options.get("input_format"),
            **_history(options.get("history", True))}


def _pipeline_config(name: str, pipeline: Pipeline, options: RunOptions) -> Any:
    return _config(name, pipeline, options.get("concurrency", 1), options.get("timeout"))


def _askable(pipeline: Any) -> Any:
    """A LangChain retriever or runnable, or a LlamaIndex query engine or retriever, as a
    function of the question (:mod:`ragmark.pipelines.adapters`); anything else as is."""
    from ragmark.pipelines.adapters import adapt

    name = type(pipeline).__name__
    if any(callable(getattr(pipeline, n, None)) for n in ("ainvoke", "invoke")):
        fn = adapt("langchain", pipeline, name)
    elif any(callable(getattr(pipeline, n, None)) for n in ("aquery", "aretrieve")):
        fn = adapt("llamaindex", pipeline, name)
    else:
        return pipeline
    fn.__name__ = name  # type: ignore[attr-defined]
    return fn


def evaluate_pipeline(pipeline: Pipeline, dataset: str | Path | Dataset,
                      **options: Unpack[PipelineOptions]) -> RunReport:
    """Ask ``pipeline`` every question of ``dataset`` (a path, as ``--dataset`` takes, or
    a loaded :class:`~ragmark.types.Dataset`) and score its answers and contexts.
    ``pipeline``: a function of the question, or a LangChain retriever or runnable, or a
    LlamaIndex query engine or retriever (asked through their API).

    The options (:class:`PipelineOptions`: ``corpus``, ``split``, ``name``, ``metrics``,
    ``judge_metrics``, ``llm``, ``max_queries``, ``concurrency``, ``timeout``,
    ``history``, ``language``, ``input_format``) are keywords, typed and checked:
    ``metrics`` default to those the dataset allows; ``judge_metrics`` need ``llm`` (an
    :class:`~ragmark.llm.LLMSettings` or a dict of its fields, e.g. ``{"base_url":
    ..., "model": ...}``). ``concurrency`` questions are asked at a time (threads for a
    plain function; an ``async def`` runs on the event loop), each within ``timeout``
    seconds. A question the pipeline fails on has its metrics missing with the reason.
    The report is recorded in the run history (``history``: True for the default store,
    a path, or False).
    """
    from ragmark.plan import RunRequest, execute, plan_run

    _known(options, PipelineOptions, "evaluate_pipeline")
    pipeline = _askable(pipeline)
    cfg = _pipeline_config(options.get("name") or _name_of(pipeline), pipeline, options)
    plan = plan_run(RunRequest(dataset=dataset, config=cfg, pipeline=pipeline,
                               **_common(options)))
    return execute(plan).report


def compare_pipelines(pipelines: Mapping[str, Pipeline], dataset: str | Path | Dataset,
                      **options: Unpack[CompareOptions]) -> Comparison:
    """Every pipeline (name -> callable) on the same questions, compared with the
    baseline (default: the first) exactly as ``ragmark compare`` does. The options
    (:class:`CompareOptions`) are those of :func:`evaluate_pipeline` but ``name``, and
    ``baseline``, ``compared`` and ``settings`` (the statistics)."""
    from ragmark.plan import CompareRequest, execute, plan_compare
    from ragmark.running.compare import Comparison

    _known(options, CompareOptions, "compare_pipelines")
    if not pipelines:
        raise ConfigError("no pipelines to compare")
    pipelines = {n: _askable(p) for n, p in pipelines.items()}
    cfgs = [_pipeline_config(n, p, options) for n, p in pipelines.items()]
    common = _common(options)
    compared = options.get("compared")
    plan, _ = plan_compare(CompareRequest(
        dataset=dataset, configs=cfgs, pipelines=pipelines, run_metrics=common.pop("metrics"),
        metrics=list(compared) if compared is not None else None,
        baseline=options.get("baseline"), stats=options.get("settings"), **common))
    result = execute(plan).result
    assert isinstance(result, Comparison)
    return result
