"""`ragmark run`: one configuration on a dataset."""

from __future__ import annotations

from typing import Any

import click

from ragmark.cli.app import (
    alpha_option,
    cli,
    consoles,
    format_option,
    gate_options,
    quiet_option,
    renamed,
    trace_options,
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
from ragmark.report.console import print_report


@cli.command("run")
@option("--dataset", type=click.Path(exists=True))
@option("--outputs", "outputs", type=click.Path(exists=True))
@click.option("--traces", "traces", type=click.Path(exists=True),
              help="Score a system's OpenTelemetry traces instead: OTLP JSON (a file, .gz "
                   "or a folder; one trace a question, read with the OpenInference or "
                   "GenAI conventions); with --dataset, joined by id attribute, else "
                   "question text. Not with --config.")
@trace_options
@click.option("--run-file-in", "run_file_in", type=click.Path(exists=True, dir_okay=False),
              help="Score a TREC run file (qid Q0 docid rank score tag) against --dataset's "
                   "ground truth, as trec_eval would; retrieval metrics only.")
@option("--corpus", type=click.Path(exists=True))
@click.option("--split", default="test", show_default=True, help="BEIR qrels split.")
@option("--config", "config")
@option("--name", "name", metavar="NAME")
@option("--top-k", type=click.IntRange(min=1))
@click.option("--top-n", type=click.IntRange(min=1), help="Contexts passed to the generator.")
@option("--unit", type=click.Choice(["auto", "chunk", "document"]))
@option("--metrics", show_default="those the dataset allows")
@option("--max-queries", type=click.IntRange(min=1))
@option("--skip-generation", is_flag=True)
@option("--output", default="eval/results.json", show_default=True)
@click.option("--run-file", help="Also write a TREC run file (document level).")
@option("--include-details", is_flag=True)
@format_option("json")
@work_options
@click.option("--verbose", is_flag=True, help="Print per-query metrics.")
@quiet_option
@gate_options
@regression_options
@renamed("--baseline", "--against", metavar="REF")
@alpha_option("gate_alpha")
@scoring_options
def run_cmd(**flags: Any) -> None:
    """Evaluate one configuration on a dataset, or a system's logged outputs.

    Exit 0 when every metric asked for got a value for at least one question, 1 when a
    gate failed (--fail-under, --max-missing, --fail-on-regression, or a metric with no
    value at all), 2 on bad input or usage."""
    from ragmark.plan import RunRequest, estimate, execute, plan_run

    out, progress = consoles(flags.pop("quiet"))
    verbose = flags.pop("verbose")
    req = request_of(RunRequest, flags)
    plan = start(plan_run(req))
    if req.dry_run:
        text = dry_run_text({"run": estimate(plan, progress)["run"]})
        out.print(text, highlight=False, soft_wrap=True)
        return
    outcome = execute(plan, progress)
    print_report(outcome.report, out, verbose=verbose)
    show_outcome(out, outcome)
