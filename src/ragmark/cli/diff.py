"""`ragmark diff`: per-question differences between two runs."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import click
from rich import box
from rich.table import Table

from ragmark.analysis.diff import calls_diff, diff, outcomes_diff, pairwise_diff, resolve_side
from ragmark.analysis.gates import metric_name
from ragmark.cli.app import cli, config_name_option, consoles, history_option
from ragmark.cli.shared import option
from ragmark.history import history_path
from ragmark.metrics.names import split_names
from ragmark.report.simulation import ENDINGS


@cli.command("diff")
@click.argument("a")
@click.argument("b")
@config_name_option
@option("--metrics", show_default="every metric both have")
@click.option("--intersect", is_flag=True,
              help="Pair the questions both runs have even when their datasets or question "
                   "sets differ.")
@option("--top", type=click.IntRange(min=0), default=5, show_default=True)
@option("--seed", type=int, default=0, show_default=True)
@history_option
@option("--json", "as_json", is_flag=True)
def diff_cmd(**flags: Any) -> None:
    """Per-question differences from run A to run B: the means, the paired difference
    with its 95% bootstrap interval and randomisation test, and the questions that got
    worse and better the most. A and B: results files (run or compare), history ids, or
    last / last~1 / ... (the newest runs of --config-name). Two simulations (their
    --output files or history ids) are paired by scenario, and the conversations that
    ended otherwise are listed."""
    f = SimpleNamespace(**flags)
    hist = history_path(f.history)
    # the newest runs, as given: a run that failed its gates is diffed like any other
    side_a = resolve_side(f.a, f.config, hist, baseline=False)
    side_b = resolve_side(f.b, f.config, hist, baseline=False)
    names = [metric_name(m) for m in split_names(f.metrics)] if f.metrics else None
    rows, notes = diff(side_a, side_b, names, intersect=f.intersect, top=f.top, seed=f.seed)
    pairwise = pairwise_diff(side_a, side_b)
    calls = calls_diff(side_a, side_b)
    endings = outcomes_diff(side_a, side_b)
    out, _ = consoles(quiet=True)
    if f.as_json:
        click.echo(json.dumps({"a": side_a.label, "b": side_b.label, "notes": notes,
                               "metrics": [r.to_json() for r in rows],
                               **({"pairwise": pairwise} if pairwise else {}),
                               **({"tool_calls": calls} if calls else {}),
                               **({"outcomes": endings} if endings is not None else {})},
                              indent=2))
        return
    out.print(f"A = {side_a.label}; B = {side_b.label}", highlight=False, markup=False)
    for n in notes:
        out.print(f"note: {n}", highlight=False, markup=False)

    # no vertical rules: the numbers fit 80 columns beside a metric name
    table = Table(show_header=True, header_style="bold", box=box.SIMPLE_HEAD)
    for col in ("metric", "n", "A", "B", "B - A", "95% interval", "p"):
        if col == "metric":  # a long name folds onto a second line, never cut
            table.add_column(col, overflow="fold", min_width=12)
        else:  # nor is a number ("probe:injec…", "1.…")
            table.add_column(col, justify="right", no_wrap=True)
    for r in rows:
        if r.n == 0:
            table.add_row(r.metric, "0", "—", "—", "—", "—", "—")
            continue
        table.add_row(r.metric, str(r.n), f"{r.mean_a:.4f}", f"{r.mean_b:.4f}",
                      f"{r.delta:+.4f}", "—" if r.low is None else
                      f"[{r.low:+.4f}, {r.high:+.4f}]", f"{r.p_value:.4f}")
    out.print(table)
    for r in rows:
        if not (r.worse or r.better):
            continue
        out.print(f"{r.metric}: {len(r.worse)} shown of the questions that got worse, "
                  f"{len(r.better)} of those that got better, {r.unchanged} unchanged",
                  highlight=False)
        for label, moved in (("worse", r.worse), ("better", r.better)):
            for m in moved:
                q = f" {m.question[:70]!r}" if m.question else ""
                out.print(f"  {label}: {m.id}{q}: {m.a:.4f} -> {m.b:.4f} ({m.delta:+.4f})",
                          highlight=False, markup=False)
    _print_pairwise(out, pairwise, f.top)
    _print_calls(out, calls, sum(q in side_b.trajectories for q in side_a.trajectories),
                 f.top)
    _print_endings(out, endings, sum(q in side_b.outcomes for q in side_a.outcomes))


def _print_endings(out: Any, endings: list[dict[str, Any]] | None, both: int) -> None:
    """The simulated conversations that ended otherwise from A to B: every one."""
    if endings is None:
        return
    out.print(f"conversations: {len(endings)} of the {both} scenarios both played ended "
              "otherwise" + (":" if endings else ""), highlight=False, markup=False)
    for e in endings:
        out.print(f"  {e['id']} {e['scenario'][:70]!r}: {ENDINGS.get(e['a'], e['a'])} -> "
                  f"{ENDINGS.get(e['b'], e['b'])}", highlight=False, markup=False,
                  soft_wrap=True)


def _print_calls(out: Any, calls: list[dict[str, Any]], both: int, top: int) -> None:
    """The questions whose tool calls changed from A to B, ``top`` of them in full."""
    if not calls:
        return
    out.print(f"tool calls: {len(calls)} of the {both} questions with a trajectory in both "
              "changed their calls" + (f" ({top} shown)" if len(calls) > top else ""),
              highlight=False, markup=False)
    for c in calls[:top]:
        out.print(f"  {c['id']} {c['question'][:70]!r}:\n    A: "
                  f"{', '.join(c['a']) or 'no call'}\n    B: {', '.join(c['b']) or 'no call'}",
                  highlight=False, markup=False, soft_wrap=True)


def _print_pairwise(out: Any, pairwise: list[dict[str, Any]], top: int) -> None:
    """Per opponent and criterion, the config's pairwise record in A and in B."""
    for p in pairwise:
        def rec(r: dict[str, Any]) -> str:
            rate = "none" if r["value"] is None else (
                f"{r['value']:.3f} [{r['ci_low']:.3f}, {r['ci_high']:.3f}]")
            return f"won {r['wins']}, tied {r['ties']}, lost {r['losses']} (win rate {rate})"

        moved = p["changed"]
        shown = ", ".join(f"{m['id']} {m['a']} -> {m['b']}" for m in moved[:top])
        out.print(f"pairwise {p['criterion']} against {p['against']}: A {rec(p['a'])}; B "
                  f"{rec(p['b'])}; {len(moved)} question{'' if len(moved) == 1 else 's'} changed"
                  + (f": {shown}" + (" ..." if len(moved) > top else "") if moved else ""),
                  highlight=False, markup=False, soft_wrap=True)
