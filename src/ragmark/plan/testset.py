"""The plan of ``ragmark testset``: generate questions from a corpus with an LLM.
:func:`plan_testset` checks the output and the options, resolves the endpoint, reads
the corpus and picks the chunker once; :func:`execute_testset` generates and writes the
set and its report, :func:`estimate_testset_plan` dry-runs it. Nothing here prints."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragmark.config import load_config
from ragmark.data.corpus import open_corpus
from ragmark.data.leniency import Leniency
from ragmark.errors import ConfigError, MissingExtraError, RagmarkError
from ragmark.llm import open_client
from ragmark.llm.fields import SET_ENDPOINT
from ragmark.plan.endpoint import resolve_llm
from ragmark.plan.paths import check_output
from ragmark.plan.testset_check import corpus_clusters, embedder, findings
from ragmark.progress import NullProgress, Progress
from ragmark.registry import registry
from ragmark.report.json_writer import write_json, write_jsonl
from ragmark.testset import TestsetOptions, estimate_testset, generate_testset, parse_types
from ragmark.testset.audit import coverage
from ragmark.testset.scenarios import generate_scenarios
from ragmark.types import GroundTruth, Sample

if TYPE_CHECKING:
    from ragmark.llm import LLMSettings
    from ragmark.testset import TestsetOptions
    from ragmark.types import Corpus


@dataclass(frozen=True, kw_only=True)
class TestsetRequest:
    """``ragmark testset``'s flags, by their names."""

    __test__ = False  # not a pytest class

    corpus: str | Path
    size: int
    types: str | None = None
    output: str | Path = "testset.json"
    fmt: str = "ragmark"
    language: str | None = None
    overwrite: bool = False
    seed: int = 0
    unit: str = "chunk"
    config: str | Path = "sparse"
    max_chars: int = 4000
    max_candidates: int | None = None
    scenarios: bool = False
    """Write scenarios for ``ragmark simulate`` (JSON Lines) instead of questions."""
    words_only: bool = False
    """No embedding model: near-duplicates by their words, passages over the documents
    (not the corpus's clusters)."""
    strict: bool = False
    encoding: str | None = None
    dry_run: bool = False
    llm_flags: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class TestsetPlan:
    """What a testset run does: the corpus's ``documents`` cut by ``chunker``, the
    generation ``options``, the endpoint (``settings``), where the set goes
    (``output``, in ``fmt``) and its report (``report``), and what the loaders let
    through (``warnings``)."""

    __test__ = False

    documents: Corpus
    chunker: Any
    options: TestsetOptions
    settings: LLMSettings
    output: Path
    fmt: str
    report: Path
    warnings: tuple[str, ...]
    scenarios: bool = False
    spread: bool = True
    """Embeddings: near-duplicates by cosine too, passages drawn over the clusters."""


def report_path(output: str | Path) -> Path:
    """``testset.json`` -> ``testset.report.json`` (beside the set, so the set itself
    stays a plain context set)."""
    p = Path(output)
    return p.with_name(p.name[: -len(p.suffix)] + ".report.json")


def _output(req: TestsetRequest) -> Path:
    """The set's path: a JSON Lines name for RAGAS's format (``testset.jsonl`` when
    none is given); a test set is never replaced silently (hours of generation or hand
    edits)."""
    from ragmark.data import formats

    suffix = ".jsonl" if req.scenarios else formats.suffix(req.fmt)
    default = "scenarios.jsonl" if req.scenarios else f"testset{suffix}"
    output = Path(default if str(req.output) == "testset.json" else req.output)
    if req.scenarios and output.suffix.lower() != suffix:
        raise ConfigError(f"--output: scenarios are written as JSON Lines (what ragmark "
                          f"simulate reads); give a name ending in .jsonl, got "
                          f"{str(output)!r}")
    if output.suffix.lower() != suffix:
        raise ConfigError(f"--output: the test set is written as "
                          f"{'JSON Lines' if suffix == '.jsonl' else 'JSON'} ({req.fmt}); give "
                          f"a name ending in {suffix}, got {str(output)!r}")
    if not req.dry_run:
        check_output(output, "--output", overwrite=req.overwrite)
        check_output(report_path(output), "--output (its report)")
    return output


def _chunker(unit: str, cfg: Any, corpus_default: str) -> Any:
    if unit == "document":
        return registry("chunker").create("whole")
    if cfg.chunker is None:
        return registry("chunker").create(corpus_default)
    return registry("chunker").create(cfg.chunker.name, **cfg.chunker.params)


