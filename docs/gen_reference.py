"""Generates the reference pages at build time (mkdocs-gen-files): the metric catalogue
from ragmark's own, and the command line from each command's help."""

from __future__ import annotations

import click
import mkdocs_gen_files

from ragmark.cli import cli
from ragmark.cli.flags import flags
from ragmark.metrics.names import catalogue, groups

CUTOFF = {"required": "needs one (`@k`)", "optional": "optional (`@k`)", "none": "none"}


def metrics_page() -> str:
    lines = ["# Metrics", "",
             "Every metric ragmark computes, generated from its catalogue (`ragmark "
             "metrics` prints the same). *Needs*: what a question must offer for a value "
             "(`llm`: an LLM endpoint; `expected_answer`, `qrels`, ...); a question "
             "without it has the metric missing, with the reason. *Cutoff*: whether the "
             "name takes `@k`; *default*: the cutoffs computed when no metric is named; "
             "*reads*: the config keys it takes (their type, default and meaning below).",
             "", "| metric | kind | what it is | needs | better | cutoff | default | reads |",
             "|---|---|---|---|---|---|---|---|"]
    for s in catalogue().values():
        default = ", ".join("—" if k is None else f"@{k}" for k in s.default) or "asked for"
        summary = s.summary.replace("|", "\\|")
        reads = ", ".join([*(f"`{s.name}({p.name}=…)`" for p in s.options),
                           *(f"`{p.name}`" for p in s.params)]) or "—"
        lines.append(f"| `{s.name}` | {s.kind} | {summary} | {', '.join(s.needs) or '—'} "
                     f"| {s.better} | {CUTOFF.get(s.cutoff, s.cutoff)} | {default} "
                     f"| {reads} |")
    lines += ["", "Groups: " + "; ".join(f"`{g}` = {', '.join(f'`{m}`' for m in ms)}"
                                       for g, ms in groups().items()) + ".", ""]
    params = {p.name: p for s in catalogue().values() for p in s.params}
    lines += ["The config keys metrics read:", ""] + [
        f"- `{p.name}` ({p.dtype.__name__}, default `{p.default!r}`): {p.desc}."
        for p in params.values()] + [""]
    return "\n".join(lines)


def flag_index() -> list[str]:
    """Each flag with the commands that take it and what it means (one meaning per
    flag name; the few still explained per command show each command's help)."""
    lines = ["## Flags", "", "Every flag, the commands that take it, and what it means.", "",
             "| flag | commands | meaning |", "|---|---|---|"]
    for flag, by in flags(cli).items():
        if flag.startswith("--") or len(flag) == 2:
            helps = dict.fromkeys(by.values())
            meaning = (next(iter(helps)) if len(helps) == 1 else
                       "<br>".join(f"*{c}*: {h}" for c, h in by.items()))
            cell = meaning.replace("|", "\\|")
            lines.append(f"| `{flag}` | {', '.join(by)} | {cell} |")
    return lines + [""]


def cli_page() -> str:
    lines = ["# Command line", "", "Each command's `--help`, generated; then every flag "
             "with the commands that take it.", ""]
    ctx = click.Context(cli, info_name="ragmark")
    for name in sorted(cli.list_commands(ctx)):
        cmd = cli.get_command(ctx, name)
        if cmd is None or cmd.hidden:
            continue
        sub = click.Context(cmd, info_name=f"ragmark {name}", parent=ctx)
        lines += [f"## `ragmark {name}`", "", "```text", cmd.get_help(sub), "```", ""]
    return "\n".join(lines + flag_index())


with mkdocs_gen_files.open("reference/metrics.md", "w") as f:
    f.write(metrics_page())
with mkdocs_gen_files.open("reference/cli.md", "w") as f:
    f.write(cli_page())
