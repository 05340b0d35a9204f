"""`ragmark review`: a sample of answers for people to label, and their agreement with
the judge."""

from __future__ import annotations

import json
from pathlib import Path

import click

from ragmark.analysis.review import (
    ask,
    kappa_band,
    read_agreement,
    sample_for_review,
    write_review_csv,
)
from ragmark.cli.app import cli, config_name_option, consoles, renamed, takes_renamed
from ragmark.cli.shared import option
from ragmark.errors import ConfigError
from ragmark.plan.paths import check_output
from ragmark.text import article


@cli.group("review")
def review_group() -> None:
    """Check the judge against people: export a sample, then measure agreement."""


@review_group.command("export")
@click.argument("results", type=click.Path(dir_okay=False))
@click.option("--rows", "n", type=click.IntRange(min=1), callback=takes_renamed("--rows"),
              help="Number of rows to draw (all of them if fewer). Required.")
@renamed("--sample", "--rows", type=click.IntRange(min=1))
@option("--seed", type=int, default=0, show_default=True)
@option("--metric")
@config_name_option
@option("--output", required=True, type=click.Path(dir_okay=False))
@option("--overwrite", is_flag=True)
def export_cmd(results: str, n: int, seed: int, metric: str | None, config: str | None,
               output: str, overwrite: bool) -> None:
    """Write a CSV of sampled answers (or labelled passages) for annotators, with an
    empty `human` column.

    RESULTS is the JSON of `ragmark run --include-details` (one row per answer) or of
    `ragmark label` (one row per labelled passage).
    """
    if n is None:
        raise click.UsageError("Missing option '--rows'.")
    if Path(output).exists() and not overwrite:
        raise ConfigError(f"{output} exists (it may hold annotations); choose another "
                          "--output or pass --overwrite")
    check_output(output, "--output")
    got = sample_for_review(results, n, seed, metric, config)

    path = write_review_csv(got.rows, output)
    out, _ = consoles(quiet=True)
    left = "".join(f"; left out: {k} {v}" for k, v in got.left_out.items())
    out.print(f"Wrote {len(got.rows)} {got.unit} to {path} (judge column: {got.metric}, "
              f"{got.source}; drawn with seed {seed} from the {got.eligible} {got.unit} "
              f"with {article(got.metric)} value{left}).", soft_wrap=True, markup=False)
    question = ask(got.metric)
    out.print(f"Fill in the `human` column with yes or no ({question}) without looking at "
              f"the `judge` column, then run: ragmark review agreement {path}",
              soft_wrap=True, markup=False)


@review_group.command("agreement")
@click.argument("file", type=click.Path(dir_okay=False))
@option("--threshold", type=click.FloatRange(0, 1), default=0.5, show_default=True)
@option("--json", "as_json", is_flag=True)
def agreement_cmd(file: str, threshold: float, as_json: bool) -> None:
    """Raw agreement and Cohen's kappa between the `human` and `judge` columns of FILE."""
    a = read_agreement(file, threshold)
    if as_json:
        click.echo(json.dumps(a.to_json(), indent=2, ensure_ascii=False))
        return
    out, _ = consoles(quiet=True)
    what = ", ".join(a.metrics) or "the judge"
    out.print(f"Human labels against {what} in {a.path}: {a.n} rows labelled by both",
              soft_wrap=True, markup=False)
    if a.raw is not None:
        out.print(f"  raw agreement  {a.raw:.3f} ({a.agree} of {a.n})", markup=False)
    k = a.kappa
    kappa = (f"{k.value:.3f} ({kappa_band(k.value)})" if k.value is not None
             else f"missing: {k.reason}")
    out.print(f"  Cohen's kappa  {kappa}", soft_wrap=True, markup=False)
    out.print(f"  rows skipped   {a.skipped_no_human} with an empty human cell, "
              f"{a.skipped_no_judge} without a judge value", markup=False)
    out.print(f"  scores between 0 and 1 count as yes when at least {a.threshold:g}",
              markup=False)
    for h in ("human yes", "human no"):
        row = a.confusion.get(h, {})
        out.print(f"  {h:<9}  judge yes {row.get('judge yes', 0):>4}   judge no "
                  f"{row.get('judge no', 0):>4}", markup=False)
