"""Several configurations over the same questions, and whether their differences are real.

Every config runs on the same questions. Per metric and config: the mean, the number of
queries it covers and a 95% bootstrap interval. Against the baseline: the relative
change and a paired test (randomisation by default, paired t-test as an option), with
Holm's correction within each family: by default one family per metric (every config
against the baseline on that metric). Everything random is seeded.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ragmark.config import RunConfig
from ragmark.data.fingerprint import dataset_hash
from ragmark.errors import ConfigError
from ragmark.executors import using
from ragmark.metrics.names import MetricName, aggregates, judge_metrics, parse_metrics
from ragmark.pipelines.base import Output
from ragmark.progress import Progress
from ragmark.results.comparison import (  # noqa: F401  (ragmark.running.compare's API)
    Comparison,
    StatSettings,
    change_sentence,
)
from ragmark.results.model import QueryRecord, RunReport
from ragmark.running.own import Retrieval
from ragmark.running.runner import dry_answered, retrieval_of, run
from ragmark.running.selection import (
    default_metrics,
    fit_to_depth,
    select,
    uncut_at,
    uncut_note,
)
from ragmark.running.task import Task
from ragmark.stats import ComparisonRow, Interval, compare_to_baseline, mean_ci
from ragmark.stats.noise import noise_band
from ragmark.types import Dataset

TABLE_METRICS = ["mrr", "recall@5", "hit@5", "precision@5", "ndcg@10"]
"""The metrics of the comparison table (and of the tests) unless the user names others."""


def per_query_values(report: RunReport, metric: str) -> NDArray[np.float64]:
    """One value per query in report order; NaN where the metric is missing."""
    out = np.full(len(report.queries), np.nan)
    for i, q in enumerate(report.queries):
        s = q.metrics.get(metric)
        if s is not None and s.value is not None:
            out[i] = s.value
    return out


def analyse(
    reports: dict[str, RunReport],
    baseline: str,
    metrics: Sequence[str],
    settings: StatSettings | None = None,
) -> tuple[dict[str, dict[str, Interval | None]], list[ComparisonRow]]:
    """Intervals for every metric of every report; tests of ``metrics`` vs the baseline."""
    st = settings or StatSettings()
    names = list(reports)
    ids = [q.id for q in reports[names[0]].queries]
    for n in names[1:]:
        if [q.id for q in reports[n].queries] != ids:
            raise ConfigError(f"config {n!r} did not answer the same questions as {names[0]!r}")
    intervals: dict[str, dict[str, Interval | None]] = {}
    for n, r in reports.items():
        intervals[n] = {
            m: mean_ci(per_query_values(r, m), st.confidence, st.n_resamples, st.seed)
            for m in r.metrics
            if m not in aggregates()
        }
    per_query = {n: {m: per_query_values(r, m) for m in metrics} for n, r in reports.items()}
    rows = compare_to_baseline(per_query, baseline, list(metrics), st.test, st.alpha, st.seed,
                               st.n_resamples, st.correction)
    return intervals, [_against_noise(r, reports[baseline], reports[r.config]) for r in rows]


def _against_noise(row: ComparisonRow, base: RunReport, other: RunReport) -> ComparisonRow:
    """``row`` not called significant when its difference is within the judges' own
    noise, as the two runs measured it (:func:`~ragmark.stats.noise.noise_band`)."""
    if not row.significant or row.baseline_mean is None or row.value_mean is None:
        return row
    band = noise_band([r.llm.get("judge_noise") or {} for r in (base, other)], row.metric,
                      row.n)
    if band is None or abs(row.value_mean - row.baseline_mean) > band:
        return row
    return replace(row, significant=False, judge_noise=round(band, 6))


def compare(
    dataset: Dataset,
    configs: Sequence[RunConfig],
    task: Task | None = None,
    *,
    baseline: str | None = None,
    compared: Sequence[str] | None = None,
    settings: StatSettings | None = None,
    progress: Progress | None = None,
    given: Mapping[str, Callable[..., Any] | Mapping[str, Output]] | None = None,
) -> Comparison:
    """Run every config on the same questions, as ``task`` says (a
    :class:`~ragmark.running.task.Task`), and compare each with the baseline (default:
    the first).

    The task's ``metrics``: what each run computes (default: the runner's defaults,
    fitted to each config's ``top_k``, and the table metrics at the shallowest config's
    depth); its ``also``: computed besides them (gated metrics). ``compared``: the
    metrics shown and tested, computed by every config (default: the table metrics the
    runs have, else all of ``metrics``). A metric named in ``metrics``, ``also`` or
    ``compared`` that cuts deeper than a config retrieves is a ConfigError before the
    first config runs. The task's ``executor``: where the CPU-bound stages run (default:
    the active one); on one that spreads work, the retrieval stages of the configs run
    side by side, and the LLM calls (generators, judges) still one config after the
    other. ``given``: by config name, the in-memory callable of a ``python`` pipeline, or
    a logged system's outputs (sample id -> output) scored instead of running it.
    """
    task = task or Task()
    if not configs:
        raise ConfigError("no configs to compare")
    names = [c.name for c in configs]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ConfigError(f"config names must be distinct; repeated: {', '.join(dup)}")
    base = baseline or names[0]
    if base not in names:
        raise ConfigError(f"baseline {base!r} is not one of the configs: {', '.join(names)}")
    with using(task.executor) as ex:
        table = _table(dataset, configs, task.metrics) if compared is None else []
        metrics, also, at_depth, note = _at_shallowest(
            configs, task.metrics, [*task.also, *(compared or ()), *table])
        task = replace(task, metrics=metrics, also=also, executor=None)
        for c in configs:  # every config's metrics are chosen before the first one runs
            select(dataset, c, metrics, also, allow_short_rankings=task.allow_short_rankings)
        done = _side_by_side(dataset, configs, task, progress) if ex.distributed else {}
        reports: dict[str, RunReport] = {}
        for c in configs:
            got = (given or {}).get(c.name)
            r = run(dataset, c, task, progress=progress, done=done.get(c.name),
                    pipeline_fn=got if callable(got) else None,
                    outputs=got if isinstance(got, Mapping) else None)
            reports[c.name] = replace(r, at_depth={**r.at_depth, **at_depth},
                                      notes=[note, *r.notes] if note else r.notes)
        info = ex.info()
    shown = _compared(reports[names[0]], compared, table)
    st = settings or StatSettings()
    intervals, rows = analyse(reports, base, shown, st)
    return Comparison(reports, base, shown, intervals, rows, st, dataset_hash(dataset), info)


def _compared(first: RunReport, compared: Sequence[str] | None, table: list[str]
              ) -> list[str]:
    """The metrics a comparison shows and tests: those asked for (as the first report
    names them), else the table metrics it has, else all it has."""
    if compared is None:
        shown = [m for m in table or TABLE_METRICS if m in first.metrics]
        return shown or [m for m in first.metrics if m not in aggregates()]

    out = [first.key(m if m in judge_metrics() else str(parse_metrics([m])[0]))
           for m in compared]
    missing = [m for m in out if m not in first.metrics]
    if missing:
        raise ConfigError(f"compared metrics not computed: {', '.join(missing)}")
    return out


def _table(dataset: Dataset, configs: Sequence[RunConfig],
           metrics: Sequence[str | MetricName] | None) -> list[str]:
    """With the default metrics, the table metrics every config computes: those of
    :data:`TABLE_METRICS` the dataset's defaults have, their cutoffs fitted to the
    shallowest config of ragmark's own pipeline (nDCG@5 when one retrieves 5 items)."""
    if metrics:
        return []
    depths = [c.top_k for c in configs if c.pipeline is None]
    names = parse_metrics(TABLE_METRICS)
    if depths:
        names, _ = fit_to_depth(names, min(depths))
        names, _ = uncut_at(names, min(depths))
    offered = {m.name for m in default_metrics(dataset)}
    return [str(m) for m in names if m.name in offered]


