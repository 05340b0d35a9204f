"""`ragmark compare`: several configurations on the same questions."""

from __future__ import annotations

import functools
from typing import Any

import click

from ragmark.cli.app import (
    alpha_option,
    cli,
    configs_options,
    consoles,
    format_option,
    gate_options,
    quiet_option,
)
from ragmark.cli.ci import (
    regression_options,
    request_of,
    scoring_options,
    show_outcome,
    start,
    work_options,
)
from ragmark.cli.llm_opts import dry_run_text
from ragmark.cli.shared import option


@cli.command("compare")
@functools.partial(configs_options, default=(), default_help="dense sparse hybrid, or "
                   "sparse without the dense extra")
@click.option("--baseline", help="Config the others are compared against (default: first).")
@option("--outputs", "outputs", multiple=True, type=click.Path(exists=True,
                                                               dir_okay=False))
@option("--metrics", show_default="MRR, Recall@5, Hit@5, Precision@5, nDCG@10 compared; "
        "with 'all', every metric computed and those compared")
@option("--top-k", type=click.IntRange(min=1))
@option("--max-queries", type=click.IntRange(min=1))
@option("--skip-generation", is_flag=True)
@click.option("--test", "test", type=click.Choice(["permutation", "t"]), default="permutation",
              show_default=True, help="Paired significance test.")
@alpha_option()
@click.option("--correction", type=click.Choice(["per-metric", "all", "none"]),
              default="per-metric", show_default=True,
              help="Holm families: one per metric (each config against the baseline on it), "
                   "one of every comparison, or none.")
@option("--resamples", type=click.IntRange(min=100), default=10_000, show_default=True)
@option("--seed", type=int, default=0, show_default=True)
@click.option("--rank-against", type=click.Path(exists=True, dir_okay=False),
              metavar="FILE",
              help="A published table of run-level scores (a run id and its score a line): "
                   "Kendall's tau, with its interval, between the compared systems' "
                   "ranking on each compared metric and the file's.")
@option("--pairwise", metavar="CRITERIA")
@option("--pairwise-orders", type=click.IntRange(1, 2), default=2, show_default=True)
@option("--pairwise-rubric", multiple=True, metavar="NAME=TEXT")
@option("--output", default="results/eval.json", show_default=True)
@quiet_option
@option("--include-details", is_flag=True)
@format_option("json,md")
@work_options
@gate_options
@regression_options
@scoring_options
@click.argument("more_configs", nargs=-1)
def compare_cmd(**flags: Any) -> None:
    """Run several configurations on the same questions and compare them.

    Writes the JSON report at --output (per config: metrics, intervals, per-query
    values, timings; every comparison with its p-value) and its Markdown beside it, and
    prints the table. With --pairwise, a judge also says which of every two configs'
    answers is better (win rates, sign tests, the position bias, and with three configs
    or more the win matrix and Bradley-Terry strengths). Exit 1 when a gate fails
    (--fail-under, --max-missing, --fail-on-regression, a metric with no value at all in
    a config, or a config whose every question failed).
    """
    from ragmark.plan import CompareRequest, estimate, execute, plan_compare

    out, progress = consoles(flags.pop("quiet"))
    flags["configs"] = (*flags["configs"], *flags.pop("more_configs"))
    req = request_of(CompareRequest, flags)
    plan = start(*plan_compare(req))
    if req.dry_run:
        out.print(dry_run_text(estimate(plan, progress)), highlight=False, soft_wrap=True)
        return
    outcome = execute(plan, progress)
    out.print(outcome.markdown, markup=False, highlight=False, soft_wrap=True)
    show_outcome(out, outcome)
