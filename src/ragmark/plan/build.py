"""Requests become plans: every check that can fail is made here, before any question is
asked (output paths first, then names, then the data), and every decision the run needs
(which metrics, how deep, which judges the gates or the human labels add, which endpoint)
is taken once. The command line, the Python API and the pytest fixture all call
:func:`plan_run` and :func:`plan_compare`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragmark.analysis.human_labels import read_human_labels
from ragmark.annotate.export import human_labels
from ragmark.annotate.store import queue_of
from ragmark.config import RunConfig, check_regexes, load_configs
from ragmark.config import with_language as in_language
from ragmark.config_judges import agreeing
from ragmark.data.nugget_files import with_nuggets
from ragmark.data.run_scores import read_run_scores
from ragmark.errors import ConfigError
from ragmark.llm import LLMSettings
from ragmark.matching import match_threshold
from ragmark.plan.endpoint import model_at, resolve_llm
from ragmark.plan.gating import regression_metrics
from ragmark.plan.metric_choice import choose, select, thresholds
from ragmark.plan.model import Gating, Options, Plan, Targets
from ragmark.plan.pairwise import check_judge, check_references, pairwise_of
from ragmark.plan.paths import check_targets, output_stem
from ragmark.plan.request import CompareRequest, Request, RunRequest
from ragmark.plan.sources import (
    closed_on_error,
    executor_of,
    leniency,
    load,
    logged_systems,
    run_config,
    source_of,
)
from ragmark.report.writers import parse_formats, paths_of
from ragmark.running.compare import StatSettings
from ragmark.running.pooling import read_extra, with_extra
from ragmark.running.selection import every_metric

if TYPE_CHECKING:
    from ragmark.config import RunConfig
    from ragmark.llm import LLMSettings
    from ragmark.metrics.names import MetricName
    from ragmark.types import Dataset


def plan_run(req: RunRequest) -> Plan:
    """The plan of ``ragmark run``."""
    targets = _targets(req, "run")
    gated = regression_metrics(req.regression, req.against)
    run_config(req)  # its own judges ([judges.NAME] criteria) are metrics before any is read
    sel = select(req.metrics, req.judge_metrics)
    human = _labelled(req.human_labels, req.history, req.store)
    if human is not None and any(m.startswith("pairwise:") for m in human.metrics):
        raise ConfigError(f"--human-labels {req.human_labels}: preferences between two "
                          "configs' answers correct a pairwise win rate: give them to "
                          "'ragmark compare --pairwise'")
    under, most = thresholds(req.fail_under, req.max_missing, None)
    # --metrics naming judges only computes those judges, not the defaults beside them
    chosen = choose(sel, computed=() if sel.names is None and sel.named_judges else sel.names,
                    human=() if human is None else human.metrics,
                    gates=[*(t.metric for t in (*under, *most)), *gated])
    if req.dry_run and not chosen.judges:
        raise ConfigError("--dry-run estimates judge calls: give --judge-metrics too")
    ex = executor_of(req)  # a wrong Ray address fails before the data is read
    with closed_on_error(ex):
        src = source_of(req, None if sel.names is None else list(sel.names))
        ds, pooled = _with_extra(_with_nuggets(src.dataset, req), req.qrels_extra)
        cfg = with_match(with_language(with_refusals(src.config, req.refusal_patterns,
                                                     req.refusal_judge), req.language),
                         req.context_match)
        notes: list[str] = []
        if sel.every:  # every metric whose needs the data, the endpoint and the extras meet
            names, more, notes = _every(req, ds, [cfg], own=src.outputs is None,
                                        answers=not src.retrieval_only)
            chosen = chosen.with_every(names, more)
        if req.run_file:  # ids a TREC line cannot hold fail now, not after the run
            from ragmark.report.trec_run import check_trec_ids

            check_trec_ids((s.id for s in ds.samples), "question")
            if src.outputs is None and cfg.pipeline is None:
                check_trec_ids((d.id for d in ds.corpus.documents), "document")
        llm, (cfg,) = _endpoint(req, [cfg], need=bool(
            chosen.judges or req.require_llm or cfg.refusal_judge))
        return Plan(
            kind="run", dataset=ds, configs=(cfg,), metrics=chosen.metrics,
            also=chosen.also, judges=chosen.judges, llm=llm,
            options=_options(req, llm, skip_generation=req.skip_generation
                             or src.retrieval_only),
            gating=Gating(tuple(under), tuple(most), req.allow_missing, tuple(gated),
                          req.against, req.gate_alpha, req.margin, req.history),
            targets=targets, outputs=src.outputs,
            pipelines={cfg.name: req.pipeline} if req.pipeline is not None else {},
            human=human, executor=ex, notes=tuple(notes) + src.notes,
            trailing_notes=src.trailing, pooled=pooled)


def plan_compare(req: CompareRequest) -> tuple[Plan, list[str]]:
    """The plan of ``ragmark compare``, and the notes to tell before it runs."""
    from ragmark.plan.gating import split_gates

    targets = _targets(req, "compare")
    regressed = regression_metrics(req.regression, req.against, pairwise=True)
    told: list[str] = []
    if req.search_tools and not req.outputs:
        from ragmark.plan.sources import SEARCH_TOOL

        raise ConfigError(SEARCH_TOOL)
    early = _with_nuggets(load(req), req) if req.outputs else None  # logs join its questions
    cfgs, logged, early = (_configs(req, told), {}, None) if early is None else (
        logged_systems(req, early, told))
    agreeing(cfgs)  # one definition of each criterion the configs judge by
    pairwise_gated = split_gates(req.regression)[1]
    sel = select(req.metrics, req.judge_metrics)  # unknown names fail before any work
    human = _labelled(req.human_labels, req.history, req.store)
    preferred = [] if human is None else [m.partition(":")[2] for m in human.metrics
                                          if m.startswith("pairwise:")]
    pairwise = pairwise_of(req, len(cfgs), [*pairwise_gated, *preferred])
    under, most = thresholds(req.fail_under, req.max_missing, [c.name for c in cfgs])
    # a group (claims, nuggets) stands for its metrics, judged like any judge metric
    chosen = choose(sel, computed=req.run_metrics or None, compared=sel.given,
                    human=() if human is None else human.metrics,
                    gates=[*(t.metric for t in (*under, *most)), *regressed])
    if req.dry_run and not chosen.judges and pairwise is None:
        raise ConfigError("--dry-run estimates judge calls: give --judge-metrics (or "
                          "--pairwise) too")
    ex = executor_of(req)  # a wrong Ray address fails before the data is read
    with closed_on_error(ex):
        ds, pooled = _with_extra(early if early is not None else _with_nuggets(load(req), req),
                                 req.qrels_extra)
        check_references(pairwise, ds)
        if sel.every:  # every metric whose needs the data, the endpoint and the extras meet
            all_names, more, fit_notes = _every(req, ds, cfgs)
            told += fit_notes
            chosen = chosen.with_every(all_names, more)
        llm, cfgs = _endpoint(req, cfgs, need=bool(
            chosen.judges or pairwise or req.require_llm or any(c.refusal_judge for c in cfgs)))
        if pairwise is not None and not req.dry_run:
            check_judge(llm)  # before any config runs
        stats = req.stats or StatSettings(test=req.test, alpha=req.alpha,
                                          n_resamples=req.resamples, seed=req.seed,
                                          correction=req.correction)
        plan = Plan(
            kind="compare", dataset=ds, configs=tuple(cfgs), metrics=chosen.metrics,
            also=chosen.also, judges=chosen.judges, compared=chosen.compared,
            baseline=req.baseline, stats=stats, llm=llm, options=_options(req, llm),
            gating=Gating(tuple(under), tuple(most), req.allow_missing, tuple(regressed),
                          req.against, req.alpha, req.margin, req.history,
                          tuple(pairwise_gated)),
            targets=targets, pipelines=dict(req.pipelines), logged=logged, human=human,
            executor=ex, pooled=pooled, pairwise=pairwise, rank_against=_ranked(req))
    return plan, told


def _every(req: Request, ds: Dataset, cfgs: Sequence[RunConfig], *, own: bool = True,
           answers: bool = True) -> tuple[list[MetricName], list[str], list[str]]:
    """``--metrics all``: every metric whose needs the data, the endpoint and the extras
    meet, cutoffs fitted to the shallowest config of ragmark's own pipeline (``own``:
    the configs run, not logged outputs scored)."""
    endpoint, _ = _endpoint(req, cfgs, need=True)
    depths = {c.top_k: c.name for c in cfgs if own and c.pipeline is None}
    depth = min(depths) if depths else None
    return every_metric(ds, llm=endpoint is not None,
                        answers=answers and not req.skip_generation, depth=depth,
                        name=depths.get(depth or 0, ""))


def _labelled(path: str | None, history: str | Path | None = None,
              store: str | Path | None = None) -> Any:
    """The human labels (read now, before any work), or None."""
    if path is None:
        return None

    queue = queue_of(path)
    return read_human_labels(path) if queue is None else human_labels(queue, history, store)


def _targets(req: Request, kind: str) -> Targets:
    """The files the results go to, every path checked before any data is read (none in
    a dry run, which writes nothing)."""
    if req.output is None and req.formats is None:
        formats: list[str] = []
    else:
        formats = parse_formats(req.formats, kind)
    stem = None if req.output is None else Path(
        output_stem(req.output, "results" if kind == "run" else "eval"))
    if req.dry_run:
        return Targets(tuple(formats), stem)
    run_file = getattr(req, "run_file", None)
    hist = check_targets(paths_of(formats, stem) if stem is not None else (),
                         history=req.history, no_history=req.no_history, junit=req.junit,
                         run_file=run_file)
    return Targets(tuple(formats), stem, run_file, req.junit, hist,
                   req.include_details, req.step_summary)


def _options(req: Request, llm: LLMSettings | None, *, skip_generation: bool | None = None
             ) -> Options:
    if req.judge_temperature is not None and req.judge_repeats == 1:
        raise ConfigError("--judge-temperature is the temperature of the judges' repeats: "
                          "give --judge-repeats N (N at least 2) too")
    return Options(jurors=jurors_of(req.judge_llms, llm),mean=req.mean, max_queries=req.max_queries,
                   skip_generation=req.skip_generation if skip_generation is None
                   else skip_generation, allow_short_rankings=req.allow_short_rankings,
                   index_cache=not req.no_index_cache, latency_sample=req.latency_sample,
                   require_llm=req.require_llm, judge_repeats=req.judge_repeats,
                   judge_temperature=req.judge_temperature)


def jurors_of(given: Sequence[str], llm: LLMSettings | None) -> tuple[LLMSettings, ...]:
    """``--judge-llm MODEL[@URL]`` (repeated): each juror's endpoint, the judges' own
    (``llm``) with that model and, after ``@``, that base URL; none without the flag."""
    if not given:
        return ()
    if len(given) < 2:
        raise ConfigError("--judge-llm: a jury needs two jurors or more (give the flag once "
                          "a juror); one judge is --llm-model")
    if llm is None:
        raise ConfigError("--judge-llm: the jurors share the judges' endpoint settings: give "
                          "--llm-base-url (or [llm] base_url), the URL of those without @URL")
    out = [llm.model_copy(update=model_at(text, "--judge-llm")) for text in given]
    models = [j.model for j in out]
    twice = sorted({m for m in models if models.count(m) > 1})
    if twice:
        raise ConfigError(f"--judge-llm: juror {twice[0]!r} given twice; the jurors are "
                          "named by their models, which must differ")
    return tuple(out)


def _with_extra(ds: Dataset, path: str | None) -> tuple[Dataset, dict[str, Any] | None]:
    """The dataset with ``--qrels-extra`` applied (read before any work), and what was
    added."""
    if path is None:
        return ds, None

    return with_extra(ds, read_extra(path), path)


def _ranked(req: CompareRequest) -> tuple[str, dict[str, float]] | None:
    """``--rank-against``'s file and its scores (read before any work)."""
    if req.rank_against is None:
        return None

    return req.rank_against, read_run_scores(req.rank_against, req.encoding)


