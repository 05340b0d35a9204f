"""`ragmark label`: LLM relevance labels for every config's top K, metrics at every k."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ragmark.cli.app import (
    cli,
    configs_options,
    consoles,
    data_options,
    executor_options,
    format_option,
    history_options,
    leniency,
    open_executor,
    warn_data,
)
from ragmark.cli.llm_opts import dry_run_text, endpoint_options, resolve_llm
from ragmark.errors import ConfigError
from ragmark.report.console import llm_line


def _read_template(path: str | None) -> str | None:
    if path is None:
        return None
    try:
        return Path(path).read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as e:
        raise ConfigError(f"--prompt-template {path}: not valid UTF-8 ({e.reason} at byte "
                          f"{e.start})") from None
    except OSError as e:
        raise ConfigError(f"--prompt-template {path}: cannot be read: {e.strerror}") from None


def _pool(out: Any, ds: Any, top: Any, settings: Any, template: str | None, progress: Any,
          dry_run: bool, path: str) -> None:
    """``label --pool``: judge the unjudged documents of every config's top K."""
    from ragmark.labeling import estimate
    from ragmark.labeling.run import label_pairs
    from ragmark.pooling import pool, write_extended_qrels

    items = pool(ds, top.reports, top.top_k)
    pairs = [(it.question, it.text) for it in items]
    if dry_run:
        est = estimate(pairs, settings, template)
        out.print(f"{len(items):,} unjudged documents in the top {top.top_k} of "
                  f"{len(top.reports)} configs.", highlight=False)
        out.print(dry_run_text({"pool": est}, what="label"), highlight=False, soft_wrap=True)
        return
    labels, llm = label_pairs(pairs, settings, template, progress)
    counts = write_extended_qrels(path, ds, items, [labels[p] for p in pairs],
                                  settings.model)
    out.print(f"Pooled {len(items):,} unjudged documents of the top {top.top_k} of "
              f"{len(top.reports)} configs: {counts['llm_relevant']} judged relevant, "
              f"{counts['llm_not_relevant']} not, {counts['unlabelled']} without a label; "
              f"{counts['original']:,} original judgments kept.", highlight=False)
    out.print(llm_line("labels", llm), highlight=False, soft_wrap=True)
    out.print(f"Extended qrels written to {path} (use: ragmark run --qrels-extra {path})",
              highlight=False)


def _side_by_side(out: Any, top: Any, judges: list[Any], template: str | None,
                  progress: Any, output: str, fmts: Any) -> None:
    """``label --judge-model A --judge-model B``: each judge's files, and the summary."""
    import re

    from ragmark.labeling import label_json, label_markdown
    from ragmark.labeling.judges import side_by_side, summary_lines
    from ragmark.plan.paths import check_output
    from ragmark.report.json_writer import write_json
    from ragmark.report.writers import Written, write_all
    from ragmark.versions import versions

    stems = {s.model: f"{output}.{re.sub(r'[^A-Za-z0-9_.-]+', '_', s.model)}" for s in judges}
    for stem in [*stems.values(), f"{output}.judges"]:
        for suffix in (".json", ".md"):
            check_output(stem + suffix, "--output")
    runs, summary = side_by_side(top, judges, template, progress)
    written = []
    for model, result in runs.items():
        out.print(f"## judge {model}", highlight=False)
        out.print(label_markdown(result), markup=False, highlight=False, soft_wrap=True)
        out.print(llm_line("labels", result.llm), highlight=False, soft_wrap=True)
        written += write_all(fmts, Written("label", result, label_json(result, versions()),
                                           Path(stems[model])))
    for line in summary_lines(summary):
        out.print(line, highlight=False, soft_wrap=True)
    written.append(write_json(summary, f"{output}.judges.json"))
    out.print("Results written to " + ", ".join(str(p) for p in written))


@cli.command("label")
@configs_options
@click.option("--top-k", type=click.IntRange(min=1), default=10, show_default=True,
              help="Passages labelled per question and config (metrics at k = 1..K).")
@click.option("--max-queries", type=click.IntRange(min=1), help="Label the first N only.")
@click.option("--prompt-template", type=click.Path(exists=True, dir_okay=False),
              help="File with the judge's user message; {question} and {passage} (or "
                   "{query} and {document}) are replaced by the fenced texts.")
@click.option("--output", default="results/label", show_default=True,
              help="Writes {output}.json and {output}.md (and with --plot {output}.png, "
                   "{output}.svg).")
@click.option("--plot", is_flag=True,
              help="Plot answer presence against k, one line per config (needs "
                   "ragmark[plot]).")
@click.option("--dry-run", is_flag=True,
              help="Count the label calls, tokens and cost without calling anything.")
@click.option("--pool", is_flag=True,
              help="Judge the documents of every config's top K that the qrels do not "
                   "judge, and write {output}.qrels.tsv: the qrels extended with the LLM's "
                   "judgments, marked (for run/compare --qrels-extra).")
@click.option("--judge-model", "judge_models", multiple=True,
              help="A label judge model at the endpoint; repeat it to compare judges side "
                   "by side (each writes {output}.MODEL.json/.md; their agreement is "
                   "printed and written to {output}.judges.json).")
