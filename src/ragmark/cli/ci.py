"""What `run` and `compare` share on the command line: the regression gate's flags, the
request made of the flags, and how a plan's outcome is shown (the files written, the
history record, the gates; exit 1 when a condition failed)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import click
from rich.console import Console

from ragmark.analysis.gates import check
from ragmark.analysis.human_labels import corrected_lines
from ragmark.cli.app import (
    data_options,
    dry_run_option,
    executor_options,
    history_options,
    index_cache_option,
    input_format_option,
    language_option,
    latency_option,
    mean_option,
    nuggets_option,
    qrels_extra_option,
    refusal_option,
    search_tool_option,
    takes_renamed,
    warn_data,
    written_text,
)
from ragmark.cli.llm_opts import llm_flags, llm_options
from ragmark.cli.shared import option
from ragmark.text import visible


def regression_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--fail-on-regression``, ``--against``, ``--margin``, ``--junit``: the
    regression gate of run and compare (``--alpha`` is the command's own)."""
    opts = [
        option("--fail-on-regression", "regression", metavar="METRIC[,METRIC]"),
        click.option("--against", "against", metavar="REF", callback=takes_renamed(
                         "--against"),
                     help="The results to gate against: a results file (of run or "
                          "compare), a history id, or last, the newest recorded run of each "
                          "config on this dataset (the default)."),
        option("--margin", type=click.FloatRange(min=0), default=0.0, show_default=True),
        option("--junit", "junit", metavar="FILE"),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def repeat_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--judge-repeats`` and ``--judge-temperature``: each judge asked several times,
    its noise measured; ``--judge-llm``: a jury."""
    opts = [
        click.option("--judge-repeats", type=click.IntRange(min=1), default=1,
                     show_default=True,
                     help="Ask every judge call N times (other seeds, at "
                          "--judge-temperature): each value is the mean of N, and each "
                          "judge metric's own noise is reported beside the spread between "
                          "questions; the regression gate does not call a drop within that "
                          "noise a regression."),
        click.option("--judge-temperature", type=click.FloatRange(min=0, min_open=True),
                     help="The judge's sampling temperature of the repeats [default: 0.7]."),
        click.option("--judge-llm", "judge_llms", multiple=True, metavar="MODEL[@URL]",
                     help="A juror: repeat the flag for a jury of judge models (at the "
                          "judges' endpoint, or at URL). Each judge metric is asked of "
                          "every juror: its value is their mean, their agreement "
                          "(Krippendorff's alpha) is reported, a juror that fails is left "
                          "out with its reason."),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def scoring_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """The flags run and compare share for how every config is read and scored: the
    data's (encoding, strictness, input format, language, extra qrels, nuggets), the
    retrieval means, the refusal patterns, the history, the LLM endpoint, the dry run."""
    for decorate in (dry_run_option, repeat_options, llm_options, history_options,
                     refusal_option,
                     search_tool_option, mean_option, nuggets_option, qrels_extra_option,
                     language_option, input_format_option, data_options):
        f = decorate(f)
    return f


def work_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """The flags run and compare share for how the work is done: the index cache, the
    latency sample, the executor."""
    for decorate in (executor_options, latency_option, index_cache_option):
        f = decorate(f)
    return f


def request_of(cls: type[Any], flags: dict[str, Any]) -> Any:
    """The command's request: its flags (named as the request's fields), the
    ``--llm-*`` flags, and the step summary a command line run appends to."""
    return cls(**flags, llm_flags=llm_flags(), step_summary=True)


def start(plan: Any, told: Sequence[str] = ()) -> Any:
    """Before a plan runs: its executor is closed when the command ends, and what the
    loaders let through and the notes on the choices made are told on stderr."""
    if plan.executor is not None:
        click.get_current_context().call_on_close(plan.executor.close)
    warn_data(plan.dataset.warnings)
    for note in told:
        click.echo(visible(f"note: {note}"), err=True)
    return plan


def show_outcome(out: Console, outcome: Any) -> None:
    """After a plan ran: the human labels' corrections, the files written, the history
    record, the regression gates; then exit 1 (GateFailed) when a condition failed."""
    reports = getattr(outcome.result, "reports", None)
    for name, rep in (reports or {"": outcome.result}).items():
        for line in corrected_lines(rep.corrected):
            out.print(f"{name}: {line}" if name else line, highlight=False, soft_wrap=True)
    out.print(written_text(outcome.written))
    if outcome.trec_path is not None:
        out.print(f"TREC run written to {outcome.trec_path}")
    if outcome.run_id is not None:
        out.print(f"Recorded in the run history as {outcome.run_id} "
                  f"({outcome.history})", highlight=False)
    for line in outcome.gate_lines:
        out.print(line, highlight=False, markup=False, soft_wrap=True)
    if outcome.junit_path is not None:
        out.print(f"JUnit XML written to {outcome.junit_path}", highlight=False)
    check(outcome.conditions)
