"""``ragmark report``: one self-contained HTML page from results files or history ids."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ragmark.cli.app import cli, history_option
from ragmark.cli.shared import option
from ragmark.errors import ConfigError
from ragmark.history import history_path, run_row
from ragmark.passage_labels import label_from_json
from ragmark.plan.paths import check_output
from ragmark.probe.html import render as probe_page
from ragmark.probe.view import probe_results
from ragmark.report.html import render
from ragmark.report.simulation_html import render as simulation_page
from ragmark.report.testset_check_html import render as check_page
from ragmark.results import PROBE, SIMULATION, TESTSET_CHECK, read_results
from ragmark.results.codec import compare_from_json, run_from_json


def _load(ref: str, history: str | None) -> dict[str, Any]:
    """A results file, or the results file a history id recorded, checked through its
    model (a malformed one is an error naming the file) before any page is written."""
    path = ref if Path(ref).exists() else _recorded(ref, history)
    return _read(path)


def _read(path: str) -> dict[str, Any]:
    probe = probe_results(path)
    if probe is not None:
        return probe

    kind, data = read_results(path, also=(SIMULATION, TESTSET_CHECK))
    if kind in (SIMULATION, TESTSET_CHECK):
        return data
    {"label": label_from_json, "compare": compare_from_json}.get(kind, run_from_json)(
        data, path)
    return data


def _recorded(ref: str, history: str | None) -> str:
    """The results file history id ``ref`` recorded."""
    if not ref.isdigit():
        raise ConfigError(f"{ref!r} is neither a results file nor a history id")

    row, _, _ = run_row(history_path(history), int(ref))
    if not row.results_path:
        raise ConfigError(f"run {ref} of the history recorded no results file to render")
    if not Path(row.results_path).is_file():
        raise ConfigError(f"run {ref}: its results file {row.results_path} is gone")
    return str(row.results_path)


@cli.command("report")
@click.argument("refs", nargs=-1, required=True, metavar="FILE_OR_ID...")
@option("--output", default="report.html", show_default=True)
@history_option
def report_cmd(refs: tuple[str, ...], output: str, history: str | None) -> None:
    """Render results files (run, compare, label) or history ids as one HTML page that
    works offline: inline CSS, SVG plots and a little JavaScript, no request of any
    kind. A compare or run written with --include-details gets the question view. A
    probe's results, a simulation's report (simulate --output) and a test set's check
    (testset check --output FILE.json) get a page of their own."""
    check_output(output, "--output")
    files = [_load(r, history) for r in refs]
    path = Path(output)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_page(files, render), encoding="utf-8")
    click.echo(f"Report written to {path}")


def _page(files: list[dict[str, Any]], render: Any) -> str:
    """The page of the files: a probe's or a simulation's alone (a page of its own),
    else the results'."""
    own = {PROBE: ("a probe's results", probe_page),
           SIMULATION: ("a simulation's report", simulation_page),
           TESTSET_CHECK: ("a test set's check", check_page)}
    for f in files:
        kind = f.get("envelope", {}).get("kind")
        if kind in own:
            what, page = own[kind]
            if len(files) > 1:
                raise ConfigError(f"{what} is rendered on a page of its own: give its "
                                  "file alone")
            return str(page(f))
    return str(render(*files))
