"""`ragmark compare`: several configurations on the same questions."""

from __future__ import annotations

from pathlib import Path

import click

from ragmark.cli.app import cli, configs_options, consoles
from ragmark.cli.llm_opts import dry_run_text, llm_options, resolve_llm
from ragmark.errors import ConfigError


@cli.command("compare")
@configs_options
@click.option("--baseline", help="Config the others are compared against (default: first).")
@click.option("--metrics", help="Comma-separated metrics to compare (default: MRR, Recall@5, "
                                "Hit@5, Precision@5, nDCG@10).")
@click.option("--top-k", type=click.IntRange(min=1), help="Items retrieved per question.")
@click.option("--max-queries", type=click.IntRange(min=1), help="Evaluate the first N only.")
@click.option("--skip-generation", is_flag=True, help="Retrieval only: no answers.")
@click.option("--test", "test", type=click.Choice(["permutation", "t"]), default="permutation",
              show_default=True, help="Paired significance test.")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True),
              default=0.05, show_default=True, help="Significance level (after Holm).")
@click.option("--resamples", type=click.IntRange(min=100), default=10_000, show_default=True,
              help="Bootstrap and permutation resamples.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the resampling: reruns print the same numbers.")
@click.option("--output", default="results/eval", show_default=True,
              help="Writes {output}.json and {output}.md.")
@click.option("--quiet", is_flag=True, help="No progress bars.")
@llm_options
@click.option("--dry-run", is_flag=True,
              help="Count each config's judge calls, tokens and cost without calling anything.")
@click.argument("more_configs", nargs=-1)
def compare_cmd(dataset: str, corpus: str | None, split: str, configs: tuple[str, ...],
                baseline: str | None, metrics: str | None, top_k: int | None,
                max_queries: int | None, skip_generation: bool, test: str, alpha: float,
                resamples: int, seed: int, output: str, quiet: bool,
                judge_metrics: str | None, require_llm: bool, dry_run: bool,
                more_configs: tuple[str, ...]) -> None:
    """Run several configurations on the same questions and compare them.

    Writes {output}.json (per config: metrics, intervals, per-query values, timings;
    every comparison with its p-value) and {output}.md, and prints the table.
    """
    from ragmark.compare import StatSettings, compare, estimate_compare
    from ragmark.config import load_configs
    from ragmark.data import load_dataset
    from ragmark.judging import JUDGE_METRICS, parse_judge_metrics
    from ragmark.metrics.names import parse_metrics
    from ragmark.report.json_writer import comparison_json, write_json
    from ragmark.report.markdown import comparison_markdown
    from ragmark.runner import default_metrics

    out, progress = consoles(quiet)
    names = [n for c in (*configs, *more_configs) for n in c.split()]
    cfgs = [cfg for n in names for cfg in load_configs(n, top_k=top_k)]
    compared = [m.strip() for m in metrics.split(",") if m.strip()] if metrics else None
    judges = parse_judge_metrics(judge_metrics)
    if compared:  # unknown names fail before any work; judge metrics are judged, not run
        judges += [m for m in parse_judge_metrics(
            [m for m in compared if m in JUDGE_METRICS]) if m not in judges]
        parse_metrics([m for m in compared if m not in JUDGE_METRICS])
    ds = load_dataset(dataset, corpus, split)
    run_metrics = None
    if compared:  # the dataset's default metrics, plus whatever the user compares
        have = [str(m) for m in default_metrics(ds)]
        run_metrics = have + [m for m in compared if m not in have and m not in JUDGE_METRICS]
    llm, cfgs = resolve_llm(cfgs, need=bool(judges or require_llm))
    if dry_run:
        if not judges:
            raise ConfigError("--dry-run estimates judge calls: give --judge-metrics too")
        estimates = estimate_compare(ds, cfgs, run_metrics, max_queries=max_queries,
                                     skip_generation=skip_generation, progress=progress,
                                     judge_metrics=judges, llm=llm)
        out.print(dry_run_text(estimates), highlight=False, soft_wrap=True)
        return
    settings = StatSettings(test=test, alpha=alpha, n_resamples=resamples, seed=seed)
    result = compare(ds, cfgs, run_metrics, baseline, compared=compared, settings=settings,
                     max_queries=max_queries, skip_generation=skip_generation,
                     progress=progress, judge_metrics=judges, llm=llm,
                     require_llm=require_llm)
    md = comparison_markdown(result)
    out.print(md, markup=False, highlight=False, soft_wrap=True)
    json_path = write_json(comparison_json(result), f"{output}.json")
    md_path = Path(f"{output}.md")
    md_path.parent.mkdir(parents=True, exist_ok=True)
    md_path.write_text(md, encoding="utf-8")
    out.print(f"Results written to {json_path} and {md_path}")
