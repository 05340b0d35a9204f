"""The plan of ``ragmark judge-eval RESULTS --against-qrels``: the context judges
measured against the qrels of the set a run was made on, without a person
(:mod:`ragmark.judge_eval.qrels`). Nothing here prints."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragmark.errors import ConfigError
from ragmark.judge_eval.qrels import METRICS, items_of, measure
from ragmark.progress import Progress
from ragmark.report.json_writer import write_json

if TYPE_CHECKING:
    from ragmark.judge_eval.qrels import QrelsItem
    from ragmark.llm import LLMSettings


@dataclass(frozen=True)
class QrelsPlan:
    """What ``--against-qrels`` does: the questions of the results ``file`` that have
    contexts and qrels (``left``: those left out, by reason), the context judges asked
    (``metrics``) at the endpoint ``judge``, and where the report goes."""

    file: str
    items: list[QrelsItem]
    left: dict[str, int]
    metrics: tuple[str, ...]
    judge: LLMSettings
    resamples: int
    seed: int
    output: Path | None
    dry_run: bool = False

    @property
    def calls(self) -> int:
        """Judgements: each metric's questions it can judge (context_precision needs an
        expected answer; a call too long for the window is split)."""
        return sum(len(self.judged(m)) for m in self.metrics)

    def judged(self, metric: str) -> list[QrelsItem]:
        """The questions ``metric`` can judge (the others get no call: missing)."""
        if metric == "context_precision":
            return [it for it in self.items if it.expected_answer]
        return list(self.items)


def plan_against_qrels(file: str | Path, metric: str | None, judge: LLMSettings, *,
                       output: str | Path | None = None, resamples: int = 2000,
                       seed: int = 0) -> QrelsPlan:
    """The plan: the metric checked, the questions read (a file that is not a run's
    results with details, or has no question with contexts and qrels, is refused)."""
    if str(file).startswith("store:"):
        raise ConfigError("--against-qrels reads a run's results file, not a label queue")
    if metric is not None and metric not in METRICS:
        raise ConfigError(f"--metric {metric}: --against-qrels measures "
                          f"{' or '.join(METRICS)} (the judges whose truth the qrels give)")
    items, left = items_of(file)
    return QrelsPlan(str(file), items, left, (metric,) if metric else METRICS, judge,
                     resamples, seed, None if output is None else Path(output))


def execute_against_qrels(plan: QrelsPlan, progress: Progress) -> dict[str, Any]:
    """Judge every question with each context judge; the report (written to the
    plan's output when it has one)."""
    with progress.task(f"judging {len(plan.items):,} questions x {len(plan.metrics)} "
                       "context judges", plan.calls) as advance:
        report = measure(plan.judge, plan.items, plan.metrics, advance, plan.resamples,
                         plan.seed)
    report = {"file": plan.file, "against": "qrels", **report,
              **({"left_out": plan.left} if plan.left else {})}
    if plan.output is not None:
        write_json(report, plan.output)
    return report
