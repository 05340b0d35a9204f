"""`ragmark label`: LLM relevance labels for every config's top K, metrics at every k."""

from __future__ import annotations

from typing import Any

import click

from ragmark.cli.app import (
    cli,
    configs_options,
    consoles,
    data_options,
    dry_run_option,
    executor_options,
    format_option,
    history_options,
    quiet_option,
    warn_data,
)
from ragmark.cli.llm_opts import dry_run_text, endpoint_options, llm_flags
from ragmark.cli.shared import option
from ragmark.passage_labels import label_markdown
from ragmark.passage_labels.judges import summary_lines
from ragmark.plan.label import LabelRequest, estimate_label, execute_label, plan_label
from ragmark.report.console import llm_line


@cli.command("label")
@configs_options
@option("--top-k", type=click.IntRange(min=1), default=10, show_default=True)
@option("--max-queries", type=click.IntRange(min=1))
@click.option("--prompt-template", type=click.Path(exists=True, dir_okay=False),
              help="File with the judge's user message; {question} and {passage} (or "
                   "{query} and {document}) are replaced by the fenced texts.")
@option("--output", default="results/label.json", show_default=True)
@option("--plot", is_flag=True)
@dry_run_option
@click.option("--pool", is_flag=True,
              help="Judge the documents of every config's top K that the qrels do not "
                   "judge, and write NAME.qrels.tsv beside --output: the qrels extended "
                   "with the LLM's judgments, marked (for run/compare --qrels-extra).")
@option("--judge-model", "judge_models", multiple=True)
@quiet_option
@format_option("json,md")
@option("--allow-missing", is_flag=True)
@data_options
@history_options
@endpoint_options
@executor_options
@click.argument("more_configs", nargs=-1)
def label_cmd(**flags: Any) -> None:
    """Label each config's top K passages with an LLM judge (can an answer to the
    question be derived from the passage? YES/NO) and report, at every k from 1 to K,
    precision, recall, accuracy, number relevant and answer presence, averaged over the
    questions; with ground truth, also the judge's agreement with it.

    Writes the JSON report at --output (per config: means at every k with the questions
    covered, every passage's label, agreement; the LLM accounting) and its Markdown
    beside it, and prints the tables. Needs an LLM endpoint.
    """
    out, progress = consoles(flags.pop("quiet"))
    flags["configs"] = (*flags["configs"], *flags.pop("more_configs"))
    req = LabelRequest(**flags, llm_flags=llm_flags())
    plan = plan_label(req)
    if plan.executor is not None:
        click.get_current_context().call_on_close(plan.executor.close)
    warn_data(plan.dataset.warnings)
    if req.dry_run:
        estimates, pooled = estimate_label(plan, progress)
        if pooled is not None:
            out.print(f"{pooled:,} unjudged documents in the top {plan.top_k} of "
                      f"{len(plan.configs)} configs.", highlight=False)
        for name, est in estimates.items():
            out.print(dry_run_text({name: est}, what="label"), highlight=False,
                      soft_wrap=True)
        return
    _show(out, plan, execute_label(plan, progress))


def _show(out: Any, plan: Any, done: Any) -> None:
    """What label made: the pool's counts, or each judge's tables, then the files."""
    if done.pooled is not None:
        p, c = done.pooled, done.pooled["counts"]
        out.print(f"Pooled {p['items']:,} unjudged documents of the top {p['top_k']} of "
                  f"{p['configs']} configs: {c['llm_relevant']} judged relevant, "
                  f"{c['llm_not_relevant']} not, {c['unlabelled']} without a label; "
                  f"{c['original']:,} original judgments kept.", highlight=False)
        out.print(llm_line("labels", p["llm"]), highlight=False, soft_wrap=True)
        path = done.written[0]
        out.print(f"Extended qrels written to {path} (use: ragmark run --qrels-extra "
                  f"{path})", highlight=False)
        return
    for model, result in done.runs.items():
        if plan.mode == "judges":
            out.print(f"## judge {model}", highlight=False, markup=False)
        out.print(label_markdown(result), markup=False, highlight=False, soft_wrap=True)
        out.print(llm_line("labels", result.llm), highlight=False, soft_wrap=True)
    for line in summary_lines(done.summary) if done.summary is not None else ():
        out.print(line, highlight=False, soft_wrap=True)
    out.print("Results written to " + ", ".join(str(p) for p in done.written))
    if done.run_id is not None:
        out.print(f"Recorded in the run history as {done.run_id} ({plan.history})",
                  highlight=False)
    if done.failed:
        from ragmark.errors import GateFailed

        raise GateFailed(done.failed)
