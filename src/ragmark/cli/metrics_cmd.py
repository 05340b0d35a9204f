"""`ragmark metrics`: the metric catalogue."""

from __future__ import annotations

import json

import click

from ragmark.cli.app import cli
from ragmark.cli.shared import option
from ragmark.metrics.names import catalogue
from ragmark.text import visible


@cli.command("metrics")
@option("--json", "as_json", is_flag=True)
@click.option("--config", "configs", multiple=True, metavar="FILE",
              help="Also list the judges of your own these configs define "
                   "([judges.NAME] with a criterion).")
def metrics_cmd(as_json: bool, configs: tuple[str, ...]) -> None:
    """List every metric: name (with its cutoff rule), kind, what it needs, the cutoffs
    it is computed at by default, its formula, the options its name takes
    (``rbp(p=0.9)@10``) and the config keys it reads (their type, default and meaning).
    Plugins (the ``ragmark.metric`` entry-point group) are listed too."""
    from ragmark.plan.metric_choice import define_criteria

    define_criteria(configs)
    specs = list(catalogue().values())
    if as_json:
        click.echo(json.dumps([{"name": s.name, "kind": s.kind, "cutoff": s.cutoff,
                                "needs": list(s.needs), "default": list(s.default),
                                "formula": s.summary, "label": s.label or s.name,
                                "params": [{"name": p.name, "type": p.dtype.__name__,
                                            "default": p.default, "desc": p.desc}
                                           for p in s.params],
                                "options": [{"name": p.name, "type": p.dtype.__name__,
                                             "default": p.default, "desc": p.desc}
                                            for p in s.options]}
                               for s in specs], indent=1))
        return
    for s in specs:
        suffix = {"required": "@k", "optional": "[@k]", "none": ""}[s.cutoff]
        default = ", ".join("-" if k is None else f"@{k}" for k in s.default) or "asked for"
        click.echo(f"{s.name + suffix:<24} {s.kind:<9} needs {', '.join(s.needs) or '-'}; "
                   f"default: {default}\n{'':<24} {visible(s.summary)}")
        for p in s.options:
            click.echo(f"{'':<24} option {p.name} ({p.dtype.__name__}, default "
                       f"{p.default!r}): {p.desc}; {s.name}({p.name}=...)")
        for p in s.params:
            click.echo(f"{'':<24} reads {p.name} ({p.dtype.__name__}, default "
                       f"{p.default!r}): {p.desc}")