def _at_shallowest(configs: Sequence[RunConfig], metrics: Sequence[str | MetricName] | None,
                   also: Sequence[str | MetricName]
                   ) -> tuple[list[str] | None, list[str], dict[str, str], str]:
    """``metrics`` and ``also`` with every retrieval metric without a cutoff named at the
    depth of the shallowest config of ragmark's own pipeline, so that every config
    computes it alike (``map`` -> ``map@5`` when one retrieves 5 items); with the renamed
    ones (asked -> computed) and the note that says so. Unchanged without such a config."""
    depths: dict[int, str] = {}
    for c in configs:
        if c.pipeline is None:
            depths.setdefault(c.top_k, c.name)
    if not depths:
        return (None if not metrics else [str(m) for m in metrics]), [str(m) for m in also], (
            {}), ""
    depth = min(depths)
    renamed: dict[MetricName, MetricName] = {}

    def at(names: Sequence[str | MetricName]) -> list[str]:
        cut, more = uncut_at(parse_metrics(names), depth)
        renamed.update(more)
        return [str(m) for m in cut]

    new_metrics = at(metrics) if metrics else None
    new_also = at(also)
    own = [c.name for c in configs if c.pipeline is None]
    where = (f"config {own[0]!r} ranks {depth} items" if len(own) == 1 else
             f"every config ranks {depth} items" if len(depths) == 1 else
             f"the shallowest config ({depths[depth]!r}) ranks {depth} items")
    note = uncut_note(where, depth, renamed) if renamed else ""
    return new_metrics, new_also, {str(m): str(a) for m, a in renamed.items()}, note


