"""The plan of ``ragmark monitor``: the flags become the monitor's frozen
:class:`~ragmark.monitor.settings.Settings` once (the metrics parsed, the judges'
endpoint resolved, every file it writes checked) before any record is read. Nothing
here prints."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragmark.errors import ConfigError, DataError
from ragmark.history.retention import parse_age
from ragmark.history.store import history_path
from ragmark.llm.fields import BASE_URL_ENV
from ragmark.metrics.names import parse_metrics, split_names
from ragmark.plan.endpoint import resolve_llm
from ragmark.plan.paths import check_targets

if TYPE_CHECKING:
    from ragmark.monitor.settings import Settings


@dataclass(frozen=True, kw_only=True)
class MonitorRequest:
    """``ragmark monitor``'s flags, by their names."""

    source: Path
    name: str | None = None
    metrics: str | None = None
    judge_metrics: str | None = None
    sample: float = 0.05
    budget_calls: int | None = None
    budget_cost: float | None = None
    fail_on_drift: str | None = None
    reference: int = 5
    reference_run: int | None = None
    margin: float = 0.0
    alpha: float = 0.05
    strict: bool = False
    encoding: str | None = None
    trace_attributes: Sequence[str] = ()
    root_names: Sequence[str] = ()
    root_kinds: Sequence[str] = ()
    root_wait: float = 300.0
    search_tools: Sequence[str] = ()
    retain_questions: str | None = None
    outputs: Sequence[str] = ()
    history: str | None = None
    junit: str | None = None
    llm_flags: Mapping[str, Any] = field(default_factory=dict)


def _judges(text: str | None) -> tuple[str, ...] | None:
    """``--judge-metrics``: None (the default judges when an endpoint is set), none, or
    the names."""
    if text is None:
        return None
    return () if text.strip().lower() == "none" else tuple(split_names(text))


def plan_monitor(req: MonitorRequest) -> Settings:
    """The monitor's settings of ``req``; a ConfigError or DataError before any work."""
    from ragmark.data.traces import TraceKeys
    from ragmark.monitor.settings import Settings

    if not req.source.exists():
        raise DataError("no such file or folder", file=str(req.source))
    judges = _judges(req.judge_metrics)
    llm, _ = resolve_llm([], req.llm_flags, need=judges is None or bool(judges))
    if judges and llm is None:
        raise ConfigError(f"--judge-metrics needs an LLM endpoint: --llm-base-url, or "
                          f"{BASE_URL_ENV}")
    for o in req.outputs:
        if Path(o).suffix not in (".json", ".md", ".html"):
            raise ConfigError(f"--output {o}: expected a .json, .md or .html file")
    # every file the command writes, checked before any record is read
    check_targets(req.outputs, history=req.history, junit=req.junit)
    return Settings(
        source=req.source, history=history_path(req.history), name=req.name,
        metrics=None if not req.metrics else tuple(str(m) for m in parse_metrics(
            req.metrics)), judge_metrics=judges, llm=llm, sample=req.sample,
        budget_calls=req.budget_calls, budget_cost=req.budget_cost,
        fail_on_drift=() if not req.fail_on_drift else tuple(
            str(m) for m in parse_metrics(req.fail_on_drift)),
        reference=req.reference, reference_run=req.reference_run, margin=req.margin,
        alpha=req.alpha, strict=req.strict, encoding=req.encoding,
        keys=replace(TraceKeys.parse(req.trace_attributes).rooted(
            req.root_names, req.root_kinds, req.root_wait), search_tools=tuple(req.search_tools)),
        retain=None if req.retain_questions is None else parse_age(
            req.retain_questions, "--retain-questions"))
