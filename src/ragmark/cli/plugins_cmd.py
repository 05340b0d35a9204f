"""`ragmark plugins`: every way to extend ragmark, and the extensions installed."""

from __future__ import annotations

import json
from importlib.metadata import entry_points

import click

from ragmark.cli.app import cli
from ragmark.cli.shared import option


@cli.command("plugins")
@option("--json", "as_json", is_flag=True)
def plugins_cmd(as_json: bool) -> None:
    """List every extension point (its entry-point group, what an entry point names and
    the door it comes through) with the installed packages' entry points in it."""
    from ragmark.extensions import POINTS

    found = {p.group: sorted((ep.name, ep.value) for ep in entry_points(group=p.group))
             for p in POINTS}
    if as_json:
        click.echo(json.dumps([{"group": p.group, "takes": p.takes, "door": p.door,
                                "built_ins": p.built_ins,
                                "installed": [{"name": n, "value": v}
                                              for n, v in found[p.group]]}
                               for p in POINTS], indent=1))
        return
    for p in POINTS:
        installed = ", ".join(f"{n} ({v})" for n, v in found[p.group]) or "none installed"
        click.echo(f"{p.group}: {installed}\n  takes {p.takes}\n  built-ins: {p.built_ins}")