def _side_by_side(dataset: Dataset, configs: Sequence[RunConfig], task: Task,
                  progress: Progress | None) -> dict[str, Retrieval]:
    """The retrieval stages of the configs of ragmark's own pipeline without an LLM
    reranker, each in a driver thread that hands its work to the executor."""
    own = [c for c in configs if c.pipeline is None and (
        c.reranker is None or c.reranker.name != "llm")]
    if len(own) < 2:
        return {}

    def one(c: RunConfig) -> Retrieval:
        return retrieval_of(dataset, c, task, progress)

    with ThreadPoolExecutor(max_workers=min(len(own), 4)) as pool:
        futures = {c.name: pool.submit(contextvars.copy_context().run, one, c) for c in own}
        return {name: f.result() for name, f in futures.items()}


def estimate_compare(dataset: Dataset, configs: Sequence[RunConfig], task: Task | None = None,
                     *, progress: Progress | None = None,
                     logged: Mapping[str, Mapping[str, Output]] | None = None
                     ) -> dict[str, dict[str, Any]]:
    """A dry run of :func:`compare`: per config, the judge calls not yet cached and their
    estimated prompt tokens and cost (see :func:`ragmark.running.judging.estimate`). Nothing is
    called. Each config is estimated on its own, so a call two configs share counts twice
    (a real run makes it once): the sum is an upper bound. ``logged``: the logged
    systems' outputs by config name."""
    return dry_compared(dataset, configs, task, progress=progress, logged=logged)[0]


def dry_compared(dataset: Dataset, configs: Sequence[RunConfig], task: Task | None = None,
                 *, progress: Progress | None = None,
                 logged: Mapping[str, Mapping[str, Output]] | None = None
                 ) -> tuple[dict[str, dict[str, Any]], dict[str, list[QueryRecord]]]:
    """:func:`estimate_compare`'s estimates, and each config's questions as its run would
    answer them (see :func:`ragmark.running.runner.dry_answered`)."""
    task = task or Task()
    if not configs:
        raise ConfigError("no configs to compare")
    for c in configs:
        select(dataset, c, task.metrics, task.also,
               allow_short_rankings=task.allow_short_rankings)
    got = {c.name: dry_answered(dataset, c, task, progress=progress,
                                outputs=(logged or {}).get(c.name)) for c in configs}
    return {n: g[0] for n, g in got.items()}, {n: g[1] for n, g in got.items()}
