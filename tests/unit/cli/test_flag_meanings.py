"""One meaning per flag name (issues 34 and 62): a flag that several commands take is
declared once (the option groups of ragmark.cli.app, the meanings of ragmark.cli.shared,
the endpoint's fields); where what it does differs by command, each command's help says
only its own, never another command's; the commands that do long work take the shared
groups."""

from __future__ import annotations

import re

import pytest

from ragmark.cli import cli, shared
from ragmark.cli.flags import commands, flags

_VERBS = ("gives?|writes?|reads?|takes?|lists?|follows?|measures?|puts?|serves?|receives?|"
          "counts?|cuts?|labels?|judges?")


def speaks_of(text: str, command: str, names: list[str]) -> list[str]:
    """The other commands ``text`` gives a meaning for, as a help that lists each
    command's would ("compare and label, {output}.json ...", "(history: only ...",
    "testset writes ..."); a cross-reference in backquotes (`ragmark review export`) is
    not one."""
    one = "(?:" + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)) + ")"
    pattern = re.compile(rf"(?:^|[.;:(]\s*)(?:on\s+)?({one}(?:(?:,\s*|\s+and\s+|\s+or\s+)"
                         rf"{one})*)(?:'s\b|\s*[:,]|\s+(?:{_VERBS})\b)")
    said = [n for hit in pattern.findall(text) for n in re.split(r",\s*|\s+and\s+|\s+or\s+",
                                                                hit)]
    return sorted({n for n in said if n != command and not command.startswith(n + " ")})


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


def test_the_check_sees_a_help_that_speaks_of_other_commands():
    names = ["run", "compare", "label", "history", "history trend", "testset"]
    said = ("Where the command writes its result: run, the JSON report; compare and label, "
            "{output}.json (label's --plot beside them); history trend, the chart")
    assert speaks_of(said, "run", names) == ["compare", "history trend", "label"]
    assert speaks_of("The language (testset writes its questions in it)", "run",
                     names) == ["testset"]
    assert speaks_of("A review CSV, as `ragmark judge-eval` reads it", "run", names) == []
    assert speaks_of("Where the JSON report is written.", "run", names) == []


def test_no_help_speaks_of_another_command():
    names = list(commands(cli)) + sorted({c.split(" ")[0] for c in commands(cli)})
    told = {(flag, cmd): got for flag, by in flags(cli).items() for cmd, text in by.items()
            if (got := speaks_of(text, cmd, names))}
    assert told == {}


def test_a_flag_several_commands_take_is_explained_once_or_per_command():
    """The same text everywhere, unless the flag's meanings are written by command."""
    table = flags(cli)
    differ = {f for f, by in table.items() if len(by) > 1 and len(set(by.values())) > 1
              and not isinstance(shared.MEANINGS.get(f), dict)}
    assert differ == set(), {f: table[f] for f in differ}


def test_run_help_says_what_its_flags_mean_in_run(capsys):
    from support.cli import run_cli

    code, text, _ = run_cli(["run", "--help"], capsys)
    flat = " ".join(text.split())
    assert code == 0 and ("--output TEXT The JSON report's path; each other --format file "
                          "beside it") in flat
    for other in ("compare and label", "testset", "history trend", "probe takes"):
        assert other not in flat, other
    code, text, _ = run_cli(["testset", "--help"], capsys)
    assert "Where the set is written; its report beside it" in " ".join(text.split())


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