def _with_nuggets(ds: Dataset, req: Request) -> Dataset:
    """The dataset with the nuggets of ``--nuggets`` (read before any work)."""
    if req.nuggets is None:
        return ds

    return with_nuggets(ds, req.nuggets, leniency(req))


def _configs(req: CompareRequest, told: list[str]) -> list[RunConfig]:
    specs: list[Any] = [n for c in req.configs for n in (
        str(c).split() if not isinstance(c, RunConfig | Path) else [c])]
    if not specs:
        from ragmark.plan.sources import default_configs

        specs, note = default_configs()
        if note:
            told.append(note)
    return [with_match(with_language(with_refusals(c, req.refusal_patterns,
                                                   req.refusal_judge), req.language),
                       req.context_match) for s in specs for c in (
        [s] if isinstance(s, RunConfig) else load_configs(s, top_k=req.top_k))]


def with_match(cfg: RunConfig, rule: str | None) -> RunConfig:
    """``--context-match RULE``: the config with that context match rule (recorded in
    it); the similarity rule needs rapidfuzz, checked now, before any work."""
    rule = rule if rule is not None else cfg.context_match

    try:
        threshold = match_threshold(rule.strip())
    except ValueError as e:
        raise ConfigError(f"--context-match: {e}") from None
    if threshold is not None:
        import importlib.util

        if importlib.util.find_spec("rapidfuzz") is None:
            from ragmark.errors import MissingExtraError

            raise MissingExtraError("rapidfuzz", "match")
    return cfg.model_copy(update={"context_match": "contains" if threshold is None
                                  else f"similarity:{threshold:g}"})


