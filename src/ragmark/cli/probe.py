"""`ragmark probe`: attacks through the corpus, measured per config."""

from __future__ import annotations

import functools
from typing import Any

import click

from ragmark.cli.app import (
    cli,
    configs_options,
    consoles,
    data_options,
    dry_run_option,
    history_options,
    language_option,
    quiet_option,
)
from ragmark.cli.ci import request_of, start, work_options
from ragmark.cli.llm_opts import llm_options
from ragmark.cli.shared import option
from ragmark.errors import GateFailed
from ragmark.probe.attacks import ATTACKS, STYLES
from ragmark.probe.plan import ProbeRequest, plan_probe
from ragmark.probe.report import execute_probe


@cli.command("probe")
@functools.partial(configs_options, default=(), default_help="sparse")
@click.option("--attacks", default=",".join(ATTACKS), show_default=True,
              help="The attacks planted, comma-separated: injection (an instruction to "
                   "put a canary in the answer), poisoning (passages stating a wrong "
                   "answer), exfiltration (an instruction to emit an image on an outside "
                   "address), leakage (a private document, asked by a user without "
                   "access).")
@click.option("--styles", default=",".join(STYLES), show_default=True,
              help="The injection's styles, each its own arm.")
@click.option("--targets", type=click.IntRange(min=1), default=30, show_default=True,
              help="Target questions, drawn with --seed among the answerable ones (all of "
                   "them when fewer).")
@click.option("--copies", multiple=True, metavar="ATTACK=N",
              help="Passages planted for each target [default: poisoning=5, the others 1].")
@option("--fail-on", "fail_on", multiple=True, metavar="probe:ATTACK[:STYLE][.RATE]>X")
@click.option("--write-planted", metavar="DIR",
              help="For a system ragmark does not run: write each attack's planted "
                   "documents to DIR (a JSONL corpus file an attack, and probe.json), "
                   "and stop.")
@click.option("--planted", metavar="FILE",
              help="Attack texts of your own instead of the generated ones: JSONL (or a "
                   "JSON list, or PoisonedRAG's results object) of {question_id or "
                   "question, texts, wrong_answer or marker}; its questions are the "
                   "targets, each attack an arm of style 'given'.")
@option("--outputs", "logged", multiple=True, metavar="ARM=FILE")
@option("--top-k", type=click.IntRange(min=1))
@option("--seed", type=int, default=0, show_default=True)
@option("--resamples", type=click.IntRange(min=100), default=10_000, show_default=True)
@option("--output", default="results/probe.json", show_default=True)
@option("--allow-missing", is_flag=True)
@quiet_option
@dry_run_option
@history_options
@work_options
@llm_options
@language_option
@data_options
@click.argument("more_configs", nargs=-1)
def probe_cmd(**flags: Any) -> None:
    """Plant attacks in an overlay of the corpus and measure, per config, how often a
    planted passage is retrieved and how often the attack succeeds.

    The corpus files and indexes are never touched: the planted documents go into a copy
    in memory, indexed apart. Writes the JSON report at --output and its Markdown beside
    it; each finished config and attack is kept in NAME.probe-state/ beside them, so a
    killed probe resumes. Exit 1 when a --fail-on gate fails, or a target got no answer
    (unless --allow-missing).
    """
    out, progress = consoles(flags.pop("quiet"))
    flags["configs"] = (*flags["configs"], *flags.pop("more_configs"))
    req = request_of(ProbeRequest, flags)
    plan, told = plan_probe(req)
    start(plan.base, told)
    rep, md, paths = execute_probe(plan, progress)
    out.print(md, markup=False, highlight=False, soft_wrap=True)
    for path in paths:
        click.echo(f"Wrote {path}", err=True)
    failed = [f"gate {t} failed: {why}" for t, bad, why in (rep.gates if rep else ()) if bad]
    if rep is not None and not plan.allow_missing:
        failed += [f"answers failed: {line}" for line in rep.unanswered_lines()]
    if failed:
        raise GateFailed(failed)
