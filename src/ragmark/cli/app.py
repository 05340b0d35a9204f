"""The click group and the consoles every command prints through."""

from __future__ import annotations

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