def with_language(cfg: RunConfig, language: str | None) -> RunConfig:
    """``--language``: the config in that language (see :func:`ragmark.config.with_language`)."""
    if language is None:
        return cfg

    return in_language(cfg, language)


def with_refusals(cfg: RunConfig, patterns: Sequence[str], judge: bool = False
                  ) -> RunConfig:
    """The config with the ``--refusal-pattern`` flags added to its own patterns (each
    checked as a regular expression), and the refusal judge on with ``--refusal-judge``."""
    if judge and not cfg.refusal_judge:
        cfg = cfg.model_copy(update={"refusal_judge": True})
    if not patterns:
        return cfg

    try:
        check_regexes(patterns, "--refusal-pattern")
    except ValueError as e:
        raise ConfigError(str(e)) from None
    return cfg.model_copy(update={"refusal_patterns": (*cfg.refusal_patterns, *patterns)})


def _endpoint(req: Request, configs: Sequence[RunConfig], *, need: bool
              ) -> tuple[LLMSettings | None, list[RunConfig]]:
    """The judges' endpoint: the request's settings as given (the Python API), else the
    flags over the configs' ``[llm]`` tables over the environment."""
    if req.llm is not None:
        return _settings(req.llm), list(configs)
    return resolve_llm(configs, req.llm_flags, need=need)


def _settings(llm: Any) -> LLMSettings:
    if isinstance(llm, LLMSettings):
        return llm
    try:
        return LLMSettings.model_validate(dict(llm))
    except ValueError as e:
        raise ConfigError(f"llm: {e}") from None
