"""`ragmark compare`: several configurations on the same questions."""

from __future__ import annotations

import functools
from typing import Any

import click

from ragmark.cli.app import (
    cli,
    configs_options,
    consoles,
    data_options,
    executor_options,
    format_option,
    gate_options,
    history_options,
    index_cache_option,
    input_format_option,
    language_option,
    latency_option,
    mean_option,
    qrels_extra_option,
    quiet_option,
    refusal_option,
)
from ragmark.cli.ci import request_of, show_outcome, start
from ragmark.cli.llm_opts import dry_run_text, llm_options


@cli.command("compare")
@functools.partial(configs_options, default=(), default_help="dense sparse hybrid, or "
                   "sparse without the dense extra")
@click.option("--baseline", help="Config the others are compared against (default: first).")
@click.option("--metrics", help="Comma-separated metrics to compare (default: MRR, Recall@5, "
              "Hit@5, Precision@5, nDCG@10), or 'all': every metric whose needs are met is "
              "computed, the default ones compared.")
@click.option("--top-k", type=click.IntRange(min=1), help="Items retrieved per question.")
@click.option("--max-queries", type=click.IntRange(min=1), help="Evaluate the first N only.")
@click.option("--skip-generation", is_flag=True, help="Retrieval only: no answers.")
@click.option("--test", "test", type=click.Choice(["permutation", "t"]), default="permutation",
              show_default=True, help="Paired significance test.")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True),
              default=0.05, show_default=True, help="Significance level (after Holm).")
@click.option("--correction", type=click.Choice(["per-metric", "all", "none"]),
              default="per-metric", show_default=True,
              help="Holm families: one per metric (each config against the baseline on it), "
                   "one of every comparison, or none.")
@click.option("--resamples", type=click.IntRange(min=100), default=10_000, show_default=True,
              help="Bootstrap and permutation resamples.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the resampling: reruns print the same numbers.")
@click.option("--output", default="results/eval", show_default=True,
              help="Writes {output}.json and {output}.md; DIR/ writes DIR/eval.json and "
                   "DIR/eval.md.")
@quiet_option
@click.option("--include-details", is_flag=True,
              help="Per-question records (retrieved items, answers, missing reasons) of "
                   "every config in the JSON, so 'ragmark inspect' works fully on it.")
@format_option("json,md")
@index_cache_option
@latency_option
@executor_options
@gate_options
@click.option("--fail-on-regression", "regression", metavar="METRIC[,METRIC]",
              help="Exit 1 when a config is significantly worse on a metric than its own "
                   "newest recorded run on this dataset (paired test, Holm over these "
                   "metrics, --alpha); a config without one is not gated.")
@click.option("--against", "against", metavar="REF",
              help="The earlier results to gate each config against (with "
                   "--fail-on-regression): a compare or run file, a history id, or last "
                   "(the default: each config's own newest recorded run).")
@click.option("--margin", type=click.FloatRange(min=0), default=0.0, show_default=True,
              help="Fail only on drops larger than this.")
@click.option("--junit", "junit", metavar="FILE",
              help="Write every gate condition as JUnit XML (one test case each).")
@data_options
@input_format_option
@language_option
@qrels_extra_option
@mean_option
@refusal_option
@history_options
@llm_options
@click.option("--dry-run", is_flag=True,
              help="Count each config's judge calls, tokens and cost without calling anything.")
@click.argument("more_configs", nargs=-1)
def compare_cmd(**flags: Any) -> None:
    """Run several configurations on the same questions and compare them.

    Writes {output}.json (per config: metrics, intervals, per-query values, timings;
    every comparison with its p-value) and {output}.md, and prints the table. Exit 1
    when a gate fails (--fail-under, --max-missing, a metric with no value at all in a
    config, or a config whose every question failed).
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
