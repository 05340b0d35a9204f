"""Command line: parse arguments, call the library, print, exit code. Wiring only.

Exit codes: 0 success, 1 a quality gate failed, 2 bad input or usage.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import click

from ragmark.cli.app import cli
from ragmark.errors import GateFailed, RagmarkError
from ragmark.text import visible

__all__ = ["cli", "evaluate_rag_main", "main"]


def _invoke(args: Sequence[str] | None, prog_name: str) -> int:
    try:
        cli.main(args=args, prog_name=prog_name, standalone_mode=False)
    except GateFailed as e:  # the outputs are written; say which conditions failed
        for line in e.lines:
            click.echo(visible(f"gate failed: {line}"), err=True)
        return e.exit_code
    except RagmarkError as e:  # its message may quote a file: control characters shown
        click.echo(visible(f"error: {e}"), err=True)
        return e.exit_code
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        return 130
    except click.ClickException as e:
        e.show()
        return 2
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        return 130
    return 0


def main(args: Sequence[str] | None = None) -> None:
    """Entry point of the ``ragmark`` command."""
    sys.exit(_invoke(args, "ragmark"))


def evaluate_rag_main(args: Sequence[str] | None = None) -> None:
    """Entry point of ``evaluate-rag``: an alias for ``ragmark compare``."""
    argv = list(sys.argv[1:] if args is None else args)
    sys.exit(_invoke(["compare", *argv], "evaluate-rag"))
