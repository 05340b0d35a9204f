"""The plan of ``ragmark label``: label each config's top K passages with an LLM judge
(one judge, several side by side, or the unjudged documents of a pool), decided once;
:func:`execute_label` runs it and writes what it made, :func:`estimate_label` dry-runs
it. Nothing here prints."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ragmark.analysis.gates import label_failures
from ragmark.config import load_configs
from ragmark.errors import ConfigError
from ragmark.judges.language import in_their_language
from ragmark.passage_labels import (
    check_template,
    curve,
    estimate,
    label,
    label_json,
    top_k_passages,
)
from ragmark.passage_labels.judges import side_by_side
from ragmark.passage_labels.tops import NO_ENDPOINT, label_pairs
from ragmark.plan.endpoint import resolve_llm
from ragmark.plan.paths import check_output, check_targets, output_stem
from ragmark.plan.sources import closed_on_error, executor_of, load
from ragmark.progress import Progress
from ragmark.report.json_writer import write_json
from ragmark.report.writers import Written, parse_formats, paths_of, write_all
from ragmark.running.pooling import pool
from ragmark.versions import versions

if TYPE_CHECKING:
    from ragmark.config import RunConfig
    from ragmark.executors import Executor
    from ragmark.llm import LLMSettings
    from ragmark.types import Dataset


@dataclass(frozen=True, kw_only=True)
class LabelRequest:
    """``ragmark label``'s flags, by their names."""

    dataset: str | Path | None = None
    corpus: str | Path | None = None
    split: str = "test"
    configs: Sequence[str] = ("sparse",)
    top_k: int = 10
    max_queries: int | None = None
    prompt_template: str | None = None
    output: str = "results/label.json"
    formats: str | None = None
    plot: bool = False
    pool: bool = False
    judge_models: Sequence[str] = ()
    allow_missing: bool = False
    strict: bool = False
    encoding: str | None = None
    history: str | Path | None = None
    no_history: bool = False
    executor_name: str | None = None
    address: str | None = None
    llm_flags: Mapping[str, Any] = field(default_factory=dict)
    dry_run: bool = False


@dataclass(frozen=True)
class LabelPlan:
    """What ``label`` does: ``mode`` ``label`` (one judge), ``judges`` (several side by
    side) or ``pool`` (the documents the qrels do not judge); ``judges`` the endpoint's
    settings per judge model; files named after ``stem``."""

    mode: Literal["label", "judges", "pool"]
    dataset: Dataset
    configs: tuple[RunConfig, ...]
    judges: tuple[LLMSettings, ...]
    top_k: int
    stem: str
    max_queries: int | None = None
    template: str | None = None
    formats: tuple[str, ...] = ()
    plot: bool = False
    history: Path | None = None
    allow_missing: bool = False
    executor: Executor | None = None


@dataclass
class LabelOutcome:
    """What executing a label plan made: per judge model its result (one for ``label``),
    the side-by-side summary, the pool's counts, the files written, the history id and
    the implicit gate's failures (no question of a config got a label)."""

    runs: dict[str, Any]
    written: list[Path]
    summary: dict[str, Any] | None = None
    pooled: dict[str, Any] | None = None
    run_id: int | None = None
    failed: list[str] = field(default_factory=list)


def plan_label(req: LabelRequest) -> LabelPlan:
    """Check the output paths, the endpoint, the prompt template and the plot's extra,
    then read the data: every error before any call."""
    stem = output_stem(req.output, "label")
    formats = parse_formats(req.formats, "label")
    hist = None
    if req.pool and not req.dry_run:
        check_output(f"{stem}.qrels.tsv", "--output")
    elif not req.dry_run:  # before any data is read
        plots = [f"{stem}{suffix}" for suffix in ((".png", ".svg") if req.plot else ())]
        hist = check_targets([*paths_of(formats, Path(stem)), *plots], history=req.history,
                             no_history=req.no_history)
    names = [n for c in req.configs for n in c.split()]
    settings, cfgs = resolve_llm([cfg for n in names for cfg in load_configs(n)],
                                 req.llm_flags, model=req.judge_models[0]
                                 if req.judge_models else None)
    if settings is None:
        raise ConfigError(NO_ENDPOINT)
    template = _read_template(req.prompt_template)
    check_template(template, f"--prompt-template {req.prompt_template}")
    if req.plot and not req.dry_run:
        from ragmark.report.plot import require_matplotlib

        require_matplotlib()
    judges = tuple(settings.model_copy(update={"model": m}) for m in req.judge_models) \
        or (settings,)
    mode: Literal["label", "judges", "pool"] = "pool" if req.pool else (
        "judges" if len(judges) > 1 else "label")
    if mode == "judges" and not req.dry_run:
        for s in [*_stems(stem, judges).values(), f"{stem}.judges"]:
            for suffix in (".json", ".md"):
                check_output(s + suffix, "--output")
    ex = executor_of(req)  # a wrong Ray address fails before the data is read
    with closed_on_error(ex):
        ds = load(req)
    return LabelPlan(mode, ds, tuple(cfgs), judges, req.top_k, stem, req.max_queries,
                     template, tuple(formats), req.plot, hist, req.allow_missing, ex)


