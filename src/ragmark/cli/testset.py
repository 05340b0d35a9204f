"""`ragmark testset`: generate a context set from a corpus with an LLM."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ragmark.cli.app import (
    FormatChoice,
    cli,
    consoles,
    data_options,
    dry_run_option,
    history_option,
    quiet_option,
    renamed,
    takes_renamed,
    warn_data,
)
from ragmark.cli.llm_opts import endpoint_options, llm_flags
from ragmark.cli.shared import option
from ragmark.errors import ConfigError
from ragmark.plan.testset import (
    NoQuestion,
    TestsetRequest,
    estimate_testset_plan,
    execute_testset,
    plan_testset,
)
from ragmark.report.console import llm_line
from ragmark.report.testset_check import check_line
from ragmark.testset import REASONS
from ragmark.testset.scenarios import REASONS as SCENARIO_REASONS


def _counts(counter: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in counter.items())


def _print_summary(out: Any, report: dict[str, Any], written: Path | None) -> None:
    scenarios = "kept_by_type" not in report  # --scenarios
    if written is not None:
        out.print(f"Wrote {report['kept']} scenarios to {written}" if scenarios else
                  f"Wrote {report['kept']} questions to {written} "
                  f"({_counts(report['kept_by_type'])}; "
                  f"{_counts(report['kept_by_difficulty'])})", soft_wrap=True)
    names = SCENARIO_REASONS if scenarios else REASONS
    why = ", ".join(f"{names[k]} {n}" for k, n in report["rejected_by_reason"].items())
    out.print(f"Candidates: {report['generated']} generated, {report['kept']} kept, "
              f"{report['rejected']} rejected" + (f" ({why})" if why else ""), soft_wrap=True)
    if relabelled := report.get("labelled_otherwise"):
        out.print("Counted as the type asked for, labelled otherwise by the model: "
                  + _counts(relabelled), soft_wrap=True, markup=False)
    check = report.get("check")
    if check is not None:
        out.print(check_line(check), highlight=False, markup=False, soft_wrap=True)
    out.print(llm_line("testset", report["llm"], "candidates without a usable answer"),
              highlight=False, soft_wrap=True)
    for note in report["notes"]:
        out.print(f"Note: {note}", soft_wrap=True, markup=False)


def _print_dry_run(out: Any, est: dict[str, Any]) -> None:
    cost = est["estimated_cost"]
    out.print(
        f"dry run: {est['calls']} generation calls to {est['model']} at {est['endpoint']} "
        f"in the first round of {est['first_round']} candidates ({est['cached']} already "
        f"cached), about {est['estimated_prompt_tokens']:,} prompt tokens (characters / 4); "
        "estimated cost "
        + ("unknown (give --llm-prices)" if cost is None else f"${cost:.4f} (prompt tokens)")
        + f". Rejected candidates are replaced in later rounds, up to {est['max_candidates']} "
        f"candidates (about {est['max_prompt_tokens']:,} prompt tokens), each with at most "
        "one re-ask. Nothing was called and nothing was written.",
        highlight=False, soft_wrap=True,
    )


_DIALECTS = FormatChoice(writing=True)
"""The dataset formats a test set is written in (those --input-format reads)."""


@cli.group("testset", invoke_without_command=True)
@option("--corpus", type=click.Path(exists=True))
@click.option("--size", type=click.IntRange(min=1),
              help="Questions to keep, shared evenly over the types.  [required]")
@click.option("--types", help="Comma-separated question types: factual, reasoning, "
              "summarization (one document), comparative, multi_hop (two documents). "
              "[default: factual,comparative,reasoning,summarization]")
@option("--output", default="testset.json", show_default=True, type=click.Path(dir_okay=False))
@click.option("--output-format", "fmt", type=_DIALECTS,
              callback=takes_renamed("--output-format", "ragmark"),
              help="Write the set as ragmark's JSON, RAGAS's JSON Lines (user_input, "
                   "reference, reference_contexts), a LlamaIndex rag_dataset.json or "
                   "DeepEval goldens (JSON); ragmark reads each back with --dataset. "
                   "[default: ragmark]")
@renamed("--format", "--output-format", type=_DIALECTS)
@option("--language", metavar="LANG")
@option("--overwrite", is_flag=True)
@option("--seed", default=0, show_default=True, type=int)
@option("--unit", type=click.Choice(["chunk", "document"]), default="chunk", show_default=True)
@option("--config", default="sparse", show_default=True)
@click.option("--max-chars", default=4000, show_default=True, type=click.IntRange(min=200),
              help="Longer passages are cut to this many characters.")
@click.option("--max-candidates", type=click.IntRange(min=1),
              help="Most candidates to generate in all rounds [default: 2 x size].")
@option("--words-only", is_flag=True)
@click.option("--scenarios", is_flag=True,
              help="Write scenarios for `ragmark simulate` instead of questions (JSON "
                   "Lines, default scenarios.jsonl): one a passage, what a person wants "
                   "and the outcome that satisfies them, kept when its quotes occur in "
                   "the passage.")
@quiet_option
@data_options
@endpoint_options
@dry_run_option
@click.pass_context
def testset_cmd(ctx: click.Context, **flags: Any) -> None:
    """Generate questions with answers, quotes, type and difficulty from a corpus
    (--corpus and --size); 'testset check SET' says what a set is worth."""
    if ctx.invoked_subcommand is not None:
        return
    for flag in ("corpus", "size"):
        if flags[flag] is None:
            raise click.UsageError(f"Missing option '--{flag}'.", ctx)
    out, progress = consoles(flags.pop("quiet"))
    plan = plan_testset(TestsetRequest(**flags, llm_flags=llm_flags()))
    warn_data(plan.warnings)
    if flags["dry_run"]:
        if plan.scenarios:
            raise ConfigError("--dry-run does not estimate --scenarios yet: run it with a "
                              "small --size first")
        _print_dry_run(out, estimate_testset_plan(plan))
        return
    try:
        report, rpath = execute_testset(plan, progress)
    except NoQuestion as e:
        _print_summary(out, e.report, None)
        out.print(f"Report written to {e.path}")
        raise
    _print_summary(out, report, plan.output)
    out.print(f"Report written to {rpath}")


@testset_cmd.command("check")
@click.argument("dataset", metavar="SET")
@option("--corpus", type=click.Path(exists=True))
@click.option("--split", default="test", show_default=True, help="BEIR qrels split.")
@option("--words-only", is_flag=True)
@click.option("--clusters", type=click.IntRange(min=1),
              help="Clusters the corpus is cut into for coverage [default: the square "
                   "root of half the documents].")
@option("--fail-on", "fail_on", multiple=True, metavar="NAME>V")
@option("--top", type=click.IntRange(min=0), default=5, show_default=True)
@click.option("--output", type=click.Path(dir_okay=False),
              help="Also write the report: JSON (.json) or Markdown (other suffixes).")
@option("--json", "as_json", is_flag=True)
@option("--seed", default=0, show_default=True, type=int)
@history_option
@click.option("--metric", help="Each question's difficulty and discrimination over the "
                               "configs the run history ran on this set, by this metric "
                               "(e.g. ndcg@10): the questions that separate nothing.")
@quiet_option
@data_options
def check_cmd(**flags: Any) -> None:
    """What an evaluation set (any set ragmark reads) is worth before it is paid for:
    near-duplicate questions (embeddings and words), questions that give their answer
    away, answers their passages do not hold, the corpus the questions cover (with
    --corpus, or a BEIR folder's own), and the spread of types, lengths and
    answerability. Exit 1 when a --fail-on gate fails, 2 on bad input."""
    from ragmark.errors import GateFailed
    from ragmark.plan.paths import check_output
    from ragmark.plan.testset_check import CheckRequest, execute_check, plan_check, write_check
    from ragmark.report.testset_check import check_lines, check_markdown

    out, progress = consoles(flags["quiet"] or flags["as_json"])
    if flags["output"]:
        check_output(flags["output"], "--output")
    plan = plan_check(CheckRequest(**{k: v for k, v in flags.items() if k not in (
        "quiet", "as_json", "output")}))
    warn_data(plan.warnings)
    report = execute_check(plan, progress)
    if flags["output"]:
        write_check(report, Path(flags["output"]), check_markdown(report, plan.top))
    if flags["as_json"]:
        import json

        click.echo(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        for line in check_lines(report, plan.top):
            out.print(line, highlight=False, markup=False, soft_wrap=True)
    failed = [f"{g['gate']}: {g['why']}" for g in report["gates"] if not g["ok"]]
    if failed:
        raise GateFailed(failed)


@testset_cmd.command("select")
@click.argument("dataset", metavar="SET")
@click.option("--budget", required=True, metavar="N|P%",
              help="How many questions to choose: a count (30) or a share of the "
                   "questions every config has a value for (10%).")
@click.option("--metric", required=True,
              help="The metric whose means the chosen questions should predict (e.g. "
                   "ndcg@10), as the run history recorded it for the configs run on SET.")
@click.option("--output", required=True, type=click.Path(),
              help="Where the chosen questions are written: a file of the set's kind, or "
                   "a new folder for a BEIR folder (its corpus, the chosen queries, their "
                   "qrels).")
@click.option("--method", type=click.Choice(["stratified", "anchors", "random"]),
              default="stratified", show_default=True,
              help="stratified: one question a stratum of difficulty (the strata of equal "
                   "size, so the plain mean over them estimates the whole set's); anchors: "
                   "k-means medoids (their weighted mean does; the set written is "
                   "unweighted); random: a seeded draw.")
@option("--corpus", type=click.Path(exists=True))
@click.option("--split", default="test", show_default=True, help="BEIR qrels split.")
@option("--seed", default=0, show_default=True, type=int)
@option("--json", "as_json", is_flag=True)
@history_option
@data_options
def select_cmd(**flags: Any) -> None:
    """The --budget questions of SET whose mean best predicts the whole set's mean of
    --metric for the configs the run history ran on it, written as a set ragmark reads;
    how well they do is measured by leaving each config out (its mean estimated from
    questions chosen without it: the error, Kendall's tau of the estimates, and the
    share of the config pairs the whole set separates that the estimates keep in
    order), beside random subsets of the same size."""
    from ragmark.plan.testset_select import SelectRequest, select
    from ragmark.report.testset_check import select_lines

    as_json = flags.pop("as_json")
    report = select(SelectRequest(**flags))
    if as_json:
        import json

        click.echo(json.dumps(report, indent=2, ensure_ascii=False))
        return
    out, _ = consoles(quiet=True)
    for line in select_lines(report):
        out.print(line, highlight=False, markup=False, soft_wrap=True)
