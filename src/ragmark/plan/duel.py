"""The plan of ``ragmark duel A.json B.json [C.json ...]``: which system answers better,
by a pairwise judge; with three or more, every two of them (a round robin) and their
Bradley–Terry strengths. :func:`plan_duel` reads the results files, joins each two's
questions by id, checks the criteria and resolves the judge's endpoint before any call;
:func:`execute_duel` judges and returns the report (written to ``--output``);
:func:`estimate_duel` counts the calls. Nothing here prints."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragmark.analysis.inspection import results_from
from ragmark.errors import ConfigError, DataError
from ragmark.llm.fields import SET_ENDPOINT
from ragmark.plan.endpoint import resolve_llm
from ragmark.plan.gating import split_gates
from ragmark.plan.pairwise import criteria_of, pairwise_gates, rubrics_of
from ragmark.plan.paths import check_output
from ragmark.progress import Progress
from ragmark.report.json_writer import write_json, write_markdown, write_text
from ragmark.report.round_robin import duel_html, duel_markdown
from ragmark.results import read_results
from ragmark.running.head_to_head import estimate_pairs
from ragmark.running.tournament import Tournament, matches_of, round_robin

if TYPE_CHECKING:
    from ragmark.llm import LLMSettings


@dataclass(frozen=True, kw_only=True)
class DuelRequest:
    """``ragmark duel``'s flags, by their names."""

    files: Sequence[str | Path]
    pairwise: str = "overall"
    orders: int = 2
    seed: int = 0
    resamples: int = 2000
    output: str | Path | None = None
    dry_run: bool = False
    regression: str | None = None
    """``--fail-on-regression pairwise:CRITERION``: B (every file after the first) must
    not lose significantly to A (the first)."""
    alpha: float = 0.05
    pairwise_rubric: Sequence[str] = ()
    """``--pairwise-rubric NAME=TEXT``: custom criteria for --pairwise."""
    llm_flags: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class DuelPlan:
    """What a duel does: the round robin of the systems (``tournament``: two systems
    meet once), the judge, where the report goes."""

    tournament: Tournament
    judge: LLMSettings
    output: Path | None
    dry_run: bool
    gated: tuple[str, ...] = ()
    """The criteria by which a system must not lose to the first."""
    alpha: float = 0.05

    @property
    def names(self) -> tuple[str, ...]:
        return self.tournament.names

    @property
    def criteria(self) -> tuple[str, ...]:
        return self.tournament.criteria

    @property
    def calls(self) -> int:
        return self.tournament.calls


def _read(path: str | Path) -> Any:
    _, data = read_results(path)
    got = results_from(str(path), data)
    if not got.detailed:
        raise DataError("a duel needs the answers: give the JSON of `ragmark run "
                        "--include-details` (or of `ragmark run --outputs LOG "
                        "--include-details` for logged outputs)", file=str(path))
    return got


def plan_duel(req: DuelRequest) -> DuelPlan:
    """The plan of ``req``: flags checked, both files read and joined, the endpoint
    resolved, the output path checked; a bad input is an error before any call."""
    metrics, gated = split_gates(req.regression)
    if metrics:
        raise ConfigError(f"--fail-on-regression {metrics[0]}: a duel gates by the pairwise "
                          "judge only: pairwise:CRITERION")
    rubrics = rubrics_of(req.pairwise_rubric)
    criteria = tuple(criteria_of(req.pairwise, gated, rubrics))
    if not criteria:
        raise ConfigError("--pairwise: give a criterion or more")
    if req.orders not in (1, 2):
        raise ConfigError(f"--pairwise-orders must be 1 or 2, got {req.orders}")
    if len(req.files) < 2:
        raise ConfigError("a duel needs two results files or more")
    if req.output is not None and not req.dry_run:
        check_output(req.output, "--output")
    read = [_read(f) for f in req.files]
    matches = matches_of([r.report.queries for r in read])
    for m in matches:
        if not m.pairs:
            why = ", ".join(f"{k}: {v}" for k, v in m.left_out.items())
            raise DataError(f"no question is answered in both {req.files[m.a]} and this "
                            f"file ({why})", file=str(req.files[m.b]))
    if "correctness" in criteria and not any(p.reference for m in matches for p in m.pairs):
        raise ConfigError("--pairwise correctness compares the answers with the reference "
                          "answer: the questions have none")
    settings, _ = resolve_llm([], req.llm_flags)
    if settings is None:
        raise ConfigError(f"a duel needs a judge: give --llm-base-url and --llm-model, or "
                          f"{SET_ENDPOINT}")
    configs = [r.config for r in read]
    names = tuple(configs) if len(set(configs)) == len(configs) else tuple(
        Path(f).stem for f in req.files)
    t = Tournament(names, tuple(str(f) for f in req.files), tuple(matches), criteria,
                   req.orders, req.seed, req.resamples, rubrics)
    return DuelPlan(t, settings, None if req.output is None else Path(req.output),
                    req.dry_run, tuple(gated), req.alpha)


def estimate_duel(plan: DuelPlan) -> dict[str, Any]:
    t = plan.tournament
    return estimate_pairs(plan.judge, t.criteria, t.pairs, t.orders, t.seed, t.rubrics)


def execute_duel(plan: DuelPlan, progress: Progress) -> dict[str, Any]:
    """Judge every pair of every match by every criterion; the report (written to the
    plan's output): for two systems their match, for more every match and the
    strengths."""
    t = plan.tournament
    with progress.task(f"judging {len(t.pairs):,} pairs x {len(t.criteria)} criteria x "
                       f"{t.orders} orders", t.calls) as advance:
        report = round_robin(t, plan.judge, advance)
    gates = [{"condition": n, "passed": ok, "line": line} for n, ok, line in pairwise_gates(
        report, t.names[0], plan.gated, plan.alpha)]
    if len(t.names) == 2:
        report = {**report.pop("matches")[0], "orders": report["orders"],
                  "seed": report["seed"], "llm": report["llm"]}
    if gates:
        report["gates"] = gates
    if plan.output is not None:
        _write(report, plan.output)
    return report


def _write(report: dict[str, Any], path: Path) -> None:
    """The report as the output's suffix says: .md Markdown, .html a page, else JSON."""
    suffix = path.suffix.lower()
    if suffix == ".md":
        write_markdown(duel_markdown(report), path)
    elif suffix in (".html", ".htm"):
        write_text(duel_html(report), path)
    else:
        write_json(report, path)
