"""`ragmark simulate`: scenarios played by an LLM as the user against a system, written
as a conversation log every metric reads."""

from __future__ import annotations

from typing import Any

import click

from ragmark.cli.app import cli, consoles, data_options, history_options, quiet_option
from ragmark.cli.llm_opts import endpoint_options, llm_flags
from ragmark.cli.shared import option
from ragmark.errors import GateFailed
from ragmark.plan.simulate import SimulateRequest, execute_simulate, plan_simulate
from ragmark.report.simulation import simulation_lines


@cli.command("simulate")
@click.argument("scenarios", type=click.Path(exists=True, dir_okay=False))
@option("--config", "config", required=True, multiple=True)
@option("--corpus", type=click.Path(exists=True))
@click.option("--transcripts", required=True, type=click.Path(),
              help="Where the conversations are written, as a conversation log that "
                   "`ragmark run --outputs` scores (each turn a question); the turns are "
                   "journaled beside it as they finish (TRANSCRIPTS.journal), so a "
                   "killed simulation resumes.")
@click.option("--messages", type=click.Path(dir_okay=False),
              help="Also write each conversation as OpenAI chat messages (JSON Lines).")
@click.option("--concurrency", type=click.IntRange(min=1), default=2, show_default=True,
              help="Conversations played at the same time.")
@click.option("--simulator", metavar="MODEL[@URL]",
              help="The simulated user's model, at the judges' endpoint (--llm-*) or at "
                   "URL [default: the config's [simulator] table over the judges' "
                   "endpoint, else the judges' model].")
@click.option("--simulator-temperature", "temperature", type=click.FloatRange(min=0),
              help="The simulated user's sampling temperature [default: the "
                   "[simulator] table's, else 0].")
@option("--seed", type=int, default=0, show_default=True)
@option("--output", type=click.Path(dir_okay=False))
@option("--metrics")
@option("--fail-under", "fail_under", multiple=True, metavar="[CONFIG:]METRIC=V")
@click.option("--fresh", is_flag=True,
              help="Start over: forget the turns a journal holds from an earlier run.")
@data_options
@quiet_option
@history_options
@endpoint_options
def simulate_cmd(**flags: Any) -> None:
    """Play each scenario of SCENARIOS (JSON Lines: id, scenario, expected_outcome; user,
    facts, max_turns, ground_truth_contexts optional) with an LLM as the user against the
    system of --config (its [pipeline], or ragmark's own pipeline over --corpus), until
    the user says the goal is reached or gives up, or the scenario's turns run out; then
    judge each conversation (goal completion, knowledge retention); with --metrics,
    score every turn too, as run --outputs scores the transcripts. With several
    --config, each is played on the same scenarios, simulator and seed, and compared
    with the first, paired by scenario. Exit 0; 1 when a --fail-under gate fails; 2 on
    bad input or a dead endpoint."""
    out, progress = consoles(flags.pop("quiet"))
    plan = plan_simulate(SimulateRequest(**flags, llm_flags=llm_flags()))
    for w in plan.warnings:
        out.print(f"warning: {w}", highlight=False, markup=False, soft_wrap=True)
    report = execute_simulate(plan, progress)
    for line in simulation_lines(report):
        out.print(line, highlight=False, markup=False, soft_wrap=True)
    if report.get("history_id") is not None:
        out.print(f"Recorded in the run history as {report['history_id']} "
                  f"({plan.history})", highlight=False, markup=False, soft_wrap=True)
    failed = [g["text"] for g in report["gates"] if not g["ok"]]
    if failed:
        raise GateFailed(failed)
