"""The command line loads a command's module only when that command is used (issue 62,
item 7: the one reason the command modules may import at their top): ``ragmark --help``
imports none of them and lists every command from its table; each command in the table
is defined by the module it names, under that name."""

from __future__ import annotations

import subprocess
import sys

import click

from ragmark.cli import cli
from ragmark.cli.lazy_group import COMMANDS


def test_help_loads_no_command_and_running_one_loads_only_its_own():
    code = ("import sys\n"
            "from ragmark.cli import cli\n"
            "cli.main(args=sys.argv[1:], prog_name='ragmark', standalone_mode=False)\n"
            "mods = sorted(m for m in sys.modules if m.startswith('ragmark.cli.'))\n"
            "print('MODULES', ' '.join(mods))\n")

    def loaded(*args):
        out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True,
                             text=True, check=True).stdout
        listing, _, mods = out.rpartition("MODULES ")
        return listing, set(mods.split())

    listing, mods = loaded("--help")
    assert mods == {"ragmark.cli.app", "ragmark.cli.lazy_group", "ragmark.cli.shared"}
    for name, (_, line) in COMMANDS.items():
        assert f"  {name} " in listing and line.split()[0] in listing
    _, mods = loaded("metrics", "--json")
    assert "ragmark.cli.metrics_cmd" in mods and "ragmark.cli.run" not in mods


def test_every_command_of_the_table_is_its_modules_and_says_its_line():
    ctx = click.Context(cli)
    for name, (module, line) in COMMANDS.items():
        cmd = cli.get_command(ctx, name)
        assert cmd is not None and cmd.name == name
        assert cmd.callback is not None and cmd.callback.__module__ == f"ragmark.cli.{module}"
        assert cmd.get_short_help_str(limit=200) == line
    assert cli.get_command(ctx, "no-such-command") is None
