"""`ragmark power`: how many questions a regression gate needs (power analysis). Once
named `ragmark plan`, a name now left to the layer that plans every command
(:mod:`ragmark.plan`)."""

from __future__ import annotations

import math
from typing import Any

import click
import numpy as np
from rich.table import Table

from ragmark.analysis.diff import resolve_side
from ragmark.analysis.gates import metric_name
from ragmark.analysis.regression import least_questions, mde, questions_needed
from ragmark.cli.app import (
    alpha_option,
    cli,
    config_name_option,
    consoles,
    history_option,
    renamed,
    takes_renamed,
)
from ragmark.cli.shared import option
from ragmark.errors import ConfigError
from ragmark.history import history_path
from ragmark.metrics.names import split_names


def _power_options(f: Any) -> Any:
    opts: list[Any] = [
        click.option("--from", "ref", metavar="REF", callback=takes_renamed("--from"),
                     help="The run to plan from: a results file, a history id, or last."),
        renamed("--baseline", "--from", metavar="REF"),
        click.option("--with", "second", metavar="REF", callback=takes_renamed("--with"),
                     help="A second run of the same questions: the spread of the paired "
                          "differences is measured instead of assumed."),
        renamed("--against", "--with", metavar="REF"),
        click.option("--effect", type=click.FloatRange(min=0, min_open=True), required=True,
                     help="The smallest drop the gate should detect (in the metric's "
                          "units)."),
        option("--metrics", show_default="every metric of the run"),
        config_name_option,
        alpha_option(),
        click.option("--power", type=click.FloatRange(0, 1, min_open=True, max_open=True),
                     default=0.8, show_default=True,
                     help="The chance the gate should have to catch such a drop."),
        history_option,
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def _spread(base: Any, other: Any, metric: str) -> tuple[float, str, int]:
    """The spread of one metric's paired differences (or, without a second run, of its
    values), where it came from, and over how many questions."""
    vals = base.values.get(metric)
    if vals is None:
        deeper = [m for m in base.values if m.startswith(metric + "@")]
        raise ConfigError(f"the run has no metric {metric!r}; it has "
                          f"{', '.join(base.values)}" + (
                              f" (the run names {metric} with the depth it covers: try "
                              f"--metrics {deeper[0]})" if deeper else ""))
    if other is not None:
        ov = other.values.get(metric, {})
        diffs = np.array([float(ov[q] or 0.0) - v for q, v in vals.items()
                          if v is not None and ov.get(q) is not None], dtype=np.float64)
        return (float(diffs.std(ddof=1)) if len(diffs) > 1 else 0.0, "paired differences",
                len(diffs))
    xs = np.array([v for v in vals.values() if v is not None], dtype=np.float64)
    return (float(xs.std(ddof=1)) if len(xs) > 1 else 0.0, "assumed from the run",
            len(xs))


def _power(**f: Any) -> None:
    """How many questions a regression gate needs to detect a drop of --effect.

    Paired two-sided test at --alpha with --power. The spread of the paired differences
    comes from --with when given; else it is taken as the spread of the metric over
    the run's questions (as if two runs correlate at 0.5), a rough guide."""
    if not f["ref"]:
        raise click.UsageError("Missing option '--from'.")
    hist = history_path(f["history"])
    base = resolve_side(f["ref"], f["config"], hist)
    other = resolve_side(f["second"], f["config"], hist) if f["second"] else None
    names = ([metric_name(m) for m in split_names(f["metrics"])] if f["metrics"]
             else list(base.values))
    effect, alpha, power = f["effect"], f["alpha"], f["power"]
    out, _ = consoles(quiet=True)
    table = Table(show_header=True, header_style="bold",
                  title=f"questions needed to detect a drop of {effect:g} (α = {alpha:g}, "
                        f"power {power:g})")
    for col in ("metric", "spread", "from", "questions now", "detectable now",
                "judge noise", "needed"):
        table.add_column(col, justify="left" if col in ("metric", "from") else "right")
    least = least_questions(len(names), alpha)
    fewest = None
    for m in names:
        sd, source, n = _spread(base, other, m)
        fewest = n if fewest is None else min(fewest, n)
        now = None if least is None or n < least else mde(sd, n, alpha, power)
        need = questions_needed(sd, effect, alpha, power) if sd > 0 else None
        if need is not None and least is not None:
            need = max(need, least)
        noise = base.noise.get(m) or {}
        within, reps = noise.get("within_sd"), noise.get("repeats")
        if within:  # the gate lets a drop within the judges' noise band pass
            quiet = math.ceil(2 * (1.96 * within) ** 2 / (reps * effect ** 2))
            need = max(need or 2, quiet)
        table.add_row(m, f"{sd:.4f}", source, str(n), "—" if now is None else f"{now:.4f}",
                      "—" if not within else f"s.d. {within:.4f} at {reps} repeats",
                      f"{need:,}" if need is not None else
                      f"{least} (no spread)" if least is not None else "—")
    out.print(table)
    if least is None or (fewest is not None and fewest < least):
        out.print(f"a gate of {len(names)} metric(s) at α = {alpha:g} cannot fail with "
                  + (f"fewer than {least} questions: the paired test's p is never below "
                     "2 / 2^n over n questions (Holm multiplies it by the metrics); "
                     "below that, nothing is detectable" if least is not None else
                     "any number of questions: too many metrics for 10,000 resamples"),
                  highlight=False, soft_wrap=True)
    if any(base.noise.get(m) for m in names):
        out.print("judge noise: the within-question s.d. the run's --judge-repeats "
                  "measured; a gate does not call a drop within the judges' own noise band "
                  "a regression, so at least 2 * (1.96 * s.d.)^2 / (repeats * effect^2) "
                  "questions are needed (more repeats, fewer questions)", highlight=False,
                  soft_wrap=True)


@cli.command("power")
@_power_options
def power_cmd(**flags: Any) -> None:
    """How many questions a regression gate needs to detect a drop of --effect.

    Paired two-sided test at --alpha with --power. The spread of the paired differences
    comes from --with when given; else it is taken as the spread of the metric over
    the run's questions (as if two runs correlate at 0.5), a rough guide."""
    _power(**flags)

