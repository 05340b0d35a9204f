"""One meaning per flag name (issue 34): a flag that several commands take is explained
the same way on each (declared once: the option groups of ragmark.cli.app, the
meanings of ragmark.cli.shared, the endpoint's fields), and the commands that do long
work take the shared groups."""

from __future__ import annotations

import pytest

from ragmark.cli import cli
from ragmark.cli.flags import commands, flags

NOT_YET_ONE_MEANING = {
    "--config": "a config to run (run, testset) and the config to pick in a results file "
                "or the history (diff, history, inspect, power, review export)",
    "--dataset": "a dataset to load, and the history's filter by dataset name or hash",
    "--metric": "the metric to follow (history), to measure (judge-eval), to export "
                "(review export)",
    "--output": "where the command writes; each help gives its file layout",
    "--plot": "the same meaning; each help names its files",
}
"""Flags still explained per command, and why: each is to be declared once or renamed;
the list only shrinks (an entry that no longer differs fails the test)."""


def test_a_flag_several_commands_take_is_explained_once():
    table = flags(cli)
    differ = {f for f, by in table.items() if len(by) > 1 and len(set(by.values())) > 1}
    assert differ - set(NOT_YET_ONE_MEANING) == set(), {
        f: table[f] for f in differ - set(NOT_YET_ONE_MEANING)}
    assert set(NOT_YET_ONE_MEANING) - differ == set()  # fixed: take it off the list


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
