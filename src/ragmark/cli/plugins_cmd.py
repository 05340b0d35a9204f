"""`ragmark plugins`: every way to extend ragmark, and what each holds."""

from __future__ import annotations

import json

import click

from ragmark.cli.app import cli
from ragmark.cli.shared import option
from ragmark.extensions import POINTS, door_of


@cli.command("plugins")
@option("--json", "as_json", is_flag=True)
def plugins_cmd(as_json: bool) -> None:
    """List every extension point (its entry-point group, what an entry point names and
    the door it comes through) with what its door holds: the built-ins and what the
    installed packages added (each loaded through the door, as a run would)."""
    doors = {p.group: door_of(p) for p in POINTS}
    for door in doors.values():
        door.load()  # the built-ins and the packages, as a run would read them
    if as_json:
        click.echo(json.dumps([{"group": p.group, "takes": p.takes, "door": p.door,
                                "built_ins": doors[p.group].built_ins(),
                                "installed": [{"name": n, "value": v} for n, v in sorted(
                                    doors[p.group].packages.values())]}
                               for p in POINTS], indent=1))
        return
    for p in POINTS:
        door = doors[p.group]
        installed = ", ".join(f"{n} ({v})" for n, v in sorted(door.packages.values())) \
            or "none installed"
        click.echo(f"{p.group}: {installed}\n  takes {p.takes}\n  built-ins: "
                   f"{', '.join(door.built_ins())}")
