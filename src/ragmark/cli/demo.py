"""`ragmark demo`: the bundled offline demo."""

from __future__ import annotations

from pathlib import Path

import click

from ragmark.cli.app import cli, consoles


@cli.command()
@click.option("--output", default="rag_eval_results.json", show_default=True,
              type=click.Path(dir_okay=False), help="Where to write the detailed JSON report.")
@click.option("--quiet", is_flag=True, help="No progress bars.")
def demo(output: str, quiet: bool) -> None:
    """Run the bundled demo: a small RAG corpus and keyword set, BM25 + extractive answers."""
    from ragmark.demo.run import run_demo
    from ragmark.plan.paths import check_output

    check_output(output, "--output")
    out, progress = consoles(quiet)
    run_demo(Path(output), out, progress)
