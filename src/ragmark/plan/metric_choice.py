"""Which metrics a run or a compare computes, read once from ``--metrics`` and
``--judge-metrics`` (issue 49, item 3): ``all``, the group names, the metrics that are
judges and those that are not, every unknown name refused before any work; then, by
:func:`choose`, what a plan computes, one rule for run and compare alike (a run is a
compare of one config whose table is what it computes): the metrics each config's run
computes, those it computes besides them (compared or gated), the judges asked (the
selection's, the people's, the gates'), and what a compare tests."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from ragmark.analysis.gates import check_names, parse_thresholds
from ragmark.config import load_configs
from ragmark.errors import ConfigError
from ragmark.metrics.names import (
    MetricName,
    expand_groups,
    judge_metrics,
    parse_metrics,
    split_names,
)
from ragmark.metrics.names import judge_metrics as known_judges
from ragmark.running.judging import parse_judge_metrics


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
    text = metrics if isinstance(metrics, str) else ",".join(str(m) for m in metrics or ())
    every = text.strip().lower() == "all"
    given = split_names(expand_groups(split_names(text))) if text and not every else []
    known = known_judges()
    named = parse_judge_metrics([m for m in given if m in known])
    names = parse_metrics([m for m in given if m not in known])
    return Selection(every, tuple(given) or None, tuple(names) or None, tuple(named),
                     tuple(parse_judge_metrics(judge_metrics)))


def define_criteria(configs: Sequence[str]) -> None:
    """Read ``configs``: the judges of their own they define (``[judges.NAME]`` with a
    criterion) are metrics from then on (``ragmark metrics --config``)."""
    for c in configs:
        load_configs(c)


def judges_asked(sel: Selection, *more: Sequence[str]) -> list[str]:
    """The judge metrics a plan asks, in one order for run and compare: those of
    ``--judge-metrics``, then the judge metrics ``--metrics`` names, then, in turn, those
    of each of ``more`` (the people's labels, the gates) that are judges."""
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


@dataclass(frozen=True)
class Chosen:
    """What a plan computes, decided once from the selection, the people's labels and
    the gates (see :func:`choose`); the plan's ``metrics``, ``also``, ``judges`` and
    ``compared``."""

    metrics: tuple[str, ...] | None
    """What each config's run computes besides its judges (None: the dataset's
    defaults; empty: none, when ``--metrics`` names judges only)."""
    also: tuple[str, ...]
    """Computed besides them: what is compared and what the gates need."""
    judges: tuple[str, ...]
    compared: tuple[str, ...] | None
    """What a compare tests (None: its table); a run's is None (its table is what it
    computes)."""

    def with_every(self, names: Sequence[Any], more: Sequence[str]) -> Chosen:
        """``--metrics all`` expanded, once the data is read: ``names`` every metric the
        data, the endpoint and the extras allow, ``more`` the judges among them."""
        return replace(self, metrics=tuple(str(m) for m in names),
                       judges=(*self.judges, *(j for j in more if j not in self.judges)))


def choose(sel: Selection, *, computed: Sequence[Any] | None = None,
           compared: Sequence[str] | None = None, human: Sequence[str] = (),
           gates: Sequence[str] = ()) -> Chosen:
    """What a plan computes, by one rule for run and compare: ``computed`` what each
    config's run computes (a run's: the metrics its ``--metrics`` names; a compare's:
    its ``run_metrics``), ``compared`` what a compare tests (its ``--metrics``), and,
    besides, what is compared and what the ``gates`` (the thresholds' and the
    regression gate's metrics) need (an aggregate: the metric it summarises); the judges
    in :func:`judges_asked`'s order, the people's labels (``human``) before the gates."""

    known = judge_metrics()
    also = parse_metrics([m for m in compared or () if m not in known])
    also += [m for m in gated_additions(gates) if m not in also]
    return Chosen(None if computed is None else tuple(str(m) for m in computed),
                  tuple(str(m) for m in also), tuple(judges_asked(sel, human, gates)),
                  None if compared is None else tuple(compared))


def gated_additions(gated: Sequence[str]) -> list[MetricName]:
    """What the gates need computed besides the metrics asked for (or the defaults): the
    gated metrics that are not judges (groundedness for grounded_ratio)."""
    from ragmark.metrics.names import computable, parse_metric

    also: list[MetricName] = []
    for m in dict.fromkeys(gated):
        if m not in judge_metrics():
            name = computable(parse_metric(m))  # an aggregate: what it summarises
            name = parse_metric(name.spec.of) if name.spec.of else name
            if name not in also:
                also.append(name)
    return also
