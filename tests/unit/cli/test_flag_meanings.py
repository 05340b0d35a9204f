"""One meaning per flag name (issue 34): a flag that several commands take is explained
the same way on each (declared once: the option groups of ragmark.cli.app, the
meanings of ragmark.cli.shared, the endpoint's fields), and the commands that do long
work take the shared groups."""

from __future__ import annotations

import pytest

from ragmark.cli import cli
from ragmark.cli.flags import commands, flags


def test_the_reader_sees_a_flag_explained_two_ways():
    import click

    @click.group()
    def group() -> None: ...

    @group.command("a")
    @click.option("--x", help="one thing")
    def a(x: str) -> None: ...

    @group.command("b")
    @click.option("--x", help="another")
    def b(x: str) -> None: ...

    assert flags(group)["--x"] == {"a": "one thing", "b": "another"}


def test_a_flag_several_commands_take_is_explained_once():
    table = flags(cli)
    differ = {f for f, by in table.items() if len(by) > 1 and len(set(by.values())) > 1}
    assert differ == set(), {f: table[f] for f in differ}


@pytest.mark.parametrize("flag", ["--quiet", "-q"])
def test_every_command_that_does_long_work_takes_quiet(flag):
    takes = set(flags(cli)[flag])
    assert {"run", "compare", "label", "testset", "judge-eval", "monitor",
            "demo"} <= takes


def test_the_shared_groups_are_one_declaration():
    table = flags(cli)
    for flag, by in [("--dry-run", {"run", "compare", "label", "testset", "monitor",
                                    "history prune"}),
                     ("--history", {"run", "compare", "label", "monitor", "report",
                                    "diff", "power", "history"}),
                     ("--strict", {"run", "compare", "label", "testset", "monitor"}),
                     ("--against", {"run", "compare"})]:
        assert by <= set(table[flag]), flag
        assert len(set(table[flag].values())) == 1, flag


def test_hidden_commands_and_renamed_flags_are_not_listed():
    names = commands(cli)
    assert "power" in names and "plan" not in names
    assert "--baseline" not in {f for f, by in flags(cli).items() if "run" in by}
