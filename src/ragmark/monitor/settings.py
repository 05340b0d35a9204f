"""What ``ragmark monitor`` does with a source: its flags as one value, and the metrics
a window computes by default."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

from ragmark.data.traces import TraceKeys
from ragmark.llm import LLMSettings

DEFAULTS = ("groundedness", "empty_retrieval", "refusal", "latency_s", "retrieval_latency_s",
            "generation_latency_s", "tokens", "cost_usd", "feedback")
"""The cheap metrics every record gets (those the source does not record are left out)."""
JUDGED = ("faithfulness", "answer_relevance", "context_relevance")
"""The model-based metrics a window's sample gets when an LLM endpoint is set."""
KIND = "monitor"
MOMENTS = "moments"
"""The envelope key of a window's moments per metric (count, mean, squared deviations):
what its drift reference needs once its per-question values are pruned."""


@dataclass(frozen=True)
class Settings:
    """What ``ragmark monitor`` does with a source (its flags, as one value)."""

    source: Path
    history: Path
    name: str | None = None
    metrics: tuple[str, ...] | None = None
    judge_metrics: tuple[str, ...] | None = None
    llm: LLMSettings | None = None
    sample: float = 0.05
    budget_calls: int | None = None
    budget_cost: float | None = None
    fail_on_drift: tuple[str, ...] = ()
    reference: int = 5
    reference_run: int | None = None
    margin: float = 0.0
    alpha: float = 0.05
    windows: int = 20
    strict: bool = False
    encoding: str | None = None
    """``--encoding``: of log lines that are not UTF-8."""
    keys: TraceKeys = field(default_factory=TraceKeys)
    retain: timedelta | None = None
    """``--retain-questions``: how long a window's per-question values are kept (older
    windows of the source are pruned as new ones are recorded); None: for ever."""

    @property
    def system(self) -> str:
        return self.name or self.source.name.split(".")[0] or "system"

    def judges(self) -> tuple[str, ...]:
        if self.judge_metrics is not None:
            return self.judge_metrics
        return JUDGED if self.llm is not None else ()
