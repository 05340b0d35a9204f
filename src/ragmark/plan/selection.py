"""Which metrics a run or a compare computes, read once from ``--metrics`` and
``--judge-metrics`` (issue 49, item 3): ``all``, the group names, the metrics that are
judges and those that are not, every unknown name refused before any work. The gates'
and the people's additions are the plans' own, on top of it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ragmark.errors import ConfigError
from ragmark.metrics.names import MetricName


@dataclass(frozen=True)
class Selection:
    """``--metrics`` and ``--judge-metrics`` as the plans read them."""

    every: bool
    """``--metrics all``: every metric the data, the endpoint and the extras allow."""
    given: tuple[str, ...] | None
    """``--metrics`` as given, groups expanded (a compare's table keeps this order);
    None: the defaults, or ``all``."""
    names: tuple[MetricName, ...] | None
    """The metrics given that are not judges, parsed (None: the defaults)."""
    named_judges: tuple[str, ...]
    """The judge metrics ``--metrics`` names."""
    judges: tuple[str, ...]
    """``--judge-metrics``."""


def select(metrics: str | Sequence[Any] | None, judge_metrics: str | Sequence[str] | None
           ) -> Selection:
    """The selection of ``--metrics`` (a comma-separated text, or a list of names) and
    ``--judge-metrics``; an unknown name is an error listing the known ones."""
    from ragmark.metrics.names import expand_groups, parse_metrics, split_names
    from ragmark.metrics.names import judge_metrics as known_judges
    from ragmark.running.judging import parse_judge_metrics

    text = metrics if isinstance(metrics, str) else ",".join(str(m) for m in metrics or ())
    every = text.strip().lower() == "all"
    given = split_names(expand_groups(split_names(text))) if text and not every else []
    known = known_judges()
    named = parse_judge_metrics([m for m in given if m in known])
    names = parse_metrics([m for m in given if m not in known])
    return Selection(every, tuple(given) or None, tuple(names) or None, tuple(named),
                     tuple(parse_judge_metrics(judge_metrics)))


def judges_asked(sel: Selection, *more: Sequence[str]) -> list[str]:
    """The judge metrics a plan asks, in one order for run and compare: those of
    ``--judge-metrics``, then the judge metrics ``--metrics`` names, then, in turn, those
    of each of ``more`` (the people's labels, the gates) that are judges."""
    from ragmark.metrics.names import judge_metrics

    known = judge_metrics()
    out = list(sel.judges)
    for m in (*sel.named_judges, *(m for names in more for m in names)):
        if m in known and m not in out:
            out.append(m)
    return out


def thresholds(fail_under: Sequence[str], max_missing: Sequence[str],
               configs: Sequence[str] | None) -> tuple[list[Any], list[Any]]:
    """``--fail-under`` and ``--max-missing`` read once, by run and compare alike: the
    thresholds of each. ``configs``: a compare's config names, which a threshold may
    name (``CONFIG:METRIC=VALUE``); None for a run, whose one config a threshold does
    not name (an error when it does)."""
    from ragmark.analysis.gates import check_names, parse_thresholds

    under = parse_thresholds(fail_under, "--fail-under")
    most = parse_thresholds(max_missing, "--max-missing", fraction=True)
    if configs is not None:
        check_names([*under, *most], list(configs), "--fail-under/--max-missing")
        return under, most
    for t in (*under, *most):
        if t.config is not None:
            raise ConfigError(f"{t.config}:{t.metric}: 'ragmark run' has one config; give "
                              "METRIC=VALUE without a config name")
    return under, most
