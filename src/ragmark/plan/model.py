"""The plan of a ``run`` or a ``compare``: everything decided before the first question is
asked, as one frozen value. :mod:`ragmark.plan.build` makes it (from the command line's
flags, the Python API's arguments or the pytest fixture's); :func:`ragmark.plan.execute`
runs it and :func:`ragmark.plan.estimate` dry-runs it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ragmark.results.model import RunReport
from ragmark.running.task import Task

if TYPE_CHECKING:
    from ragmark.analysis.gates import Condition, Threshold
    from ragmark.analysis.human_labels import HumanLabels
    from ragmark.config import RunConfig
    from ragmark.executors import Executor
    from ragmark.llm import LLMSettings
    from ragmark.pipelines.base import Output
    from ragmark.plan.gating import Gated
    from ragmark.results.model import RunReport
    from ragmark.running.compare import Comparison, StatSettings
    from ragmark.running.task import Task
    from ragmark.types import Dataset


@dataclass(frozen=True)
class Options:
    """How each config runs: the runner's options (see :class:`ragmark.running.task.Task`)."""

    mean: str = "relevant"
    max_queries: int | None = None
    skip_generation: bool = False
    allow_short_rankings: bool = False
    index_cache: bool = True
    latency_sample: int = 100
    require_llm: bool = False
    judge_repeats: int = 1
    judge_temperature: float | None = None
    jurors: tuple[LLMSettings, ...] = ()


@dataclass(frozen=True)
class Gating:
    """The gates: thresholds, the implicit gate, and the regression gate (its metrics,
    the baseline reference, alpha and margin)."""

    fail_under: tuple[Threshold, ...] = ()
    max_missing: tuple[Threshold, ...] = ()
    allow_missing: bool = False
    regression: tuple[str, ...] = ()
    baseline: str | None = None
    """``--against``: a results file, a history id or ``last``."""
    alpha: float = 0.05
    margin: float = 0.0
    history: str | Path | None = None
    """The run history the baselines are found in (``--history``; None: the default)."""
    pairwise: tuple[str, ...] = ()
    """``--fail-on-regression pairwise:CRITERION``: the criteria by which a config must
    not lose significantly to the compare's baseline."""


@dataclass(frozen=True)
class Pairwise:
    """``--pairwise``: the criteria every two configs' answers are judged by, and in how
    many orders (2: both, a flip is a tie; 1: one drawn per question from the seed)."""

    criteria: tuple[str, ...]
    orders: int = 2
    rubrics: Mapping[str, str] = field(default_factory=dict)
    """``--pairwise-rubric``: the custom criteria's words (name -> what 'better' means)."""


@dataclass(frozen=True)
class Targets:
    """Where the results go: the writers' formats and file stem, the TREC run file, the
    JUnit file, the run history (None: not recorded), and the JSON's detail."""

    formats: tuple[str, ...] = ()
    stem: Path | None = None
    run_file: str | None = None
    junit: str | None = None
    history: Path | None = None
    include_details: bool = False
    step_summary: bool = True
    """Append the Markdown to ``$GITHUB_STEP_SUMMARY`` (the command line does)."""


@dataclass(frozen=True)
class Plan:
    """One run (one config) or compare (several) on one dataset, decided.

    ``metrics`` None means the dataset's defaults; ``also`` are computed besides them
    (compared or gated); ``judges`` the judge metrics; ``compared`` the metrics a
    compare tests (None: its table). ``outputs`` are logged outputs scored instead of
    running the config (sample id -> output); ``pipelines`` the in-memory callables of
    ``python`` pipelines by config name. ``notes`` are put first in the report,
    ``trailing_notes`` last."""

    kind: Literal["run", "compare"]
    dataset: Dataset
    configs: tuple[RunConfig, ...]
    metrics: tuple[str, ...] | None = None
    also: tuple[str, ...] = ()
    judges: tuple[str, ...] = ()
    compared: tuple[str, ...] | None = None
    baseline: str | None = None
    stats: StatSettings | None = None
    llm: LLMSettings | None = None
    options: Options = field(default_factory=Options)
    gating: Gating = field(default_factory=Gating)
    targets: Targets = field(default_factory=Targets)
    outputs: Mapping[str, Output] | None = None
    logged: Mapping[str, Mapping[str, Output]] = field(default_factory=dict)
    """A compare's logged systems: config name -> its outputs (sample id -> output)."""
    pipelines: Mapping[str, Callable[..., Any]] = field(default_factory=dict)
    human: HumanLabels | None = None
    executor: Executor | None = None
    notes: tuple[str, ...] = ()
    trailing_notes: tuple[str, ...] = ()
    """Put last in the report."""
    pooled: Mapping[str, Any] | None = None
    """What ``--qrels-extra`` added (recorded with the dataset)."""
    pairwise: Pairwise | None = None
    """A compare's pairwise judging of its configs' answers (None: none)."""
    rank_against: tuple[str, Mapping[str, float]] | None = None
    """``--rank-against``: the file and its run-level scores (None: none)."""

    @property
    def task(self) -> Task:
        """What each config computes and how, as the runner takes it."""
        o = self.options
        return Task(metrics=self.metrics, also=self.also, judge_metrics=self.judges,
                    llm=self.llm, require_llm=o.require_llm, mean=o.mean,
                    max_queries=o.max_queries, skip_generation=o.skip_generation,
                    allow_short_rankings=o.allow_short_rankings, index_cache=o.index_cache,
                    latency_sample=o.latency_sample, executor=self.executor,
                    answers=self.pairwise is not None, judge_repeats=o.judge_repeats,
                    judge_temperature=o.judge_temperature, jurors=o.jurors)


@dataclass
class Outcome:
    """What executing a plan made: the result (a run's report or a comparison), its JSON
    form, the regression gates, every gate condition, the files written, and the run's
    id in the history (None: not recorded)."""

    result: RunReport | Comparison
    data: dict[str, Any]
    gates: list[Gated]
    conditions: list[Condition]
    written: list[Path]
    markdown: str = ""
    """The run's Markdown with the gates' tables (the step summary)."""
    gate_markdown: str = ""
    trec_path: Path | None = None
    junit_path: Path | None = None
    run_id: int | None = None
    history: Path | None = None
    gate_lines: list[str] = field(default_factory=list)
    """The regression gates' lines (a config without a baseline: a note)."""

    @property
    def report(self) -> RunReport:
        """A run's report (a compare's result is a :class:`Comparison`)."""
        if not isinstance(self.result, RunReport):
            raise TypeError("a compare's outcome has no single report: see result.reports")
        return self.result
