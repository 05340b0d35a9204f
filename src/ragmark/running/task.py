"""What a run computes of each config, and how: one frozen value that :func:`run`,
:func:`compare` and their dry runs take instead of a dozen keyword arguments carried
from function to function."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ragmark.running.stages import LATENCY_SAMPLE

if TYPE_CHECKING:
    from ragmark.executors import Executor
    from ragmark.llm import LLMSettings
    from ragmark.metrics.names import MetricName


@dataclass(frozen=True)
class Task:
    """What each config computes, and how.

    ``metrics``: the metrics asked for (None: the dataset's defaults, their cutoffs
    fitted to the config's ``top_k``); ``also``: computed besides them (gated or compared
    ones); ``judge_metrics``: the LLM-judged ones, asked of ``llm`` (without an endpoint,
    or when it does not answer, missing with the reason; an error with ``require_llm``).
    ``mean``: how the retrieval aggregates average (over questions with a relevant item,
    or all); ``max_queries``: the first N questions only; ``skip_generation``: retrieval
    metrics only. ``allow_short_rankings``: a metric cutting deeper than ``top_k`` is
    computed (and marked) instead of refused. ``index_cache``: load and save the index
    under ``RAGMARK_HOME/indexes``. ``latency_sample``: the first N questions are
    retrieved one at a time, their latency reported. ``executor``: where the CPU-bound
    stages run (None: the active one, local unless set). ``answers``: the answers are
    made even when no metric reads them (a pairwise judge compares them)."""

    metrics: Sequence[str | MetricName] | None = None
    also: Sequence[str | MetricName] = ()
    judge_metrics: Sequence[str] = ()
    llm: LLMSettings | None = None
    require_llm: bool = False
    mean: str = "relevant"
    max_queries: int | None = None
    skip_generation: bool = False
    allow_short_rankings: bool = False
    index_cache: bool = True
    latency_sample: int = LATENCY_SAMPLE
    executor: Executor | None = None
    answers: bool = False
    judge_repeats: int = 1
    """Each judge asked that many times (other seeds, at ``judge_temperature``): values
    the means, the judges' noise measured (:mod:`ragmark.running.repeats`)."""
    judge_temperature: float | None = None
    jurors: tuple[LLMSettings, ...] = ()
    """A jury: each juror's endpoint, every judge asked of each (``llm`` is then not
    asked; :mod:`ragmark.running.jury`)."""
