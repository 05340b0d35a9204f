"""Command line: parse arguments, call the library, print, exit code. Wiring only.

Exit codes: 0 success, 1 a quality gate failed, 2 bad input or usage.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from ragmark import __version__
from ragmark.errors import ConfigError, RagmarkError


def _consoles(quiet: bool) -> tuple[Console, Any]:
    from ragmark.report.progress import RichProgress
    from ragmark.runner import NullProgress

    out = Console(highlight=False)
    err = Console(stderr=True)
    progress = NullProgress() if quiet or not err.is_terminal else RichProgress(err)
    return out, progress


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ragmark")
def cli() -> None:
    """ragmark: measure how well a RAG pipeline works, exactly and offline."""


@cli.command()
@click.option("--output", default="rag_eval_results.json", show_default=True,
              type=click.Path(dir_okay=False), help="Where to write the detailed JSON report.")
@click.option("--quiet", is_flag=True, help="No progress bars.")
def demo(output: str, quiet: bool) -> None:
    """Run the bundled demo: a small RAG corpus and keyword set, BM25 + extractive answers."""
    from ragmark.demo.run import run_demo

    out, progress = _consoles(quiet)
    run_demo(Path(output), out, progress)


def llm_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """Judge metrics and the LLM endpoint (flags override RAGMARK_LLM_* variables)."""
    opts = [
        click.option("--judge-metrics", help="Comma-separated LLM judge metrics: faithfulness, "
                     "answer_relevance, context_relevance, answer_correctness."),
        click.option("--llm-base-url", help="OpenAI-compatible or Ollama base URL "
                     "(default: $RAGMARK_LLM_BASE_URL)."),
        click.option("--llm-model", help="Model name (default: $RAGMARK_LLM_MODEL)."),
        click.option("--llm-api-key-env", help="NAME of the variable holding the API key "
                     "(default: $RAGMARK_LLM_API_KEY_ENV)."),
        click.option("--llm-provider", type=click.Choice(["openai", "ollama"]),
                     help="Protocol of the endpoint (default: openai)."),
        click.option("--llm-prices", help="'PROMPT,COMPLETION': $ per million tokens of the "
                     "model, for the cost estimate."),
        click.option("--require-llm", is_flag=True,
                     help="Fail (exit 2) when no endpoint is configured or it does not answer."),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def _llm_settings(base_url: str | None, model: str | None, api_key_env: str | None,
                  provider: str | None, prices: str | None = None) -> Any:
    """LLMSettings from the flags, each falling back to its RAGMARK_LLM_* variable; None
    when no base URL is given either way."""
    import os

    from ragmark.llm import LLMSettings

    def pick(flag: str | None, var: str) -> str | None:
        return flag or os.environ.get(var, "").strip() or None

    url = pick(base_url, "RAGMARK_LLM_BASE_URL")
    if url is None:
        return None
    values: dict[str, Any] = {"base_url": url, "model": pick(model, "RAGMARK_LLM_MODEL"),
              "api_key_env": pick(api_key_env, "RAGMARK_LLM_API_KEY_ENV"),
              "provider": pick(provider, "RAGMARK_LLM_PROVIDER") or "openai"}
    if not values["model"]:
        raise ConfigError("an LLM endpoint is set but no model: give --llm-model or set "
                          "RAGMARK_LLM_MODEL")
    if prices:
        try:
            a, b = (float(x) for x in prices.split(","))
        except ValueError:
            raise ConfigError(f"--llm-prices: expected 'PROMPT,COMPLETION' dollars per "
                              f"million tokens, e.g. '0.15,0.60'; got {prices!r}") from None
        values["prices"] = {values["model"]: (a, b)}
    try:
        return LLMSettings.model_validate(values)
    except ValueError as e:
        raise ConfigError(f"LLM settings: {e}") from None


@cli.command("run")
@click.option("--dataset", required=True, type=click.Path(exists=True),
              help="BEIR or Open RAG Benchmark folder, or a keyword/context set JSON(L) file.")
@click.option("--corpus", type=click.Path(exists=True),
              help="Corpus: folder of .txt/.md files, JSONL file, or BEIR folder.")
@click.option("--split", default="test", show_default=True, help="BEIR qrels split.")
@click.option("--config", "config", default="sparse", show_default=True,
              help="Built-in config name or a TOML file.")
@click.option("--top-k", type=click.IntRange(min=1), help="Items retrieved per question.")
@click.option("--top-n", type=click.IntRange(min=1), help="Contexts passed to the generator.")
@click.option("--unit", type=click.Choice(["auto", "chunk", "document"]),
              help="Judge rankings per chunk or per document (default: auto).")
@click.option("--metrics", help="Comma-separated metric names, e.g. 'ndcg@10,mrr,recall@5'.")
@click.option("--max-queries", type=click.IntRange(min=1), help="Evaluate the first N only.")
@click.option("--skip-generation", is_flag=True, help="Retrieval metrics only.")
@click.option("--output", default="eval/results.json", show_default=True,
              type=click.Path(dir_okay=False), help="JSON report path.")
@click.option("--run-file", type=click.Path(dir_okay=False),
              help="Also write a TREC run file (document level).")
@click.option("--include-details", is_flag=True, help="Per-query records in the JSON.")
@click.option("--verbose", is_flag=True, help="Print per-query metrics.")
@click.option("--quiet", is_flag=True, help="No progress bars.")
@llm_options
@click.option("--dry-run", is_flag=True,
              help="Count the judge calls, tokens and cost without calling anything.")
def run_cmd(dataset: str, corpus: str | None, split: str, config: str, top_k: int | None,
            top_n: int | None, unit: str | None, metrics: str | None, max_queries: int | None,
            skip_generation: bool, output: str, run_file: str | None, include_details: bool,
            verbose: bool, quiet: bool, judge_metrics: str | None, llm_base_url: str | None,
            llm_model: str | None, llm_api_key_env: str | None, llm_provider: str | None,
            llm_prices: str | None, require_llm: bool, dry_run: bool) -> None:
    """Evaluate one configuration on a dataset."""
    from ragmark.config import load_config
    from ragmark.data import load_dataset
    from ragmark.judging import parse_judge_metrics
    from ragmark.metrics.names import parse_metrics
    from ragmark.report.console import print_report
    from ragmark.report.json_writer import report_json, write_json
    from ragmark.report.trec_run import write_trec_run
    from ragmark.runner import run

    out, progress = _consoles(quiet)
    names = parse_metrics(metrics) if metrics else None
    judges = parse_judge_metrics(judge_metrics)
    llm = _llm_settings(llm_base_url, llm_model, llm_api_key_env, llm_provider,
                        llm_prices) if (judges or require_llm) else None
    if dry_run and not judges:
        raise ConfigError("--dry-run estimates judge calls: give --judge-metrics too")
    cfg = load_config(config, top_k=top_k, top_n=top_n, unit=unit)
    if names and top_k is None:
        deepest = max((m.k or 0 for m in names if m.kind == "retrieval"), default=0)
        if deepest > cfg.top_k:
            cfg = cfg.model_copy(update={"top_k": deepest})
    ds = load_dataset(dataset, corpus, split)
    report = run(ds, cfg, names, max_queries=max_queries, skip_generation=skip_generation,
                 progress=progress, judge_metrics=judges, llm=llm, require_llm=require_llm,
                 dry_run=dry_run)
    if dry_run:
        est = report.llm["dry_run"]
        if est.get("endpoint") is None:
            out.print(f"dry run: {est['note']}")
            return
        cost = est["estimated_cost"]
        out.print(
            f"dry run: {est['calls']} judge calls to {est['model']} at {est['endpoint']} "
            f"({est['cached']} more already cached), about {est['estimated_prompt_tokens']:,} "
            "prompt tokens (characters / 4); estimated cost "
            + ("unknown (give --llm-prices)" if cost is None else f"${cost:.4f} (prompt tokens)")
            + ". Nothing was called and no results were written.",
            highlight=False, soft_wrap=True,
        )
        return
    print_report(report, out, verbose=verbose)
    path = write_json(report_json(report, include_details), output)
    out.print(f"Results written to {path}")
    if run_file:
        out.print(f"TREC run written to {write_trec_run(report, run_file)}")


@cli.command("compare")
@click.option("--dataset", required=True, type=click.Path(exists=True),
              help="BEIR or Open RAG Benchmark folder, or a keyword/context set JSON(L) file.")
@click.option("--corpus", type=click.Path(exists=True), help="Corpus, as for 'run'.")
@click.option("--split", default="test", show_default=True, help="BEIR qrels split.")
@click.option("--configs", "configs", multiple=True, default=["sparse"], show_default=True,
              help="Config names (sparse, dense, hybrid, hybrid-rerank) or TOML files; "
                   "repeat, or list them after the flag.")
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
@click.argument("more_configs", nargs=-1)
def compare_cmd(dataset: str, corpus: str | None, split: str, configs: tuple[str, ...],
                baseline: str | None, metrics: str | None, top_k: int | None,
                max_queries: int | None, skip_generation: bool, test: str, alpha: float,
                resamples: int, seed: int, output: str, quiet: bool,
                judge_metrics: str | None, llm_base_url: str | None, llm_model: str | None,
                llm_api_key_env: str | None, llm_provider: str | None, llm_prices: str | None,
                require_llm: bool, more_configs: tuple[str, ...]) -> None:
    """Run several configurations on the same questions and compare them.

    Writes {output}.json (per config: metrics, intervals, per-query values, timings;
    every comparison with its p-value) and {output}.md, and prints the table.
    """
    from ragmark.compare import StatSettings, compare
    from ragmark.config import load_configs
    from ragmark.data import load_dataset
    from ragmark.judging import JUDGE_METRICS, parse_judge_metrics
    from ragmark.metrics.names import parse_metrics
    from ragmark.report.json_writer import comparison_json, write_json
    from ragmark.report.markdown import comparison_markdown
    from ragmark.runner import default_metrics

    out, progress = _consoles(quiet)
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
    llm = _llm_settings(llm_base_url, llm_model, llm_api_key_env, llm_provider,
                        llm_prices) if (judges or require_llm) else None
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


def _invoke(args: Sequence[str] | None, prog_name: str) -> int:
    try:
        cli.main(args=args, prog_name=prog_name, standalone_mode=False)
    except RagmarkError as e:
        click.echo(f"error: {e}", err=True)
        return e.exit_code
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        return 130
    except click.ClickException as e:
        e.show()
        return 2
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        return 130
    return 0


def main(args: Sequence[str] | None = None) -> None:
    """Entry point of the ``ragmark`` command."""
    sys.exit(_invoke(args, "ragmark"))


def evaluate_rag_main(args: Sequence[str] | None = None) -> None:
    """Entry point of ``evaluate-rag``: an alias for ``ragmark compare``."""
    argv = list(sys.argv[1:] if args is None else args)
    sys.exit(_invoke(["compare", *argv], "evaluate-rag"))
