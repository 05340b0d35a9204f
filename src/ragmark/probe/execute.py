"""Running a probe: for each config, its clean run on the target questions (the clean
metrics), then one run an arm on the overlay corpus, each read into the attack's
outcomes. Each finished (config, arm) is written at once under the plan's ``state``
folder, keyed by everything that shapes it, so a killed probe resumes where it stopped
and nothing is computed twice."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from ragmark.case import Context
from ragmark.errors import ConfigError
from ragmark.pipelines.python import load_target
from ragmark.probe.attacks import Planted
from ragmark.probe.given import GIVEN
from ragmark.probe.overlay import overlaid, plant_all
from ragmark.probe.plan import CLEAN, Arm, ProbePlan
from ragmark.probe.rates import Outcome, outcome
from ragmark.progress import NullProgress, Progress
from ragmark.registry import registry
from ragmark.running.runner import run
from ragmark.stats.paired import mean_ci
from ragmark.versions import canonical_hash


def planted_for(plan: ProbePlan, arm: Arm) -> tuple[Planted, ...]:
    """The documents ``arm`` plants for the plan's target questions (an arm of
    ``--planted FILE``: the file's)."""
    if arm.style == GIVEN:
        return tuple(p for p in plan.given if p.attack == arm.attack)
    asked = set(plan.questions)
    chosen = [s for s in plan.base.dataset.samples if s.id in asked]
    return plant_all(arm.attack, chosen, plan.seed, style=arm.style or "plain",
                     copies=plan.copies[arm.attack])


def contexts_of(record: Any) -> list[Context]:
    """The contexts a question's answer was made from, with their documents where the
    ranking gives them (a ranking lists the contexts first, in their order)."""
    texts = list(record.contexts)
    ranked = list(record.retrieved)
    if len(ranked) >= len(texts):
        return [Context(t, r.id, r.doc_id) for t, r in zip(texts, ranked, strict=False)]
    return [Context(t) for t in texts]


@contextmanager
def planted_in(cfg: Any, planted: Sequence[Planted]) -> Iterator[None]:
    """For a Python pipeline with a ``documents`` function: the planted documents given
    to it while the block runs, taken out after (``[]``), whatever happens. ragmark's own
    pipeline reads the overlay corpus instead: nothing to do."""
    docs = getattr(cfg.pipeline, "documents", None)
    if docs is None:
        yield
        return

    take = load_target(cfg.pipeline, cfg.name, "documents")
    take([{"id": i, "text": t, "title": "", "metadata": dict(p.metadata)}
          for p in planted for i, t in zip(p.ids, p.texts, strict=True)])
    try:
        yield
    finally:
        take([])


def _why(record: Any) -> str:
    for s in record.metrics.values():
        if s.value is None and s.reason:
            return str(s.reason)
    return "no answer"


def outcomes_of(report: Any, planted: Sequence[Planted]) -> list[Outcome]:
    """Each target's outcome in a run on the overlay (``report``, a RunReport)."""
    by_id = {p.question_id: p for p in planted}
    out = []
    for q in report.queries:
        p = by_id.get(q.id)
        if p is None:
            continue
        right = p.right or (q.sample.expected_answer if q.sample is not None else None)
        out.append(outcome(p, q.question, q.answer, contexts_of(q), right=right,
                           no_answer=None if q.answer is not None else _why(q)))
    return out


def clean_values(report: Any, n_resamples: int = 10_000, seed: int = 0
                 ) -> dict[str, dict[str, Any]]:
    """The clean run's metrics: each a mean with its bootstrap interval over the target
    questions that have a value, and how many had none."""
    names = list(report.metrics)
    out: dict[str, dict[str, Any]] = {}
    for name in names:
        vals = [q.metrics[name].value for q in report.queries if name in q.metrics]
        if not vals:  # an aggregate of the run (no value a question): as computed
            agg = report.metrics[name]
            out[name] = {"value": agg.value, "low": None, "high": None, "n": agg.n,
                         "missing": agg.missing}
            continue
        got = [float(v) for v in vals if v is not None]
        iv = mean_ci(got, n_resamples=n_resamples, seed=seed) if got else None
        out[name] = {"value": None if iv is None else iv.mean,
                     "low": None if iv is None else iv.low,
                     "high": None if iv is None else iv.high,
                     "n": len(got), "missing": len(vals) - len(got)}
    return out


def _endpoint(settings: Any) -> dict[str, Any] | None:
    """An LLM endpoint's identity in a resume key: where it is, the model and how it is
    asked (what shapes its answers), never its key's variable or its patience."""
    if settings is None:
        return None
    return {"base_url": settings.base_url, "model": settings.model,
            "provider": settings.provider, "temperature": settings.temperature,
            "seed": settings.seed, "structured": settings.structured}


