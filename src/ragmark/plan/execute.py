"""A plan, run: :func:`execute` runs every config, scores and gates the result, writes it
where the plan says and records it in the run history; :func:`estimate` dry-runs it
(the judge calls, tokens and cost; nothing is called or written). Nothing here prints:
the caller shows the :class:`~ragmark.plan.model.Outcome`."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from ragmark.analysis.gates import Condition, conditions
from ragmark.errors import ConfigError
from ragmark.plan.gating import (
    baselines,
    gate_conditions,
    gates_json,
    gates_markdown,
    regression_gates,
    verdict_of,
)
from ragmark.plan.model import Outcome, Plan
from ragmark.plan.pairwise import pairwise_gates
from ragmark.progress import Progress
from ragmark.report.markdown import comparison_markdown, run_markdown
from ragmark.report.trec_run import trec_note
from ragmark.report.writers import Written, write_all
from ragmark.results.codec import compare_to_json as comparison_json
from ragmark.results.codec import run_to_json
from ragmark.running.compare import compare, estimate_compare
from ragmark.running.runner import estimate_run, run


def execute(plan: Plan, progress: Progress | None = None) -> Outcome:
    """Run ``plan``: the baselines are found first, then the configs run, then the
    results are gated, written and recorded, in that order."""
    bases = baselines(plan)  # before the run starts
    if plan.outputs is None and not plan.options.skip_generation:
        from ragmark.plan.endpoint import check_generators

        check_generators([c for c in plan.configs if c.name not in plan.logged])
    result: Any
    if plan.kind == "run":
        result = _run(plan, progress)
        reports = {plan.configs[0].name: result}
    else:
        result = _compare(plan, progress)
        if plan.pairwise is not None:
            from ragmark.plan.pairwise import judged

            result = replace(result, pairwise=judged(plan, result.reports, progress))
        if plan.rank_against is not None:
            from ragmark.analysis.rank_against import rank_agreement

            result = replace(result, ranking=rank_agreement(result, *plan.rank_against))
        reports = result.reports
    g = plan.gating
    gates = regression_gates([(bases.get(n), r) for n, r in reports.items()],
                             g.regression, g.alpha, g.margin)
    result, pair_gates = _pairwise_gated(plan, result)
    gate_md = gates_markdown(gates, g.alpha, g.margin) + _pairwise_markdown(pair_gates)
    # a compare's Markdown is as printed before the corrections are added; a run's
    # shows its notes
    markdown = _markdown(plan, result) if plan.kind == "compare" else ""
    reports = {name: _finished(plan, rep, bases.get(name)) for name, rep in reports.items()}
    result = reports[plan.configs[0].name] if plan.kind == "run" else replace(
        result, reports=reports)
    markdown = (markdown or _markdown(plan, result)) + gate_md
    return _written(plan, result, reports, (gates, pair_gates), markdown, gate_md)


def estimate(plan: Plan, progress: Progress | None = None) -> dict[str, dict[str, Any]]:
    """A dry run of ``plan``: per config (``run`` for a run), the judge calls not yet
    cached and their estimated tokens and cost. Nothing is called or written."""
    if not plan.judges and plan.pairwise is None:
        raise ConfigError("--dry-run estimates judge calls: give --judge-metrics too")
    if plan.kind == "compare" and plan.pairwise is not None:
        from ragmark.plan.pairwise import estimated
        from ragmark.running.compare import dry_compared

        got, answered = dry_compared(plan.dataset, list(plan.configs), plan.task,
                                     progress=progress, logged=plan.logged)
        out = got if plan.judges else {}
        return {**out, "pairwise": estimated(plan, [answered[c.name] for c in plan.configs])}
    if plan.kind == "compare":
        return estimate_compare(plan.dataset, list(plan.configs), plan.task,
                                progress=progress, logged=plan.logged)
    (cfg,) = plan.configs
    return {"run": estimate_run(plan.dataset, cfg, plan.task, progress=progress,
                                outputs=plan.outputs)}


def _run(plan: Plan, progress: Progress | None) -> Any:
    (cfg,) = plan.configs
    return run(plan.dataset, cfg, plan.task, progress=progress, outputs=plan.outputs,
               pipeline_fn=plan.pipelines.get(cfg.name))


def _compare(plan: Plan, progress: Progress | None) -> Any:
    return compare(plan.dataset, list(plan.configs), plan.task, baseline=plan.baseline,
                   compared=plan.compared, settings=plan.stats, progress=progress,
                   given={**plan.pipelines, **plan.logged})


def _markdown(plan: Plan, result: Any) -> str:
    return run_markdown(result) if plan.kind == "run" else comparison_markdown(result)


def _finished(plan: Plan, report: Any, base: Any) -> Any:
    """A config's report with what the plan adds after the run: the qrels extension,
    the notes, the human labels' corrections."""
    changes: dict[str, Any] = {}
    if plan.pooled is not None:
        changes["dataset"] = {**report.dataset, "qrels_extra": plan.pooled}
    if plan.kind == "run":
        changes["notes"] = [*plan.notes, *report.notes,
                            *([base.note] if base is not None and base.note else []),
                            *plan.trailing_notes]
    report = replace(report, **changes)
    if plan.human is not None:
        from ragmark.analysis.human_labels import corrected

        report = replace(report, corrected=corrected(report, plan.human))
    return report


