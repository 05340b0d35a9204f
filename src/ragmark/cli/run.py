"""`ragmark run`: one configuration on a dataset."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from ragmark.cli.app import (
    cli,
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
from ragmark.cli.ci import regression_options
from ragmark.cli.llm_opts import dry_run_text, labelled_judges, llm_options, resolve_llm
from ragmark.errors import ConfigError

if TYPE_CHECKING:
    from ragmark.metrics.names import MetricName


@cli.command("run")
@click.option("--dataset", type=click.Path(exists=True),
              help="BEIR or Open RAG Benchmark folder, or a keyword/context set JSON(L) file.")
@click.option("--outputs", "outputs_path", type=click.Path(exists=True, dir_okay=False),
              help="Score a system's logged outputs instead: JSONL of {question, answer, "
                   "contexts, ground_truth_contexts?, expected_answer?, ...}; with "
                   "--dataset, the dataset's ground truth scores them (joined by id, else "
                   "question text). Not with --config.")
@click.option("--run-file-in", "run_file_in", type=click.Path(exists=True, dir_okay=False),
              help="Score a TREC run file (qid Q0 docid rank score tag) against --dataset's "
                   "ground truth, as trec_eval would; retrieval metrics only.")
@click.option("--corpus", type=click.Path(exists=True),
              help="Corpus: folder of .txt/.md files, JSONL file, or BEIR folder.")
@click.option("--split", default="test", show_default=True, help="BEIR qrels split.")
@click.option("--config", "config",
              help="Built-in config name or a TOML file (default: sparse).")
@click.option("--name", "system_name", metavar="NAME",
              help="The system's name in the results and the history (default: the "
              "outputs file's stem, or the config's name): today's log named as "
              "yesterday's is gated and diffed against it.")
@click.option("--top-k", type=click.IntRange(min=1), help="Items retrieved per question.")
@click.option("--top-n", type=click.IntRange(min=1), help="Contexts passed to the generator.")
@click.option("--unit", type=click.Choice(["auto", "chunk", "document"]),
              help="Judge rankings per chunk or per document (default: auto).")
@click.option("--metrics", help="Comma-separated metric names, e.g. 'ndcg@10,mrr,recall@5' "
              "(judge metrics too), or 'all': every metric whose needs the data, the LLM "
              "endpoint and the installed extras meet. `ragmark metrics` lists them.")
@click.option("--max-queries", type=click.IntRange(min=1), help="Evaluate the first N only.")
@click.option("--skip-generation", is_flag=True, help="Retrieval metrics only.")
@click.option("--output", default="eval/results.json", show_default=True,
              help="JSON report path.")
@click.option("--run-file", help="Also write a TREC run file (document level).")
@click.option("--include-details", is_flag=True, help="Per-query records in the JSON.")
@format_option("json")
@index_cache_option
@latency_option
@executor_options
@click.option("--verbose", is_flag=True, help="Print per-query metrics.")
@click.option("--quiet", is_flag=True, help="No progress bars.")
@gate_options
@regression_options
@data_options
@qrels_extra_option
@mean_option
@history_options
@llm_options
@click.option("--dry-run", is_flag=True,
              help="Count the judge calls, tokens and cost without calling anything.")
def run_cmd(dataset: str | None, outputs_path: str | None, run_file_in: str | None,
            corpus: str | None, split: str,
            config: str | None, system_name: str | None, top_k: int | None,
            top_n: int | None, unit: str | None, metrics: str | None, max_queries: int | None,
            skip_generation: bool, output: str, run_file: str | None, include_details: bool,
            formats: str | None, no_index_cache: bool,
            latency_sample: int, executor_name: str, address: str | None,
            verbose: bool, quiet: bool, fail_under: tuple[str, ...],
            max_missing: tuple[str, ...], allow_missing: bool, allow_short_rankings: bool,
            baseline_ref: str | None, regression: str | None, margin: float,
            gate_alpha: float, junit: str | None,
            strict: bool, encoding: str | None, qrels_extra: str | None, mean: str,
            history: str | None, no_history: bool,
            judge_metrics: str | None, require_llm: bool, human_labels: str | None,
            dry_run: bool) -> None:
    """Evaluate one configuration on a dataset, or a system's logged outputs.

    Exit 0 when every metric asked for got a value for at least one question, 1 when a
    gate failed (--fail-under, --max-missing, --fail-on-regression, or a metric with no
    value at all), 2 on bad input or usage."""
    from ragmark.cli.ci import (
        finish,
        gates_json,
        gates_markdown,
        regression_gates,
        regression_metrics,
        resolve_baseline,
        verdict_of,
    )
    from ragmark.cli.paths import check_output
    from ragmark.config import RunConfig, load_config
    from ragmark.data import load_dataset
    from ragmark.data.outputs import load_outputs
    from ragmark.gates import conditions, parse_thresholds
    from ragmark.judging import parse_judge_metrics
    from ragmark.metrics.names import parse_metrics
    from ragmark.report.console import print_report
    from ragmark.report.json_writer import report_json
    from ragmark.report.trec_run import check_trec_ids, write_trec_run
    from ragmark.runner import run

    out, progress = consoles(quiet)
    from ragmark.report.writers import Written, parse_formats, paths_of, write_all

    hist = None
    fmts = parse_formats(formats, "run")
    json_path = Path(output)
    stem = json_path.with_suffix("") if json_path.suffix.lower() == ".json" else json_path
    if not dry_run:  # before any data is read
        check_output(output, "--output")
        hist = prepare_outputs(paths_of(fmts, stem, json_path), history, no_history,
                               junit=junit, run_file=run_file)
    gated = regression_metrics(regression, baseline_ref)
    every = (metrics or "").strip().lower() == "all"
    parsed = parse_metrics(metrics) if metrics and not every else []  # once, at the edge
    names = [m for m in parsed if m.kind != "judge"] or None
    ex = open_executor(executor_name, address)
    # judge metrics may be asked for with --metrics too (--judge-metrics is the old way)
    judges = parse_judge_metrics(judge_metrics)
    judges += [str(m) for m in parsed if m.kind == "judge" and str(m) not in judges]
    human, judges = labelled_judges(human_labels, judges)
    under = parse_thresholds(fail_under, "--fail-under")
    most = parse_thresholds(max_missing, "--max-missing", fraction=True)
    for t in (*under, *most):
        if t.config is not None:
            raise ConfigError(f"{t.config}:{t.metric}: 'ragmark run' has one config; give "
                              "METRIC=VALUE without a config name")
    if dry_run and not judges:
        raise ConfigError("--dry-run estimates judge calls: give --judge-metrics too")
    outputs = None
    left_of_run = 0
    join_notes: list[str] = []
    if run_file_in is not None:
        given = [flag for flag, v in (("--outputs", outputs_path), ("--config", config),
                                      ("--top-k", top_k), ("--top-n", top_n)) if v is not None]
        if given or dataset is None:
            raise ConfigError("--run-file-in scores a TREC run against a dataset's ground "
                              "truth: give --dataset (and --corpus if it needs one), not "
                              + (", ".join(given) if given else "without --dataset"))
        from ragmark.data.trec_run import read_trec_run, run_outputs

        trec = read_trec_run(run_file_in)
        ds = load_dataset(dataset, corpus, split, leniency(strict, encoding))
        outputs, left_of_run = run_outputs(trec, ds)
        cfg = RunConfig.model_validate({"name": Path(run_file_in).stem,
                                        "unit": unit or "document"})
        skip_generation = True
    elif outputs_path is not None:
        given = [flag for flag, v in (("--config", config), ("--top-k", top_k),
                                      ("--top-n", top_n)) if v is not None] + (
            ["--corpus without --dataset"] if corpus is not None and dataset is None else [])
        if given:
            raise ConfigError(f"--outputs scores logged answers and contexts as they are; it "
                              f"cannot be combined with {', '.join(given)}")
        oset = load_outputs(outputs_path, leniency(strict, encoding))
        ds, outputs = oset.dataset, oset.outputs
        cfg = RunConfig.model_validate({"name": ds.name, "unit": unit or "auto"})
        if dataset is not None:  # the ground truth is the dataset's: join the log to it
            from ragmark.data.outputs import join_outputs

            ds = load_dataset(dataset, corpus, split, leniency(strict, encoding))
            outputs, join_notes = join_outputs(oset, ds)
    elif dataset is None:
        raise ConfigError("give --dataset PATH (a dataset to run a config on) or --outputs "
                          "FILE (a system's logged outputs to score)")
    else:
        cfg = load_config(config or "sparse", top_k=top_k, top_n=top_n, unit=unit)
        if names and top_k is None:
            deepest = max((m.k or 0 for m in names if m.kind == "retrieval"), default=0)
            if deepest > cfg.top_k:
                cfg = cfg.model_copy(update={"top_k": deepest})
        ds = load_dataset(dataset, corpus, split, leniency(strict, encoding))
    if system_name is not None:
        cfg = cfg.model_copy(update={"name": _name(system_name)})
    warn_data(ds.warnings)
    ds, pooled = with_qrels_extra(ds, qrels_extra)
    fit_notes: list[str] = []
    if every:  # every metric whose needs the data, the endpoint and the extras meet
        from ragmark.running.selection import every_metric

        endpoint, _ = resolve_llm([cfg], need=True)
        own = outputs is None and cfg.pipeline is None  # whose top_k is the depth
        names, more, fit_notes = every_metric(ds, llm=endpoint is not None,
                                              answers=not skip_generation,
                                              depth=cfg.top_k if own else None, name=cfg.name)
        judges += [j for j in more if j not in judges]
    also, judges = _gated(judges, [t.metric for t in (*under, *most)] + gated)
    base = None
    if gated and not dry_run:  # the baseline is found before the run starts
        from ragmark.data.fingerprint import dataset_hash

        if baseline_ref in (None, "last"):  # the first run has none: not gated, as compare
            from ragmark.cli.ci import base_of

            base = base_of(None, cfg.name, dataset_hash(ds), history)
        else:
            base = resolve_baseline(baseline_ref, cfg.name, dataset_hash(ds), history)
    if run_file:  # ids a TREC line cannot hold fail now, not after the run
        check_trec_ids((s.id for s in ds.samples), "question")
        if outputs is None and cfg.pipeline is None:
            check_trec_ids((d.id for d in ds.corpus.documents), "document")
    llm, (cfg,) = resolve_llm([cfg], need=bool(judges or require_llm))
    report = run(ds, cfg, names, also=also, mean=mean, max_queries=max_queries,
                 skip_generation=skip_generation,
                 progress=progress, judge_metrics=judges, llm=llm, require_llm=require_llm,
                 dry_run=dry_run, outputs=outputs, allow_short_rankings=allow_short_rankings,
                 index_cache=not no_index_cache, latency_sample=latency_sample, executor=ex)
    if dry_run:
        out.print(dry_run_text({"run": report.llm["dry_run"]}), highlight=False, soft_wrap=True)
        return
    if pooled is not None:
        report.dataset["qrels_extra"] = pooled
    if base is not None and base.note:
        report.notes.append(base.note)
    if left_of_run:
        report.notes.append(f"{left_of_run} question{'s' if left_of_run != 1 else ''} of the "
                            "run file are not in the dataset: left out, as trec_eval leaves "
                            "them")
    report.notes[:0] = fit_notes + join_notes
    if human is not None:
        from ragmark.human_labels import corrected, corrected_lines

        report.corrected = corrected(report, human)
    print_report(report, out, verbose=verbose)
    if human is not None:
        for line in corrected_lines(report.corrected):
            out.print(line, highlight=False, soft_wrap=True)
    gates = regression_gates([(base, report)], gated, gate_alpha, margin)
    gate_md = gates_markdown(gates, gate_alpha, margin)
    data = report_json(report, include_details)
    data.update(gates_json(gates, gated, hist, str(report.dataset.get("hash", ""))))
    written = write_all(fmts, Written("run", report, data, stem, json_path, gate_md))
    out.print(written_text(written))
    path = json_path if "json" in fmts else (written[0] if written else None)
    if run_file:
        out.print(f"TREC run written to {write_trec_run(report, run_file)}")
    conds = conditions({cfg.name: report}, fail_under=under, max_missing=most,
                       allow_missing=allow_missing)
    record_history(out, hist, data["envelope"], report, path, verdict_of(conds, gates))
    from ragmark.report.markdown import run_markdown

    finish(out, conds, gates=gates, junit=junit, summary=run_markdown(report) + gate_md)


def _name(text: str) -> str:
    name = text.strip()
    if not name or any(c in name for c in "\n\r\t"):
        raise ConfigError(f"--name: expected a non-empty name on one line, got {text!r}")
    return name


def _gated(judges: list[str], gated: list[str]) -> tuple[list[MetricName], list[str]]:
    """What the gates need besides the metrics asked for (or the defaults): the gated
    metrics (groundedness for grounded_ratio), and the judges with the gated ones."""
    from ragmark.gates import DERIVED
    from ragmark.judging import JUDGE_METRICS
    from ragmark.metrics.names import parse_metric

    also: list[MetricName] = []
    judges = list(judges)
    for m in dict.fromkeys(gated):
        if m in JUDGE_METRICS:
            if m not in judges:
                judges.append(m)
        else:
            name = parse_metric("groundedness" if m in DERIVED else m)
            if name not in also:
                also.append(name)
    return also, judges