def plan_testset(req: TestsetRequest) -> TestsetPlan:
    """The plan of ``req``: every check before the corpus is read or a model called."""
    if req.scenarios and (req.types is not None or req.fmt != "ragmark"):
        raise ConfigError("--scenarios writes scenarios for ragmark simulate (JSON Lines), "
                          "not questions: leave out " + ("--types" if req.types is not None
                                                         else "--output-format"))
    output = _output(req)
    if req.language is not None:
        from ragmark.languages import language_code

        try:
            language_code(req.language)
        except ValueError as e:
            raise ConfigError(f"--language: {e}") from None
    options = TestsetOptions(size=req.size, types=parse_types(req.types), seed=req.seed,
                             max_chars=req.max_chars, max_candidates=req.max_candidates,
                             language=req.language)
    settings, (cfg,) = resolve_llm([load_config(req.config)], req.llm_flags)
    if settings is None:
        raise ConfigError("ragmark testset needs an LLM endpoint: give --llm-base-url and "
                          f"--llm-model, or {SET_ENDPOINT}")
    lenient = Leniency(strict=req.strict, encoding=req.encoding)
    documents, default_chunker = open_corpus(req.corpus, lenient)
    return TestsetPlan(documents, _chunker(req.unit, cfg, default_chunker), options,
                       settings, output, req.fmt, report_path(output),
                       tuple(lenient.messages()), req.scenarios, not req.words_only)


def estimate_testset_plan(plan: TestsetPlan) -> dict[str, Any]:
    """The dry run: the first round's calls, tokens and cost; nothing called (the
    corpus's clusters computed, as the run draws its passages over them)."""
    _, labels, _ = _spread(plan, NullProgress())
    return estimate_testset(plan.documents, plan.chunker, plan.options,
                            open_client(plan.settings), labels)


def execute_testset(plan: TestsetPlan, progress: Progress) -> tuple[dict[str, Any], Path]:
    """Generate the set, write it (when a question passed the checks) and its report;
    the report and where it was written. A RagmarkError (after the report is written)
    when no question passed."""
    from ragmark.data import formats

    if plan.scenarios:
        return _execute_scenarios(plan, progress)
    embed, labels, notes = _spread(plan, progress)
    result = generate_testset(
        plan.documents, plan.chunker, plan.options, open_client(plan.settings), progress,
        embed=None if embed is None else (lambda q: embed.encode([q])[0]), clusters=labels)
    result.report["notes"] = [*notes, *result.report["notes"]]
    result.report["check"] = _checked(result.items, plan.documents, embed, labels, progress)
    written = None
    if result.items:
        shaped = formats.export(result.items, plan.fmt, plan.settings.model)
        written = (write_jsonl(shaped, plan.output) if formats.suffix(plan.fmt) == ".jsonl"
                   else write_json(shaped, plan.output))
    report = {"output": None if written is None else str(written), **result.report}
    rpath = write_json(report, plan.report)
    if written is None:
        raise NoQuestion(report, rpath)
    return report, rpath


def _spread(plan: TestsetPlan, progress: Progress) -> tuple[Any, list[int] | None, list[str]]:
    """The embedder and each document's cluster (None, None without them: --words-only,
    or no dense extra, said in a note)."""
    if not plan.spread:
        return None, None, []
    try:
        embed = embedder()
    except MissingExtraError as e:
        return None, None, [f"near-duplicates by words alone, passages over the documents: "
                            f"{e}"]
    return embed, corpus_clusters(plan.documents.documents, embed, None,
                                  plan.options.seed, progress), []


def _checked(items: list[dict[str, Any]], documents: Corpus, embed: Any,
             labels: list[int] | None, progress: Progress) -> dict[str, Any]:
    """``testset check`` on what was written: near-duplicates, leaked and unsupported
    answers, and the documents and clusters covered (counts and shares)."""
    samples = [Sample(str(i["id"]), str(i["question"]),
                      GroundTruth(passages=tuple(i["ground_truth_contexts"])),
                      expected_answer=str(i["expected_answer"])) for i in items]
    got = findings(samples, embed, progress)
    cov = coverage(samples, documents.documents, labels)
    return {k: {"count": v["count"], "share": v["share"]} for k, v in got.items()} | {
        "coverage": {k: v for k, v in cov.items() if k != "largest_uncovered"}}


def _execute_scenarios(plan: TestsetPlan, progress: Progress
                       ) -> tuple[dict[str, Any], Path]:
    """``--scenarios``: write the checked scenarios (JSON Lines) and the report."""
    items, got = generate_scenarios(plan.documents, plan.chunker, plan.options.size,
                                    open_client(plan.settings), seed=plan.options.seed,
                                    max_chars=plan.options.max_chars, progress=progress)
    written = write_jsonl(items, plan.output) if items else None
    report = {"output": None if written is None else str(written), **got}
    rpath = write_json(report, plan.report)
    if written is None:
        raise NoQuestion(report, rpath, "scenario")
    return report, rpath


class NoQuestion(RagmarkError):
    """No question passed the checks: no set was written, the report was."""

    def __init__(self, report: dict[str, Any], path: Path, what: str = "question"
                 ) -> None:
        self.report, self.path = report, path
        none = "no test set was" if what == "question" else f"no {what}s were"
        super().__init__(f"no {what} passed the checks, so {none} written; "
                         f"see {path} for why each candidate was rejected")
