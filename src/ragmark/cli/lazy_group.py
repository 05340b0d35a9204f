"""The top group of the command line: a command's module is imported only when that
command is asked for — the one reason the command line's modules can import at their top
and still start fast (``ragmark run`` loads what running needs, ``ragmark --help`` loads
no command)."""

from __future__ import annotations

import importlib

import click

COMMANDS = {
    "annotate": ("annotate", "Label in the browser, or write the labels out."),
    "compare": ("compare", "Run several configs on the same questions and compare them."),
    "demo": ("demo", "Run the bundled demo: offline, no model."),
    "diff": ("diff", "Per-question differences from one run to another."),
    "duel": ("duel", "Judge two systems' answers against each other."),
    "history": ("history", "The recorded runs: list, show, trend, prune, accept."),
    "inspect": ("inspect", "Show one question of a results file in full, or list them."),
    "judge-eval": ("judge_eval", "Measure a judge against people's labels."),
    "label": ("label", "Label each config's top passages with an LLM judge."),
    "metrics": ("metrics_cmd", "List every metric: its name, kind and what it needs."),
    "monitor": ("monitor", "Evaluate logged or traced production records over time."),
    "plugins": ("plugins_cmd", "List every extension point and what fills it."),
    "power": ("power", "How many questions a regression gate needs."),
    "probe": ("probe", "Plant attacks in the corpus and measure their success."),
    "report": ("report_cmd", "Render results files or history runs as HTML or Markdown."),
    "review": ("review", "Check the judge against people: export a sample, then score."),
    "run": ("run", "Evaluate one config on a dataset, or a system's logged outputs."),
    "simulate": ("simulate", "Play scenarios with simulated users against a system."),
    "testset": ("testset", "Generate questions with answers and quotes from a corpus."),
}
"""Each command: the module of ``ragmark.cli`` that defines it, and its one line in
``ragmark --help`` (also its short help once loaded)."""


class Commands(click.Group):
    """A group whose commands are loaded when asked for (:data:`COMMANDS`)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(COMMANDS) | set(self.commands))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            module, line = COMMANDS[cmd_name]
            importlib.import_module(f"ragmark.cli.{module}")  # its decorator registers it
            if cmd_name in self.commands:
                self.commands[cmd_name].short_help = line
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list from the table, so that listing loads no command."""
        rows = [(name, COMMANDS[name][1] if name in COMMANDS
                 else self.commands[name].get_short_help_str())
                for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)
