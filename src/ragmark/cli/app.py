"""The click group and the consoles every command prints through."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable
from typing import Any

import click
from rich.console import Console

from ragmark.cli.lazy_group import Commands
from ragmark.cli.shared import option
from ragmark.data.formats import names, writable
from ragmark.data.leniency import Leniency
from ragmark.errors import ConfigError
from ragmark.progress import NullProgress
from ragmark.text import visible
from ragmark.versions import VERSION as __version__

PROGRESS_EVERY = "RAGMARK_PROGRESS_EVERY"
"""Seconds between plain progress lines when stderr is not a terminal (default 5)."""


class _StatusLines(logging.Handler):
    """Status lines (``ragmark.status``: a batch job submitted, polled) on the stderr of
    the moment, prefixed ``ragmark:``."""

    def emit(self, record: logging.LogRecord) -> None:
        sys.stderr.write(f"ragmark: {record.getMessage()}\n")
        sys.stderr.flush()


def _status_lines(quiet: bool) -> None:
    """Show the status lines of long work on stderr, or nothing with ``--quiet``."""
    log = logging.getLogger("ragmark.status")
    if not any(isinstance(h, _StatusLines) for h in log.handlers):
        log.addHandler(_StatusLines())
        log.propagate = False
    log.setLevel(logging.WARNING if quiet else logging.INFO)


def consoles(quiet: bool) -> tuple[Console, Any]:
    """stdout console and a progress object: rich bars on a terminal, plain lines every
    few seconds without one (CI logs), nothing with ``--quiet``."""
    from ragmark.report.progress_bars import PlainProgress, RichProgress
    from ragmark.report.terminal import SafeConsole

    # texts as they are (no markup), their control characters made visible
    out = SafeConsole(highlight=False, markup=False)
    err = SafeConsole(stderr=True)
    _status_lines(quiet)
    progress: Any
    if quiet:
        progress = NullProgress()
    elif err.is_terminal:
        progress = RichProgress(err)
    else:
        try:
            every = float(os.environ.get(PROGRESS_EVERY, "") or 5.0)
        except ValueError:
            raise ConfigError(f"{PROGRESS_EVERY}: expected seconds, got "
                              f"{os.environ[PROGRESS_EVERY]!r}") from None
        progress = PlainProgress(every=every)
    return out, progress


@click.group(cls=Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ragmark")
def cli() -> None:
    """ragmark: measure how well a RAG pipeline works, exactly and offline."""


def configs_options(f: Callable[..., Any], default: tuple[str, ...] = ("sparse",),
                    default_help: str = "sparse") -> Callable[..., Any]:
    """``--dataset``, ``--corpus``, ``--split`` and ``--configs``: the options of the
    commands that run several configs on one dataset (compare, label)."""
    opts = [
        option("--dataset", required=True, type=click.Path(exists=True)),
        option("--corpus", type=click.Path(exists=True)),
        click.option("--split", default="test", show_default=True, help="BEIR qrels split."),
        click.option("--configs", "configs", multiple=True, default=list(default),
                     show_default=default_help,
                     help="Config names (sparse, dense, dense-api, hybrid, hybrid-rerank) or TOML "
                          "files; repeat, or list them after the flag."),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def gate_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--fail-under``, ``--max-missing``, ``--allow-missing`` and
    ``--allow-short-rankings``: the gates of run and compare."""
    opts: list[Callable[[Callable[..., Any]], Any]] = [
        option("--fail-under", "fail_under", multiple=True, metavar="[CONFIG:]METRIC=V"),
        click.option("--max-missing", "max_missing", multiple=True,
                     metavar="[CONFIG:]METRIC=F",
                     help="Exit 1 when more than the fraction F of the questions have no "
                          "value of the metric; repeatable."),
        option("--allow-missing", is_flag=True),
        click.option("--allow-short-rankings", is_flag=True,
                     help="Compute metrics whose cutoff exceeds top_k anyway (marked in "
                          "every output) instead of refusing them."),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def data_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--strict`` and ``--encoding``: how the loaders treat odd data."""
    opts = [
        click.option("--strict", is_flag=True,
                     help="Make every data warning an error (empty documents, integer ids, "
                          "grades written 1.0, judged documents missing from the corpus, "
                          "files that are not UTF-8, ...)."),
        click.option("--encoding", metavar="NAME",
                     help="Encoding of input files that are not UTF-8 (e.g. cp1252); "
                          "without it such a corpus file is skipped with a warning."),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def quiet_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--quiet`` / ``-q``: no progress bars or status lines (the same flag on every
    command); what the command reports still prints."""
    return click.option("--quiet", "-q", is_flag=True,
                        help="No progress bars or status lines (the report, warnings "
                             "and errors still print).")(f)


def trace_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """How traces are read (``run --traces``, ``monitor``): ``--trace-attribute``,
    ``--root-name``, ``--root-kind``."""
    opts = [
        click.option(
            "--trace-attribute", "trace_attributes", multiple=True, metavar="ROLE=NAME",
            help="For traces: the root-span attribute that names a question's id "
                 "(id=NAME; default ragmark.sample_id; joins --dataset by id), the attribute "
                 "or event that carries the user's feedback (feedback=NAME; default "
                 "feedback, user.feedback, feedback.score), the retrieved documents' "
                 "metadata key that names the document they came from (document_id=KEY; "
                 "default doc_id, ref_doc_id, file_name) or holds their score "
                 "(document_score=KEY; default score, relevance_score). Repeatable."),
        click.option("--root-name", "root_names", multiple=True, metavar="NAME",
                     help="For traces: only traces whose root span has this name are "
                          "questions (repeatable; default: every trace with a retriever or "
                          "LLM span)."),
        click.option("--root-kind", "root_kinds", multiple=True, metavar="KIND",
                     help="For traces: only traces whose root span is of this OpenInference "
                          "kind (CHAIN, AGENT, LLM, ...) are questions (repeatable)."),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def search_tool_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--search-tool NAME``: an agent's tool whose calls are its retrieval."""
    return click.option(
        "--search-tool", "search_tools", multiple=True, metavar="NAME",
        help="For logged agents (log lines with messages or tool_calls, or traces): the "
             "tool whose calls are the agent's retrieval; each call is a hop, its "
             "documents read from its result (a JSON list of texts or of objects with a "
             "text and an id, else the whole result), so the retrieval metrics apply per "
             "call and over them all. In a trace with retriever spans, those are the "
             "retrieval. Repeatable.")(f)


def mean_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--mean relevant|trec_eval``: which questions a retrieval metric's mean is over."""
    return click.option(
        "--mean", "mean", type=click.Choice(["relevant", "trec_eval"]), default="relevant",
        show_default=True,
        help="Retrieval means over the questions with a relevant document (relevant; the "
             "others are counted as missing), or, as trec_eval, over every question the "
             "qrels judge, one without a relevant document scoring 0.")(f)


class FormatChoice(click.Choice):  # type: ignore[type-arg]
    """The input formats' names (:mod:`ragmark.data.formats`: ragmark's own and one
    module a format), read when the option is parsed or its help is shown; ``writing``:
    only those a test set can be written in."""

    def __init__(self, writing: bool = False) -> None:
        super().__init__([])
        self.writing = writing

    @property  # type: ignore[override]
    def choices(self) -> tuple[str, ...]:
        return writable() if self.writing else names()

    @choices.setter
    def choices(self, value: Any) -> None:
        pass


def input_format_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--input-format NAME``: read --dataset / --outputs as that format."""
    return click.option(
        "--input-format", type=FormatChoice(),
        help="Read --dataset / --outputs as this format instead of telling it from the "
             "fields: ragmark's own, or another tool's (a RAGAS dataset, DeepEval goldens "
             "or test cases, a LlamaIndex LabelledRagDataset, ...).")(f)


def language_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--language LANG``: the data's language, for every config; and
    ``--context-match RULE``: how contexts match ground-truth passages."""
    f = click.option(
        "--context-match", metavar="RULE",
        help="How a retrieved context matches a ground-truth passage, for every config: "
             "contains (one text holds the other; the default) or similarity:T (string "
             "similarity at least T, as RAGAS's non-LLM context recall and precision: "
             "similarity:0.5). Recorded in the config.")(f)
    return option("--language", metavar="LANG")(f)


def refusal_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--refusal-pattern REGEX``: what else counts as a refusal (repeatable);
    ``--refusal-judge``: an LLM judge decides instead."""
    f = click.option(
        "--refusal-judge", is_flag=True,
        help="An LLM judge decides which answers decline the question (for refusal and "
             "the abstention metrics), instead of the phrases and patterns; needs an LLM "
             "endpoint. Config: refusal_judge = true.")(f)
    return click.option(
        "--refusal-pattern", "refusal_patterns", multiple=True, metavar="REGEX",
        help="A regular expression (case-insensitive) that marks an answer as a refusal, "
             "besides the default phrases (\"I don't know\", \"cannot answer\", ...) and "
             "an empty answer; for refusal and the abstention metrics. Repeatable.")(f)


def qrels_extra_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--qrels-extra FILE``: LLM judgments of an extended qrels file (``label --pool``)
    added where the dataset's qrels have none."""
    return click.option(
        "--qrels-extra", type=click.Path(exists=True, dir_okay=False),
        help="An extended qrels file from `ragmark label --pool`: its LLM judgments are "
             "added for the documents the dataset's qrels do not judge.")(f)


def nuggets_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--nuggets FILE``: the questions' nuggets, for the nugget metrics."""
    return click.option(
        "--nuggets", type=click.Path(exists=True, dir_okay=False), metavar="FILE",
        help="Each question's nuggets for the nugget metrics (JSONL, one question a line: "
             "{qid, nuggets: [{text, importance}]}, as TREC RAG and nuggetizer write them, "
             "and as a run writes them beside its results): used instead of creating them, "
             "so that every system is scored against the same nuggets.")(f)


def leniency(strict: bool, encoding: str | None) -> Any:
    return Leniency(strict=strict, encoding=encoding)


def warn_data(warnings: Any, quiet: bool = False) -> None:
    """Print what the loaders let through, one line per kind, on stderr."""
    if quiet:
        return
    for w in warnings:
        click.echo(visible(f"warning: {w}"), err=True)


def history_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--history PATH``: the run history a command records in or reads."""
    return click.option("--history", "history", metavar="PATH",
                        help="The run history (default: $RAGMARK_HISTORY, else "
                             ".ragmark/history.sqlite in the current folder).")(f)


def history_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--history PATH`` and ``--no-history``: where the run is recorded."""
    f = click.option("--no-history", is_flag=True, help="Do not record this run.")(f)
    return history_option(f)


def dry_run_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--dry-run``: say what would be done, do nothing (the same flag on every
    command that calls a model or changes a store)."""
    return click.option("--dry-run", is_flag=True,
                        help="Say what the command would do (the model calls, tokens and "
                             "cost it would spend, or what it would change) and do "
                             "nothing: nothing is called, written or recorded.")(f)


def alpha_option(dest: str = "alpha") -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--alpha``: the significance level of a command's tests and gate."""
    return click.option("--alpha", dest, type=click.FloatRange(0, 1, min_open=True,
                                                                max_open=True),
                        default=0.05, show_default=True,
                        help="Significance level of the tests and the gate (family-wise, "
                             "after Holm).")


_RENAMED = "ragmark.renamed"


def renamed(old: str, new: str, **kw: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A hidden option ``old`` standing for the option ``new`` (declared with
    :func:`takes_renamed`) for one release: its value goes to ``new`` with a note on
    stderr that the name changed."""
    def keep(ctx: click.Context, param: click.Parameter, value: Any) -> None:
        if value is None or value is False or value == ():
            return
        click.echo(f"warning: {old} is renamed {new}; the old name goes in the next "
                   "release", err=True)
        ctx.meta.setdefault(_RENAMED, {})[new] = value

    # a name of its own: the new option's value is not the old one's (``--config-name``
    # keeps its value under ``config``, which an unnamed ``--config`` would read too)
    dest = "renamed_" + old.lstrip("-").replace("-", "_")
    return click.option(old, dest, expose_value=False, hidden=True, callback=keep, **kw)


def takes_renamed(new: str, default: Any = None
                  ) -> Callable[[click.Context, click.Parameter, Any], Any]:
    """The callback of option ``new`` (declared without a default): its value, else the
    value given to its old name, else ``default``."""
    def value(ctx: click.Context, param: click.Parameter, got: Any) -> Any:
        if got is not None:
            return got
        return ctx.meta.get(_RENAMED, {}).get(new, default)

    return value


def config_name_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--config-name NAME``: a config of a results file or the history, into
    ``config`` (its old name ``--config``, hidden, for one release)."""
    f = renamed("--config", "--config-name")(f)
    return option("--config-name", "config", callback=takes_renamed("--config-name"))(f)


def format_option(default: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--format json,md,...``: the writers to write the results with."""
    return click.option("--format", "formats", metavar="LIST", show_default=default,
                        help="Comma-separated output formats: json, md, trec, csv, html, "
                             "or a plugin's writer.")


def print_report(out: Console, lines: Any, output: Any) -> None:
    """A report's console lines as they are (no markup), then where it was written."""
    for line in lines:
        out.print(line, highlight=False, markup=False, soft_wrap=True)
    if output is not None:
        out.print(f"Report written to {output}", markup=False)


def written_text(paths: Any) -> str:
    """``Results written to a and b`` / ``a, b and c``."""
    names = [str(p) for p in paths]
    if len(names) <= 1:
        return f"Results written to {''.join(names)}"
    return f"Results written to {', '.join(names[:-1])} and {names[-1]}"


def index_cache_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--no-index-cache``: rebuild the index and save nothing."""
    return click.option("--no-index-cache", is_flag=True,
                        help="Rebuild the index instead of loading a saved one (and save "
                             "nothing under RAGMARK_HOME/indexes).")(f)


def latency_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--latency-sample N``: questions retrieved one at a time to time them."""
    return click.option("--latency-sample", type=click.IntRange(min=1), default=100,
                        show_default=True,
                        help="Questions retrieved one at a time to measure the per-question "
                             "latency; the rest are retrieved in batches.")(f)


def executor_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--executor local|ray`` and ``--address``: where the CPU-bound stages run."""
    f = click.option("--address", metavar="ADDR",
                     help="The Ray cluster for --executor ray: auto (the cluster this "
                          "machine joined), HOST:PORT, or ray://HOST:PORT. Default: start a "
                          "local Ray instance for the run.")(f)
    return click.option("--executor", "executor_name", type=click.Choice(["local", "ray"]),
                        default="local", show_default=True,
                        help="Run embedding, retrieval and reranking here (local) or spread "
                             "over a Ray cluster (ray; pip install 'ragmark-eval[ray]'). LLM calls "
                             "stay in this process either way; results are identical.")(f)
