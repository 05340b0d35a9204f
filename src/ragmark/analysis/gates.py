"""Quality gates: when a run's numbers should fail the build (exit 1). Pure.

- The implicit gate: a metric that was asked for got no value for any question (a dead
  pipeline service, every question timing out, a judge that never gave a verdict), or
  every question of a config failed. ``allow_missing`` turns it off.
- ``--fail-under METRIC=VALUE``: the mean is below VALUE (or there is no mean).
  ``CONFIG:METRIC=VALUE`` holds for the named config only.
- ``--max-missing METRIC=FRACTION``: more than FRACTION of the questions have no value.

Each failed condition is one line that names the config, the metric and the top reasons.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragmark.errors import ConfigError, GateFailed
from ragmark.metrics.names import aggregates, judge_metrics, parse_metric
from ragmark.results.model import (
    Aggregate,
    RunReport,
    grouped_reasons,
    reason_text,
)
from ragmark.running.scoring import SKIPPED


@dataclass(frozen=True, slots=True)
class Threshold:
    """``config:metric=value`` (``config`` None: every config)."""

    metric: str
    value: float
    config: str | None = None

    def applies(self, config: str) -> bool:
        return self.config is None or self.config == config


def parse_thresholds(texts: Iterable[str], option: str, *, fraction: bool = False,
                     known: Sequence[str] | None = None) -> list[Threshold]:
    """``METRIC=VALUE`` or ``CONFIG:METRIC=VALUE`` items of ``option``; a metric name is
    canonicalised (``P@5`` -> ``precision@5``), or one of ``known`` when given (a
    command with metrics of its own). ``fraction``: the value is in [0, 1]."""
    out = []
    for text in texts:
        left, eq, value = text.rpartition("=")
        config, colon, metric = left.rpartition(":")
        if not eq or not metric.strip():
            raise ConfigError(f"{option} {text!r}: expected METRIC=VALUE or "
                              "CONFIG:METRIC=VALUE, e.g. 'ndcg@10=0.6'")
        try:
            v = float(value)
        except ValueError:
            raise ConfigError(f"{option} {text!r}: {value!r} is not a number") from None
        if fraction and not 0 <= v <= 1:
            raise ConfigError(f"{option} {text!r}: the fraction must be between 0 and 1")
        m = metric.strip()
        if known is not None and m not in known:
            raise ConfigError(f"{option} {text!r}: unknown metric {m!r}; expected one of "
                              f"{', '.join(known)}")
        name = m if known is not None or m in judge_metrics() or m in aggregates() else (
            str(parse_metric(m)))
        out.append(Threshold(name, v, config.strip() if colon else None))
    return out


def metric_name(text: str) -> str:
    """A metric's canonical name as results and the history hold it (``P@5`` ->
    ``precision@5``); judge metrics and derived aggregates as they are."""
    if text in judge_metrics() or text in aggregates() or text.startswith(
            ("probe:", "simulate:")):
        return text  # a probe's rates and a simulation's metrics are named as recorded
    return str(parse_metric(text))


def check_names(thresholds: Sequence[Threshold], configs: Sequence[str], option: str) -> None:
    """A ConfigError when a threshold names a config that is not run."""
    for t in thresholds:
        if t.config is not None and t.config not in configs:
            raise ConfigError(f"{option}: no config named {t.config!r}; the configs: "
                              f"{', '.join(configs)}")


def top_reasons(agg: Aggregate, n: int = 3) -> str:
    """``reason (N questions); ...`` for the ``n`` most frequent reasons."""
    items = list(grouped_reasons(agg.reasons).items())  # most frequent first
    shown = [f"{reason_text(r, v)} ({k} question{'' if k == 1 else 's'})"
             for r, (k, v) in items[:n]]
    more = len(items) - n
    return "; ".join(shown) + (f"; and {more} other reason{'s' * (more > 1)}" if more > 0
                               else "")


def _who(config: str, several: bool) -> str:
    return f"config {config!r}: " if several else ""


@dataclass(frozen=True, slots=True)
class Condition:
    """One gate condition checked: what (``name``), whether it held, and the line that
    says why (the failure message, or what was measured)."""

    name: str
    passed: bool
    message: str


def implicit_conditions(reports: Mapping[str, RunReport]) -> list[Condition]:
    """Per config: not every question failed, and every asked-for metric got a value."""
    out = []
    several = len(reports) > 1
    for name, r in reports.items():
        who = _who(name, several)
        total = len(r.queries)
        if total and sum(r.failures.values()) == total:
            why = top_reasons(Aggregate(None, 0, total, dict(r.failures)))
            out.append(Condition(f"{name}: questions answered", False,
                                 f"{who}every question failed: {why}"))
            continue
        for metric, agg in r.metrics.items():
            if set(agg.reasons) == {SKIPPED}:
                continue  # --skip-generation: answer metrics are missing by request
            ok = agg.n > 0
            out.append(Condition(
                f"{name}: {metric} has a value", ok,
                f"{who}{metric} has values for {agg.n} of {total} questions" if ok else
                f"{who}{metric} got no value for any of {total} questions: "
                f"{top_reasons(agg)}"))
    return out


def threshold_conditions(reports: Mapping[str, RunReport], fail_under: Sequence[Threshold],
                         max_missing: Sequence[Threshold]) -> list[Condition]:
    """The explicit thresholds, per config they apply to."""
    out = []
    several = len(reports) > 1
    for name, r in reports.items():
        who = _who(name, several)
        for t in fail_under:
            if not t.applies(name):
                continue
            key = r.key(t.metric)
            agg = r.metrics.get(key)
            what = f"{name}: {key} >= {t.value:g}"
            if agg is None or agg.value is None:
                why = "" if agg is None else f": {top_reasons(agg)}"
                out.append(Condition(what, False, f"{who}{key} has no value "
                                                  f"(--fail-under {t.value:g}){why}"))
            else:
                ok = agg.value >= t.value
                out.append(Condition(what, ok, f"{who}{key} = {agg.value:.4f} "
                                               f"{'>=' if ok else '<'} {t.value:g} "
                                               f"(--fail-under; over {agg.n} questions)"))
        for t in max_missing:
            if not t.applies(name):
                continue
            key = r.key(t.metric)
            agg = r.metrics.get(key)
            if agg is None:
                continue
            total = agg.n + agg.missing
            share = agg.missing / total if total else 0.0
            ok = share <= t.value
            out.append(Condition(
                f"{name}: {key} missing <= {t.value:.1%}", ok,
                f"{who}{key} is missing for {agg.missing} of {total} questions "
                f"({share:.1%} {'<=' if ok else '>'} {t.value:.1%}, --max-missing)"
                + ("" if ok else f": {top_reasons(agg)}")))
    return out


def conditions(reports: Mapping[str, RunReport], *, fail_under: Sequence[Threshold] = (),
               max_missing: Sequence[Threshold] = (), allow_missing: bool = False
               ) -> list[Condition]:
    """Every gate condition of a run or compare, checked."""
    out = [] if allow_missing else implicit_conditions(reports)
    return out + threshold_conditions(reports, fail_under, max_missing)


def check(conds: Sequence[Condition]) -> None:
    """Raise :class:`GateFailed` with the line of every condition that failed."""
    failed = [c.message for c in conds if not c.passed]
    if failed:
        raise GateFailed(failed)


def label_failures(configs: Mapping[str, Any], top_k: int) -> list[str]:
    """The implicit gate of ``ragmark label``: a config none of whose questions got a
    value of ``answer_presence@K`` (every label failed, or every question's pipeline)."""
    lines = []
    several = len(configs) > 1
    for name, c in configs.items():
        agg = c.metrics.get(f"answer_presence@{top_k}")
        if agg is not None and agg.n == 0:
            lines.append(f"{_who(name, several)}no question got a label: {top_reasons(agg)}")
    return lines
