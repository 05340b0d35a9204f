"""`ragmark duel`: which of two systems answers better, by a pairwise judge."""

from __future__ import annotations

from typing import Any

import click

from ragmark.analysis.gates import Condition, check
from ragmark.cli.app import (
    alpha_option,
    cli,
    consoles,
    dry_run_option,
    print_report,
    quiet_option,
)
from ragmark.cli.llm_opts import dry_run_text, endpoint_options, llm_flags
from ragmark.cli.shared import option
from ragmark.plan.duel import DuelRequest, estimate_duel, execute_duel, plan_duel
from ragmark.report.round_robin import pairwise_lines


@cli.command("duel")
@click.argument("files", nargs=-1, required=True, metavar="A B [MORE]...",
                type=click.Path(exists=True, dir_okay=False))
@option("--pairwise", default="overall", show_default=True, metavar="CRITERIA")
@option("--pairwise-orders", "orders", type=click.IntRange(1, 2), default=2,
        show_default=True)
@option("--pairwise-rubric", multiple=True, metavar="NAME=TEXT")
@option("--fail-on-regression", "regression", metavar="pairwise:CRITERION[,...]")
@alpha_option()
@option("--seed", type=int, default=0, show_default=True)
@option("--resamples", type=click.IntRange(min=100), default=2000, show_default=True)
@option("--output", type=click.Path(dir_okay=False))
@dry_run_option
@quiet_option
@endpoint_options
def duel_cmd(**flags: Any) -> None:
    """Judge A's answers against B's, question by question (results files of `ragmark
    run --include-details` over the same questions): wins, ties and losses, A's win
    rate with its interval, the sign test, and the judge's position bias; with three
    files or more, every two of them and their Bradley-Terry strengths."""
    out, progress = consoles(flags.pop("quiet"))
    plan = plan_duel(DuelRequest(**flags, llm_flags=llm_flags()))
    if plan.dry_run:
        t = plan.tournament
        out.print(f"dry run: {len(t.pairs)} pairs x {len(t.criteria)} criteria x "
                  f"{t.orders} orders\n" + dry_run_text({"duel": estimate_duel(plan)}),
                  highlight=False, markup=False, soft_wrap=True)
        return
    report = execute_duel(plan, progress)
    print_report(out, pairwise_lines(report), plan.output)
    gates = report.get("gates") or []
    for g in gates:
        out.print(g["line"], highlight=False, markup=False, soft_wrap=True)
    check([Condition(g["condition"], g["passed"], g["line"]) for g in gates])
