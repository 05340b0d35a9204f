"""`ragmark inspect`: one question of a results file in full, or its failing questions
(the console view is :mod:`ragmark.report.console_inspect`)."""

from __future__ import annotations

import json

import click

from ragmark.analysis.failures import DEFAULT_K, failures_json, find_failures
from ragmark.analysis.inspection import over_configs, query_json, results_from, results_json
from ragmark.cli.app import cli, config_name_option, consoles
from ragmark.cli.shared import option
from ragmark.probe.view import inspected, probe_of
from ragmark.report.console_inspect import print_failures, print_over_configs, print_query
from ragmark.text import visible


@cli.command("inspect")
@click.argument("results", type=click.Path(dir_okay=False))
@click.argument("query_id", required=False)
@click.option("--failures", is_flag=True,
              help="List the failing questions with a diagnosis, and a count per kind.")
@click.option("--k", "k", type=click.IntRange(min=1),
              help="With --failures: a question fails when nothing relevant is in its "
                   "top k.  [default: 10]")
@click.option("--faithfulness-below", type=click.FloatRange(0, 1), default=0.5,
              show_default=True, help="With --failures: faithfulness below this fails.")
@config_name_option
@option("--json", "as_json", is_flag=True)
def inspect_cmd(results: str, query_id: str | None, failures: bool, k: int | None,
                faithfulness_below: float, config: str | None, as_json: bool) -> None:
    """Show one question of a results file in full (QUERY_ID), or its failures.

    RESULTS is the JSON of `ragmark run --include-details` or of `ragmark compare`.
    """
    if failures == (query_id is not None):
        raise click.UsageError("give either a QUERY_ID or --failures")
    if k is not None and not failures:
        raise click.UsageError("--k applies to --failures")
    data = results_json(results)
    if _probe(results, data, query_id):
        return
    res = results_from(results, data, config)
    out, _ = consoles(quiet=True)
    if failures:
        rep = find_failures(res, k or DEFAULT_K, faithfulness_below)
        if as_json:
            click.echo(json.dumps(failures_json(res, rep), indent=2, ensure_ascii=False))
        else:
            print_failures(res, rep, out)
        return
    q = res.query(str(query_id))
    across = over_configs(res, data, q.id)
    if as_json:
        click.echo(json.dumps({**query_json(res, q), **({"over_configs": across}
                                                         if across else {})},
                              indent=2, ensure_ascii=False))
    else:
        print_query(res, q, out)
        print_over_configs(across, out)


def _probe(results: str, data: object, query_id: str | None) -> bool:
    """A probe's results: one target's outcomes, or (--failures) the questions that
    fell; False for any other file."""
    probe = probe_of(data, results)
    if probe is None:
        return False
    click.echo(visible(inspected(probe, query_id)))
    return True