def generator_endpoint(cfg: Any) -> dict[str, Any] | None:
    """The resolved endpoint of a config's LLM generator (the model and address the
    environment or the [llm] table sets included), or None."""
    if cfg.pipeline is not None or cfg.generator.name != "llm":
        return None

    try:
        made = registry("generator").create("llm", **cfg.llm_params(cfg.generator))
    except ConfigError as e:  # a dry run without an endpoint: nothing kept can match
        return {"unresolved": str(e)}
    return _endpoint(made.settings)


def resume_key(plan: ProbePlan, cfg: Any, arm: str) -> str:
    """What a kept (config, arm) depends on, hashed: the data's and corpus's contents,
    the plan (targets, seed, arms, copies), the config, the endpoints that answer and
    judge (address and model), what is computed, and the arm's planted texts. A change
    to any of them is another key, so a changed input is never answered by a kept run."""
    task = plan.base.task
    found = [a for a in plan.arms if a.name == arm]
    planted = [] if not found else [[p.question_id, list(p.ids), list(p.texts), p.marker]
                                     for p in planted_for(plan, found[0])]
    return canonical_hash({"probe": plan.describe(), "data": plan.data_hash,
                           "config": cfg.model_dump(mode="json", exclude=set() if (
                               cfg.simulator) else {"simulator"}),
                           "generator": generator_endpoint(cfg), "arm": arm, "planted": planted,
                           "metrics": list(task.metrics or []),
                           "judges": list(task.judge_metrics),
                           "judge": _endpoint(task.llm) if task.judge_metrics else None})


def _saved(plan: ProbePlan, cfg: Any, arm: str) -> Path | None:
    if plan.state is None:
        return None
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in cfg.name)
    return plan.state / f"{safe}--{arm.replace(':', '-')}--{resume_key(plan, cfg, arm)[:16]}.json"


def _keep(path: Path | None, data: dict[str, Any], report: Any) -> None:
    """Keep a finished run under ``path`` when every question got its answer: a run
    with failed answers (a server down midway) is asked again by the next probe (an LLM
    generator's answers that came back are in its call cache, so only those that failed
    are asked again)."""
    if path is None or any(q.answer is None for q in report.queries):
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
    tmp.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    tmp.replace(path)  # whole or not at all


def _one_arm(plan: ProbePlan, cfg: Any, arm: Arm, progress: Progress) -> dict[str, Any]:
    path = _saved(plan, cfg, arm.name)
    if path is not None and path.is_file():
        return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]
    planted = planted_for(plan, arm)
    ds = overlaid(plan.base.dataset, planted)
    task = replace(plan.base.task, judge_metrics=(), answers=True)
    with planted_in(cfg, planted):
        report = run(ds, cfg, task, progress=progress,
                     pipeline_fn=plan.base.pipelines.get(cfg.name))
    got = {"arm": arm.name, "outcomes": [asdict(o) for o in outcomes_of(report, planted)],
           "answers": {q.id: q.answer for q in report.queries}}
    _keep(path, got, report)
    return got


def _clean(plan: ProbePlan, cfg: Any, progress: Progress) -> dict[str, Any]:
    path = _saved(plan, cfg, CLEAN)
    if path is not None and path.is_file():
        return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]
    asked = set(plan.questions)
    ds = replace(plan.base.dataset, samples=tuple(
        s for s in plan.base.dataset.samples if s.id in asked))
    with planted_in(cfg, ()):
        report = run(ds, cfg, plan.base.task, progress=progress,
                     pipeline_fn=plan.base.pipelines.get(cfg.name))
    got = {"arm": CLEAN, "metrics": clean_values(report),
           "answers": {q.id: q.answer for q in report.queries}}
    _keep(path, got, report)
    return got


def pending(plan: ProbePlan) -> dict[str, dict[str, list[str]]]:
    """A dry run: per config, the runs (``clean``, then each arm) kept in the state
    folder by an earlier probe of the same plan, and those still to run."""
    out = {}
    for cfg in plan.base.configs:
        names = [CLEAN, *(a.name for a in plan.arms)]
        kept = [n for n in names if (p := _saved(plan, cfg, n)) is not None and p.is_file()]
        out[cfg.name] = {"kept": kept, "to_run": [n for n in names if n not in kept]}
    return out


def run_probe(plan: ProbePlan, progress: Progress | None = None) -> dict[str, Any]:
    """Every config's clean run and arms, as JSON: config -> {"clean": ..., "arms":
    {arm: {"outcomes": [...], ...}}}; each read from the state folder when a run of
    the same plan finished it before."""
    prog = progress or NullProgress()
    out: dict[str, Any] = {}
    for cfg in plan.base.configs:
        with prog.task(f"probe {cfg.name}: clean, then {len(plan.arms)} attacks",
                       len(plan.arms) + 1) as advance:
            clean = _clean(plan, cfg, prog)
            advance(1)
            arms = {}
            for arm in plan.arms:
                arms[arm.name] = _one_arm(plan, cfg, arm, prog)
                advance(1)
        out[cfg.name] = {"clean": clean, "arms": arms}
    return out
