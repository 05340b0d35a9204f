"""`ragmark duel`: which of two systems answers better, by a pairwise judge."""

from __future__ import annotations

from typing import Any

import click

from ragmark.cli.app import cli, consoles, dry_run_option, quiet_option
from ragmark.cli.llm_opts import endpoint_options
from ragmark.cli.shared import option


@cli.command("duel")
@click.argument("files", nargs=-1, required=True, metavar="A B [MORE]...",
                type=click.Path(exists=True, dir_okay=False))
@click.option("--pairwise", default="overall", show_default=True, metavar="CRITERIA",
              help="Comma-separated criteria: overall, correctness (against the reference "
              "answer), completeness, faithfulness (each answer against its own contexts).")
@click.option("--pairwise-orders", "orders", type=click.IntRange(1, 2), default=2,
              show_default=True, help="2: ask the judge with each answer first (a verdict "
              "that flips counts as a tie); 1: one order per question, drawn from --seed "
              "(half the calls).")
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
    from ragmark.cli.llm_opts import dry_run_text, llm_flags
    from ragmark.plan.duel import DuelRequest, duel_lines, estimate_duel, execute_duel, plan_duel

    out, progress = consoles(flags.pop("quiet"))
    plan = plan_duel(DuelRequest(**flags, llm_flags=llm_flags()))
    if plan.dry_run:
        out.print(f"dry run: {len(plan.pairs)} pairs x {len(plan.criteria)} criteria x "
                  f"{plan.orders} orders\n" + dry_run_text({"duel": estimate_duel(plan)}),
                  highlight=False, markup=False, soft_wrap=True)
        return
    for line in duel_lines(execute_duel(plan, progress)):
        out.print(line, highlight=False, markup=False, soft_wrap=True)
    if plan.output is not None:
        out.print(f"Report written to {plan.output}", markup=False)
