"""`ragmark history` (list, show, trend) and `ragmark diff A B`."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import click
from rich.table import Table
from rich.text import Text

from ragmark.analysis.gates import metric_name
from ragmark.analysis.trajectory_view import step_lines
from ragmark.cli.app import cli, config_name_option, consoles, dry_run_option, history_option
from ragmark.cli.shared import option
from ragmark.errors import ConfigError
from ragmark.history import aggregates, history_path, list_runs, trajectories, values
from ragmark.history.retention import parse_age, prune, pruned_at, to_prune
from ragmark.history.store import accept, at_depths
from ragmark.metrics.names import read_name
from ragmark.passage_labels.metrics import current_name


@cli.group("history", invoke_without_command=True)
@history_option
@option("--dataset")
@config_name_option
@option("--metric")
@option("--kind", type=click.Choice(["run", "compare", "label", "monitor"]))
@click.option("--since", help="Only runs created on or after this date (YYYY-MM-DD).")
@click.option("--limit", type=click.IntRange(min=1), default=20, show_default=True)
@option("--json", "as_json", is_flag=True)
@click.pass_context
def history_cmd(ctx: click.Context, **flags: Any) -> None:
    """The recorded runs, newest first; 'history show ID' and 'history trend' look closer."""
    f = SimpleNamespace(**flags)
    ctx.obj = {"history": f.history}
    if ctx.invoked_subcommand is not None:
        return

    path = history_path(f.history)
    name = metric_name(f.metric) if f.metric else None
    runs = list_runs(path, dataset=f.dataset, config=f.config, kind=f.kind, since=f.since,
                     metric=name, limit=f.limit)
    out, _ = consoles(quiet=True)
    if f.as_json:
        rows = []
        for r in runs:
            row: dict[str, Any] = {
                "id": r.id, "kind": r.kind, "created_at": r.created_at,
                "dataset": r.dataset_name, "dataset_hash": r.dataset_hash,
                "questions": r.questions, "configs": list(r.configs),
                "git_commit": r.git_commit, "results": r.results_path,
                "verdict": r.verdict}
            if name:
                aggs = aggregates(path, r.id)
                row[name] = {c: aggs[c][name].value for c in r.configs
                             if name in aggs.get(c, {})}
            rows.append(row)
        click.echo(json.dumps(rows, indent=2))
        return
    if not runs:
        out.print(f"No recorded run matches (history: {path}).{_depth_hint(path, name)}",
                  highlight=False)
        return
    table = Table(show_header=True, header_style="bold")
    for col in ("id", "created (UTC)", "kind", "dataset", "questions", "configs", "commit",
                "gates"):
        table.add_column(col, justify="right" if col in ("id", "questions") else "left")
    if name:
        table.add_column(name, justify="right")
    for r in runs:
        cells = [str(r.id), r.created_at.replace("T", " ")[:19], r.kind,
                 f"{r.dataset_name} ({r.dataset_hash[:8]})", str(r.questions),
                 ", ".join(r.configs), (r.git_commit or "")[:12],
                 r.verdict or ("no gate" if r.kind == "monitor" else "-")]
        if name:
            aggs = aggregates(path, r.id)
            cells.append(", ".join(_value(aggs[c][name]) for c in r.configs
                                   if name in aggs.get(c, {})))
        table.add_row(*(Text(c) for c in cells))  # names and texts as they are
    out.print(table)


@history_cmd.command("show")
@history_option
@click.argument("run_id", type=int)
@click.option("--question", "query_id", metavar="QUERY_ID",
              help="One question of the run: its values per config and an agent's "
                   "trajectory, step by step.")
@click.pass_context
def history_show(ctx: click.Context, run_id: int, history: str | None,
                 query_id: str | None) -> None:
    """One recorded run: its envelope, configs and every aggregate with its coverage."""
    from ragmark.history import pairwise_of, run_row

    path = history_path(history or ctx.obj["history"])
    row, env, configs = run_row(path, run_id)
    out, _ = consoles(quiet=True)
    if query_id is not None:
        _show_question(out, path, run_id, list(configs), query_id)
        return
    out.print(f"run {row.id}: {row.kind} on {row.dataset_name} ({row.questions} questions), "
              f"{row.created_at}, ragmark {env.get('ragmark')}, commit "
              f"{row.git_commit or 'none'}", highlight=False, markup=False)
    out.print(f"dataset hash {row.dataset_hash}; config hash {env.get('config_hash')}; "
              f"results {row.results_path or 'not written'}", highlight=False, markup=False)

    when = pruned_at(path, run_id)
    if when is not None:
        out.print(f"per-question values pruned on {when} (aggregates kept)", highlight=False)
    aggs = aggregates(path, run_id)
    for name in configs:
        table = Table(title=Text(f"config {name}"), show_header=True, header_style="bold")
        for col, just in (("metric", "left"), ("value", "right"), ("questions", "right"),
                          ("missing", "right")):
            table.add_column(col, justify=just)  # type: ignore[arg-type]
        for metric, a in aggs.get(name, {}).items():
            why = "; ".join(f"{r} ({k})" for r, k in a.reasons.items())
            table.add_row(metric, _value(a), str(a.n), Text(f"{a.missing}" + (
                f": {why}" if why else "")))  # a reason may hold [n] or brackets
        out.print(table)
    pairwise = pairwise_of(path, run_id)
    if pairwise is not None:
        from ragmark.report.round_robin import pairwise_lines

        out.print("pairwise verdicts (--pairwise):", highlight=False)
        for line in pairwise_lines(pairwise):
            out.print(f"  {line}", highlight=False, markup=False, soft_wrap=True)
        for g in pairwise.get("gates") or []:
            out.print(f"  gate: {g['line']}", highlight=False, markup=False, soft_wrap=True)


def _show_question(out: Any, path: Any, run_id: int, configs: list[str], qid: str) -> None:
    """A question of a recorded run: per config its values and its trajectory."""
    when = pruned_at(path, run_id)
    if when is not None:
        raise ConfigError(f"run {run_id}'s per-question values were pruned on {when[:10]}; "
                          f"its results file, if kept, has question {qid!r}")
    for name in configs:
        questions, vals = values(path, run_id, name)
        if qid not in questions:
            raise ConfigError(f"run {run_id} has no question {qid!r} (e.g. "
                              f"{', '.join(list(questions)[:3]) or 'none'})")
        out.print(f"config {name}, question {qid}: {questions[qid]}", highlight=False,
                  markup=False, soft_wrap=True)
        for metric, by_q in vals.items():
            v = by_q.get(qid)
            out.print(f"  {metric}: {'missing' if v is None else f'{v:.4f}'}",
                      highlight=False, markup=False)
        steps = trajectories(path, run_id, name).get(qid)
        if steps is not None:
            out.print(f"  trajectory ({len(steps)} steps):", highlight=False)
            for i, line in enumerate(step_lines(steps), 1):
                out.print(f"    {i}. {line}", highlight=False, markup=False, soft_wrap=True)


@history_cmd.command("prune")
@history_option
@click.option("--older-than", "older_than", required=True, metavar="AGE",
              help="Prune the runs older than this (30d, 12h, 2w).")
@option("--kind", type=click.Choice(["run", "compare", "label", "monitor"]))
@dry_run_option
@click.pass_context
def history_prune(ctx: click.Context, older_than: str, kind: str | None, history: str | None,
                  dry_run: bool) -> None:
    """Drop the per-question values and question texts of old runs (the bulk of the
    history); their aggregates, gate verdicts and trends stay. Accepted runs and the
    newest (and newest passing) run of each config on each dataset, a gate's baseline,
    are never pruned. The file is compacted (VACUUM) after."""

    path = history_path(history or ctx.obj["history"])
    age = parse_age(older_than)
    got = to_prune(path, age, kind=kind) if dry_run else prune(path, age, kind=kind)
    click.echo(f"{got.text(dry_run)} ({path})")


@history_cmd.command("accept")
@history_option
@click.argument("run_id", type=int)
@click.pass_context
def history_accept(ctx: click.Context, run_id: int, history: str | None) -> None:
    """Accept a run whose gates failed: it may then be the baseline (last) of later runs.
    A failed run is never a baseline otherwise, so a regression cannot become the new
    normal by being run twice."""

    path = history_path(history or ctx.obj["history"])
    row = accept(path, run_id)
    click.echo(f"run {row.id} ({', '.join(row.configs)}) accepted: it may now be the "
               f"baseline of later runs on {row.dataset_name} ({path})")


@history_cmd.command("trend")
@history_option
@config_name_option
@option("--metric", required=True)
@option("--dataset")
@option("--plot", "plot", metavar="PREFIX")
@click.pass_context
def history_trend(ctx: click.Context, config: str | None, metric: str,
                  dataset: str | None, history: str | None, plot: str | None) -> None:
    """A metric's mean over the runs of one config on one dataset, oldest first."""
    from ragmark.history import trend

    if config is None:
        raise click.UsageError("Missing option '--config-name' (the config to follow).")

    path = history_path(history or ctx.obj["history"])
    name = metric_name(metric)
    if plot:
        from ragmark.report.plot import require_matplotlib

        require_matplotlib()
    points = trend(path, config, name, dataset)
    out, _ = consoles(quiet=True)
    if not points:
        raise ConfigError(f"no recorded run of config {config!r} computed {name}"
                          + (f" on dataset {dataset!r}" if dataset else "")
                          + _depth_hint(path, name))
    table = Table(title=Text(f"{name} of {config} on {points[0][0].dataset_name}"),
                  show_header=True, header_style="bold")
    for col in ("run", "created (UTC)", "commit", name, "questions"):
        table.add_column(col, justify="left" if col in ("created (UTC)", "commit") else "right")
    for r, a in points:
        table.add_row(str(r.id), r.created_at.replace("T", " ")[:19], (r.git_commit or "")[:12],
                      _value(a), f"{a.n}/{a.n + a.missing}")
    out.print(table)
    if plot:
        from ragmark.report.plot import plot_series

        written = plot_series([f"{r.id}" for r, _ in points], {config: [a.value for _, a in
                                                                         points]},
                              plot, title=f"{name} of {config} over runs", ylabel=name,
                              xlabel="run")
        out.print("Plot written to " + ", ".join(str(p) for p in written), highlight=False)


def _depth_hint(path: Any, name: str | None) -> str:
    """For a metric without a cutoff that runs recorded at a depth: the names to ask for;
    for precision@k or recall@k: what label runs call theirs."""
    found = at_depths(path, name) if name else []
    if name and not found and current_name(name) != name:
        return (f" Label runs call their {read_name(name).name} {current_name(name)}: try "
                f"--metric {current_name(name)}")
    if not found:
        return ""
    return (f" Runs of ragmark's own pipeline name {name} with the depth it covers: "
            f"try --metric {found[0]}" + (f" (also recorded: {', '.join(found[1:4])})"
                                          if len(found) > 1 else ""))


def _value(a: Any) -> str:
    return "—" if a.value is None else f"{a.value:.4f}"
