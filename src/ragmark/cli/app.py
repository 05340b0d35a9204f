"""The click group and the consoles every command prints through."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click
from rich.console import Console

from ragmark import __version__


def consoles(quiet: bool) -> tuple[Console, Any]:
    """stdout console and a progress object (rich bars on a terminal, else nothing)."""
    from ragmark.report.progress import RichProgress
    from ragmark.runner import NullProgress

    out = Console(highlight=False)
    err = Console(stderr=True)
    progress = NullProgress() if quiet or not err.is_terminal else RichProgress(err)
    return out, progress


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ragmark")
def cli() -> None:
    """ragmark: measure how well a RAG pipeline works, exactly and offline."""


def configs_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--dataset``, ``--corpus``, ``--split`` and ``--configs``: the options of the
    commands that run several configs on one dataset (compare, label)."""
    opts = [
        click.option("--dataset", required=True, type=click.Path(exists=True),
                     help="BEIR or Open RAG Benchmark folder, or a keyword/context set "
                          "JSON(L) file."),
        click.option("--corpus", type=click.Path(exists=True), help="Corpus, as for 'run'."),
        click.option("--split", default="test", show_default=True, help="BEIR qrels split."),
        click.option("--configs", "configs", multiple=True, default=["sparse"],
                     show_default=True,
                     help="Config names (sparse, dense, hybrid, hybrid-rerank) or TOML "
                          "files; repeat, or list them after the flag."),
    ]
    for o in reversed(opts):
        f = o(f)
    return f
