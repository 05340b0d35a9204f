"""`ragmark demo`: the bundled offline demo."""

from __future__ import annotations

import shutil
from pathlib import Path

import click

from ragmark.cli.app import cli, consoles, quiet_option
from ragmark.cli.shared import option
from ragmark.demo import demo_path
from ragmark.demo.tour import run_demo
from ragmark.errors import ConfigError
from ragmark.plan.paths import check_output


@cli.command()
@option("--output", default="rag_eval_results.json", show_default=True,
        type=click.Path(dir_okay=False))
@quiet_option
@click.option("--files", "files_to", type=click.Path(file_okay=False),
              help="Instead of running: copy the demo's questions.json and corpus/ into "
                   "this folder, to try the other commands on (the documentation's "
                   "examples start there).")
def demo(output: str, quiet: bool, files_to: str | None) -> None:
    """Run the bundled demo: a small RAG corpus and keyword set, BM25 + extractive answers."""
    if files_to is not None:
        _copy_files(Path(files_to))
        return
    check_output(output, "--output")
    out, progress = consoles(quiet)
    run_demo(Path(output), out, progress)


def _copy_files(folder: Path) -> None:
    """The demo's questions.json and corpus/ copied into ``folder`` (never over a file
    that is there: an error naming it, exit 2)."""
    src = demo_path()
    targets = [folder / "questions.json", folder / "corpus"]
    there = next((t for t in targets if t.exists()), None)
    if there is not None:
        raise ConfigError(f"--files: {there} exists already; give an empty folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src / "questions.json", targets[0])
        shutil.copytree(src / "corpus", targets[1])
    except OSError as e:
        raise ConfigError(f"--files: cannot write into {folder}: {e.strerror or e}") from None
    click.echo(f"Wrote {targets[0]} and {targets[1]}/ "
               f"({len(list(targets[1].iterdir()))} documents)")