@click.option("--quiet", is_flag=True, help="No progress bars.")
@format_option("json,md")
@click.option("--allow-missing", is_flag=True,
              help="Do not exit 1 when no question of a config got a label.")
@data_options
@history_options
@endpoint_options
@executor_options
@click.argument("more_configs", nargs=-1)
def label_cmd(dataset: str, corpus: str | None, split: str, configs: tuple[str, ...],
              top_k: int, max_queries: int | None, prompt_template: str | None, output: str,
              plot: bool, dry_run: bool, pool: bool, judge_models: tuple[str, ...],
              quiet: bool, formats: str | None,
              allow_missing: bool, strict: bool,
              encoding: str | None, history: str | None, no_history: bool,
              executor_name: str, address: str | None, more_configs: tuple[str, ...]) -> None:
    """Label each config's top K passages with an LLM judge (can an answer to the
    question be derived from the passage? YES/NO) and report, at every k from 1 to K,
    precision, recall, accuracy, number relevant and answer presence, averaged over the
    questions; with ground truth, also the judge's agreement with it.

    Writes {output}.json (per config: means at every k with the questions covered,
    every passage's label, agreement; the LLM accounting) and {output}.md, and prints
    the tables. Needs an LLM endpoint.
    """
    from ragmark.config import load_configs
    from ragmark.data import load_dataset
    from ragmark.labeling import (
        check_template,
        curve,
        estimate,
        label,
        label_json,
        label_markdown,
        top_k_passages,
    )
    from ragmark.labeling.run import NO_ENDPOINT
    from ragmark.plan.paths import check_targets, output_stem
    from ragmark.report.plot import plot_curves, require_matplotlib
    from ragmark.versions import versions

    out, progress = consoles(quiet)
    from ragmark.report.writers import Written, parse_formats, paths_of, write_all

    output = output_stem(output, "label")
    fmts = parse_formats(formats, "label")
    hist = None
    if pool and not dry_run:
        from ragmark.plan.paths import check_output

        check_output(f"{output}.qrels.tsv", "--output")
    elif not dry_run:  # before any data is read
        plots = [f"{output}{suffix}" for suffix in ((".png", ".svg") if plot else ())]
        hist = check_targets([*paths_of(fmts, Path(output)), *plots], history=history,
                             no_history=no_history)
    names = [n for c in (*configs, *more_configs) for n in c.split()]
    settings, cfgs = resolve_llm([cfg for n in names for cfg in load_configs(n)],
                                 model=judge_models[0] if judge_models else None)
    if settings is None:
        raise ConfigError(NO_ENDPOINT)
    template = _read_template(prompt_template)
    check_template(template, f"--prompt-template {prompt_template}")
    if plot and not dry_run:
        require_matplotlib()
    ex = open_executor(executor_name, address)
    ds = load_dataset(dataset, corpus, split, leniency(strict, encoding))
    warn_data(ds.warnings)
    top = top_k_passages(ds, cfgs, top_k, max_queries=max_queries, progress=progress,
                         executor=ex)
    if pool:
        _pool(out, ds, top, settings, template, progress, dry_run, f"{output}.qrels.tsv")
        return
    if len(judge_models) > 1:
        if dry_run:
            for m in judge_models:
                est = estimate(top.pairs(), settings.model_copy(update={"model": m}),
                               template)
                out.print(dry_run_text({m: est}, what="label"), highlight=False,
                          soft_wrap=True)
            return
        _side_by_side(out, top, [settings.model_copy(update={"model": m})
                                 for m in judge_models], template, progress, output, fmts)
        return
    if judge_models:
        settings = settings.model_copy(update={"model": judge_models[0]})
    if dry_run:
        est = estimate(top.pairs(), settings, template)
        out.print(dry_run_text({"label": est}, what="label"), highlight=False, soft_wrap=True)
        return
    result = label(top, settings, template, progress)
    md = label_markdown(result)
    out.print(md, markup=False, highlight=False, soft_wrap=True)
    out.print(llm_line("labels", result.llm), highlight=False, soft_wrap=True)
    data = label_json(result, versions())
    written = write_all(fmts, Written("label", result, data, Path(output)))
    if plot:
        curves = {n: curve(c, "answer_presence", result.top_k)
                  for n, c in result.configs.items()}
        written += plot_curves(curves, output, ylabel="answer presence@k",
                               title=f"Answer presence@k: {result.dataset.get('name')}")
    out.print("Results written to " + ", ".join(str(p) for p in written))
    json_path = Path(f"{output}.json") if "json" in fmts else (written[0] if written else None)
    if hist is not None:
        from ragmark.history import record_results

        run_id = record_results(hist, data["envelope"], result, json_path)
        out.print(f"Recorded in the run history as {run_id} ({hist})", highlight=False)
    from ragmark.gates import GateFailed, label_failures

    failed = [] if allow_missing else label_failures(result.configs, result.top_k)
    if failed:
        raise GateFailed(failed)
