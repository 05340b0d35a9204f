"""Every command's flags, read from the commands themselves: which commands take each
flag and what its help says there. The CLI reference's flag index and the test that one
flag name has one meaning both read this."""

from __future__ import annotations

import click


def commands(group: click.Group, prefix: str = "") -> dict[str, click.Command]:
    """Every visible command by its full name (``history prune``)."""
    out: dict[str, click.Command] = {}
    ctx = click.Context(group, info_name="ragmark")
    for name in sorted(group.list_commands(ctx)):
        cmd = group.get_command(ctx, name)
        if cmd is None or cmd.hidden:
            continue
        full = f"{prefix}{name}"
        if isinstance(cmd, click.Group):
            out[full] = cmd
            out.update(commands(cmd, f"{full} "))
        else:
            out[full] = cmd
    return out


def flags(group: click.Group) -> dict[str, dict[str, str]]:
    """Flag (``--dry-run``, ``-q``) -> command -> its help there, for every visible
    option of every visible command."""
    out: dict[str, dict[str, str]] = {}
    for name, cmd in commands(group).items():
        for p in cmd.params:
            if isinstance(p, click.Option) and not p.hidden:
                text = p.help_in(name) if hasattr(p, "help_in") else p.help or ""
                for flag in (*p.opts, *p.secondary_opts):
                    out.setdefault(flag, {})[name] = text
    return dict(sorted(out.items()))