def _trec_noted(result: Any, kind: str) -> Any:
    """The results with each report's TREC-file note (:func:`trec_note`), if any."""
    def noted(r: Any) -> Any:
        note = trec_note(r)
        return r if note is None else replace(r, notes=[*r.notes, note])

    if kind == "run":
        return noted(result)
    return replace(result, reports={n: noted(r) for n, r in result.reports.items()})


def _pairwise_gated(plan: Plan, result: Any) -> tuple[Any, list[tuple[str, bool, str]]]:
    """The pairwise gates' conditions (name, passed, line), recorded in the result's
    pairwise report."""
    g = plan.gating
    if not g.pairwise or getattr(result, "pairwise", None) is None:
        return result, []

    report = result.pairwise
    got = pairwise_gates(report, report["baseline"], g.pairwise, g.alpha)
    gated = {**report, "gates": [{"condition": n, "passed": ok, "line": line}
                                 for n, ok, line in got]}
    return replace(result, pairwise=gated), got


def _pairwise_markdown(gates: list[tuple[str, bool, str]]) -> str:
    if not gates:
        return ""
    return "\n### Pairwise gate\n\n" + "".join(f"- {line}\n" for _, _, line in gates)


def _written(plan: Plan, result: Any, reports: dict[str, Any],
             gated: tuple[list[Any], list[tuple[str, bool, str]]], markdown: str,
             gate_md: str) -> Outcome:
    """Write the results (every format, the TREC run, JUnit, the step summary) and
    record them in the history, with the gates' verdict (the regression gates, and the
    pairwise gates' conditions)."""
    gates, pair_gates = gated

    t, g = plan.targets, plan.gating
    ds_hash = (str(result.dataset.get("hash", "")) if plan.kind == "run"
               else result.dataset_hash)
    result = replace(result, gated=gates_json(gates, g.regression, t.history, ds_hash) or None)
    if t.run_file or "trec" in t.formats:  # the file may make scores from the rank: said
        result = _trec_noted(result, plan.kind)
    data = (run_to_json(result, t.include_details) if plan.kind == "run"
            else comparison_json(result, t.include_details))
    written: list[Path] = []
    if t.formats and t.stem is not None:
        written = write_all(t.formats, Written(plan.kind, result, data, t.stem, gate_md))
    json_path = t.stem.with_name(t.stem.name + ".json") if (
        "json" in t.formats and t.stem is not None) else (written[0] if written else None)
    if t.formats and t.stem is not None:
        from ragmark.results.nuggetizer_files import write_nuggets_beside

        written += write_nuggets_beside(result, t.stem)
    trec = None
    if t.run_file:
        from ragmark.report.trec_run import write_trec_run

        trec = write_trec_run(result, t.run_file)
    conds = conditions(reports, fail_under=g.fail_under, max_missing=g.max_missing,
                       allow_missing=g.allow_missing) + [
        Condition(n, ok, line) for n, ok, line in pair_gates]
    run_id = None
    if t.history is not None:
        from ragmark.history import record_results

        run_id = record_results(t.history, data["envelope"], result, json_path,
                                verdict_of(conds, gates))
    conds, lines = gate_conditions(conds, gates)
    lines += [line for _, _, line in pair_gates]
    junit = None
    if t.junit:
        from ragmark.report.junit import write_junit

        junit = write_junit(conds, Path(t.junit))
    if t.step_summary:
        from ragmark.report.junit import append_step_summary

        append_step_summary(markdown)
    return Outcome(result, data, gates, conds, written, markdown, gate_md, trec, junit,
                   run_id, t.history, lines)