@in_their_language
def estimate_label(plan: LabelPlan, progress: Progress | None = None
                   ) -> tuple[dict[str, dict[str, Any]], int | None]:
    """The label calls, tokens and cost per judge model (``pool`` for a pool) and, for a
    pool, how many documents it would judge. Nothing is called."""
    top = _top(plan, progress)
    if plan.mode == "pool":
        items = pool(plan.dataset, top.reports, top.top_k)
        pairs = [(it.question, it.text) for it in items]
        return {"pool": estimate(pairs, plan.judges[0], plan.template)}, len(items)
    name = (lambda s: s.model) if plan.mode == "judges" else (lambda s: "label")
    return {name(s): estimate(top.pairs(), s, plan.template) for s in plan.judges}, None


@in_their_language
def execute_label(plan: LabelPlan, progress: Progress | None = None) -> LabelOutcome:
    """Label, write every file, record the run (one judge) in the history."""
    top = _top(plan, progress)
    if plan.mode == "pool":
        return _pool(plan, top, progress)
    if plan.mode == "judges":
        return _side_by_side(plan, top, progress)

    result = label(top, plan.judges[0], plan.template, progress)
    data = label_json(result, versions())
    written = write_all(plan.formats, Written("label", result, data, Path(plan.stem)))
    if plan.plot:
        from ragmark.report.plot import plot_curves

        curves = {n: curve(c, "answer_presence", result.top_k)
                  for n, c in result.configs.items()}
        written += plot_curves(curves, plan.stem, ylabel="answer presence@k",
                               title=f"Answer presence@k: {result.dataset.get('name')}")
    json_path = Path(f"{plan.stem}.json") if "json" in plan.formats else (
        written[0] if written else None)
    run_id = None
    if plan.history is not None:
        from ragmark.history import record_results

        run_id = record_results(plan.history, data["envelope"], result, json_path)
    failed = [] if plan.allow_missing else label_failures(result.configs, result.top_k)
    return LabelOutcome({plan.judges[0].model: result}, written, run_id=run_id,
                        failed=failed)


def _top(plan: LabelPlan, progress: Progress | None) -> Any:
    return top_k_passages(plan.dataset, list(plan.configs), plan.top_k,
                          max_queries=plan.max_queries, progress=progress,
                          executor=plan.executor)


def _pool(plan: LabelPlan, top: Any, progress: Progress | None) -> LabelOutcome:
    """``label --pool``: judge the unjudged documents of every config's top K, and write
    the qrels extended with those judgments."""
    from ragmark.running.pooling import write_extended_qrels

    items = pool(plan.dataset, top.reports, top.top_k)
    pairs = [(it.question, it.text) for it in items]
    labels, llm = label_pairs(pairs, plan.judges[0], plan.template, progress)
    path = f"{plan.stem}.qrels.tsv"
    counts = write_extended_qrels(path, plan.dataset, items, [labels[p] for p in pairs],
                                  plan.judges[0].model)
    return LabelOutcome({}, [Path(path)], pooled={
        "items": len(items), "top_k": top.top_k, "configs": len(top.reports),
        "counts": counts, "llm": llm})


def _side_by_side(plan: LabelPlan, top: Any, progress: Progress | None) -> LabelOutcome:
    """``--judge-model A --judge-model B``: each judge's files, and their agreement."""

    stems = _stems(plan.stem, plan.judges)
    runs, summary = side_by_side(top, list(plan.judges), plan.template, progress)
    written = []
    for model, result in runs.items():
        written += write_all(plan.formats, Written("label", result,
                                                   label_json(result, versions()),
                                                   Path(stems[model])))
    written.append(write_json(summary, f"{plan.stem}.judges.json"))
    return LabelOutcome(runs, written, summary=summary)


def _stems(stem: str, judges: Sequence[LLMSettings]) -> dict[str, str]:
    return {s.model: f"{stem}.{re.sub(r'[^A-Za-z0-9_.-]+', '_', s.model)}" for s in judges}


def _read_template(path: str | None) -> str | None:
    if path is None:
        return None
    try:
        return Path(path).read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as e:
        raise ConfigError(f"--prompt-template {path}: not valid UTF-8 ({e.reason} at byte "
                          f"{e.start})") from None
    except OSError as e:
        raise ConfigError(f"--prompt-template {path}: cannot be read: {e.strerror}") from None
