"""`ragmark testset`: generate a context set from a corpus with an LLM."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import click

from ragmark.cli.app import (
    cli,
    consoles,
    data_options,
    dry_run_option,
    leniency,
    quiet_option,
    renamed,
    takes_renamed,
    warn_data,
)
from ragmark.cli.llm_opts import endpoint_options, resolve_llm
from ragmark.cli.shared import option
from ragmark.errors import ConfigError, RagmarkError
from ragmark.llm.fields import SET_ENDPOINT
from ragmark.report.console import llm_line


def report_path(output: str | Path) -> Path:
    """``testset.json`` -> ``testset.report.json`` (beside the set, so the set itself
    stays a plain context set)."""
    p = Path(output)
    return p.with_name(p.name[: -len(p.suffix)] + ".report.json")


def _chunker(unit: str, cfg: Any, corpus_default: str) -> Any:
    from ragmark.registry import registry

    if unit == "document":
        return registry("chunker").create("whole")
    if cfg.chunker is None:
        return registry("chunker").create(corpus_default)
    return registry("chunker").create(cfg.chunker.name, **cfg.chunker.params)


def _counts(counter: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in counter.items())


def _print_summary(out: Any, report: dict[str, Any], written: Path | None) -> None:
    from ragmark.testset import REASONS

    if written is not None:
        out.print(f"Wrote {report['kept']} questions to {written} "
                  f"({_counts(report['kept_by_type'])}; "
                  f"{_counts(report['kept_by_difficulty'])})", soft_wrap=True)
    why = ", ".join(f"{REASONS[k]} {n}" for k, n in report["rejected_by_reason"].items())
    out.print(f"Candidates: {report['generated']} generated, {report['kept']} kept, "
              f"{report['rejected']} rejected" + (f" ({why})" if why else ""), soft_wrap=True)
    out.print(llm_line("testset", report["llm"]), highlight=False, soft_wrap=True)
    for note in report["notes"]:
        out.print(f"Note: {note}", soft_wrap=True)


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


_DIALECTS = click.Choice(["ragmark", "ragas", "llamaindex", "deepeval"])
"""The dataset formats a test set is written in (those --input-format reads)."""


@cli.command("testset")
@option("--corpus", required=True, type=click.Path(exists=True))
@click.option("--size", required=True, type=click.IntRange(min=1),
              help="Questions to keep, shared evenly over the types.")
@click.option("--types", help="Comma-separated question types: factual, reasoning, "
              "summarization (one document), comparative, multi_hop (two documents). "
              "[default: factual,comparative,reasoning,summarization]")
@click.option("--output", default="testset.json", show_default=True,
              type=click.Path(dir_okay=False),
              help="The context set (.json); the report goes beside it as NAME.report.json.")
@click.option("--output-format", "fmt", type=_DIALECTS,
              callback=takes_renamed("--output-format", "ragmark"),
              help="Write the set as ragmark's JSON, RAGAS's JSON Lines (user_input, "
                   "reference, reference_contexts), a LlamaIndex rag_dataset.json or "
                   "DeepEval goldens (JSON); ragmark reads each back with --dataset. "
                   "[default: ragmark]")
@renamed("--format", "--output-format", type=_DIALECTS)
@click.option("--language", metavar="LANG",
              help="Write the questions and answers in this language (de, german, zh, "
                   "...), whatever the documents' (the quotes stay as written).")
@option("--overwrite", is_flag=True)
@option("--seed", default=0, show_default=True, type=int)
@click.option("--unit", type=click.Choice(["chunk", "document"]), default="chunk",
              show_default=True, help="Write questions from chunks (cut as --config cuts "
              "them, so every quote lies inside one chunk) or from whole documents.")
@click.option("--config", default="sparse", show_default=True,
              help="Built-in config or TOML file whose chunker cuts the passages.")
@click.option("--max-chars", default=4000, show_default=True, type=click.IntRange(min=200),
              help="Longer passages are cut to this many characters.")
@click.option("--max-candidates", type=click.IntRange(min=1),
              help="Most candidates to generate in all rounds [default: 2 x size].")
@quiet_option
@data_options
@endpoint_options
@dry_run_option
def testset_cmd(**flags: Any) -> None:
    """Generate questions with answers, quotes, type and difficulty from a corpus."""
    f = SimpleNamespace(**flags)
    from ragmark.data.corpus import open_corpus
    from ragmark.data.foreign import EXPORT_SUFFIX, export_items
    from ragmark.llm import open_client
    from ragmark.plan.paths import check_output
    from ragmark.report.json_writer import write_json, write_jsonl
    from ragmark.testset import TestsetOptions, estimate_testset, generate_testset, parse_types

    out, progress = consoles(f.quiet)
    suffix = EXPORT_SUFFIX[f.fmt]
    if f.fmt == "ragas" and f.output == "testset.json":
        f.output = "testset.jsonl"
    if Path(f.output).suffix.lower() != suffix:
        raise ConfigError(f"--output: the test set is written as "
                          f"{'JSON Lines' if suffix == '.jsonl' else 'JSON'} ({f.fmt}); give "
                          f"a name ending in {suffix}, got {f.output!r}")
    if not f.dry_run:  # a test set may hold hours of generation or hand edits: never replace
        check_output(f.output, "--output", overwrite=f.overwrite)  # it silently
        check_output(report_path(f.output), "--output (its report)")
    if f.language is not None:
        from ragmark.languages import language_code

        try:
            language_code(f.language)
        except ValueError as e:
            raise ConfigError(f"--language: {e}") from None
    options = TestsetOptions(size=f.size, types=parse_types(f.types), seed=f.seed,
                             max_chars=f.max_chars, max_candidates=f.max_candidates,
                             language=f.language)
    from ragmark.config import load_config

    settings, (cfg,) = resolve_llm([load_config(f.config)])
    if settings is None:
        raise ConfigError("ragmark testset needs an LLM endpoint: give --llm-base-url and "
                          f"--llm-model, or {SET_ENDPOINT}")
    lenient = leniency(f.strict, f.encoding)
    documents, default_chunker = open_corpus(f.corpus, lenient)
    warn_data(lenient.messages())
    chunker = _chunker(f.unit, cfg, default_chunker)
    client = open_client(settings)
    if f.dry_run:
        _print_dry_run(out, estimate_testset(documents, chunker, options, client))
        return
    result = generate_testset(documents, chunker, options, client, progress)
    written = None
    if result.items:
        shaped = export_items(result.items, f.fmt, settings.model)
        written = (write_jsonl(shaped, f.output) if suffix == ".jsonl"
                   else write_json(shaped, f.output))
    report = {"output": None if written is None else str(written), **result.report}
    rpath = write_json(report, report_path(f.output))
    _print_summary(out, report, written)
    out.print(f"Report written to {rpath}")
    if written is None:
        raise RagmarkError(f"no question passed the checks, so no test set was written; "
                           f"see {rpath} for why each candidate was rejected")
