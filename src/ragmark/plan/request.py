"""What a user asks for, before anything is checked: the command line's flags, the Python
API's arguments and the pytest fixture's, in one shape per command. The field names are
the flags' (``--top-k`` is ``top_k``); :mod:`ragmark.plan.build` turns a request into a
:class:`~ragmark.plan.model.Plan`."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragmark.config import RunConfig
    from ragmark.llm import LLMSettings
    from ragmark.running.compare import StatSettings
    from ragmark.types import Dataset


@dataclass(frozen=True, kw_only=True)
class Request:
    """What ``run`` and ``compare`` share."""

    dataset: str | Path | Dataset | None = None
    corpus: str | Path | None = None
    split: str = "test"
    metrics: str | Sequence[str] | None = None
    """Names, a comma-separated string, or ``all``."""
    judge_metrics: str | Sequence[str] | None = None
    top_k: int | None = None
    max_queries: int | None = None
    skip_generation: bool = False
    mean: str = "relevant"
    strict: bool = False
    refusal_patterns: tuple[str, ...] = ()
    """``--refusal-pattern``: regular expressions that mark an answer as a refusal,
    besides the default phrases and the configs' own."""
    refusal_judge: bool = False
    """``--refusal-judge``: an LLM judge decides which answers are refusals."""
    context_match: str | None = None
    """``--context-match``: how a retrieved context matches a ground-truth passage, for
    every config (``contains``, or ``similarity:T`` as RAGAS counts it)."""
    language: str | None = None
    """``--language``: the data's language, for every config (BM25's stemmer and
    stop-words, the judges' claims), as a config's ``language`` key."""
    encoding: str | None = None
    input_format: str | None = None
    """``--input-format``: the format of --dataset / --outputs, instead of telling it from
    the fields (ragmark, ragas, deepeval, llamaindex)."""
    search_tools: tuple[str, ...] = ()
    """``--search-tool``: the tools whose calls are a logged agent's retrieval."""
    qrels_extra: str | None = None
    nuggets: str | None = None
    """``--nuggets FILE``: each question's nuggets (TREC RAG's, nuggetizer's files; the
    file a run wrote beside its results), used instead of creating them."""
    # where the results go (``output`` None: no files)
    output: str | None = None
    formats: str | None = None
    include_details: bool = False
    junit: str | None = None
    history: str | Path | None = None
    no_history: bool = False
    step_summary: bool = False
    # gates
    fail_under: Sequence[str] = ()
    max_missing: Sequence[str] = ()
    allow_missing: bool = False
    allow_short_rankings: bool = False
    regression: str | None = None
    against: str | None = None
    """The results the regression gate compares with (``--against``; default: last)."""
    margin: float = 0.0
    # the LLM endpoint: ``llm`` as given (the API), else the ``--llm-*`` flags over the
    # configs' [llm] tables over RAGMARK_LLM_*
    llm: LLMSettings | Mapping[str, Any] | None = None
    llm_flags: Mapping[str, Any] = field(default_factory=dict)
    require_llm: bool = False
    judge_repeats: int = 1
    """``--judge-repeats``: each judge asked that many times, its noise measured."""
    judge_temperature: float | None = None
    """``--judge-temperature``: the repeats' temperature (None: the default, 0.7)."""
    judge_llms: tuple[str, ...] = ()
    """``--judge-llm MODEL[@URL]``, repeated: a jury of those models."""
    human_labels: str | None = None
    store: str | Path | None = None
    """The label store ``store:QUEUE`` reads (None: beside ``history``)."""
    # how it runs
    no_index_cache: bool = False
    latency_sample: int = 100
    executor_name: str | None = None
    """``local`` or ``ray`` (None: the active executor); ``address``: Ray's."""
    address: str | None = None
    dry_run: bool = False
    """Only estimate the judge calls: no output is checked or written."""


@dataclass(frozen=True, kw_only=True)
class RunRequest(Request):
    """``ragmark run``: one config on a dataset, a system's logged outputs, a TREC run
    file, or an in-memory ``pipeline``."""

    outputs: str | Path | None = None
    traces: str | Path | None = None
    """``--traces``: OTLP JSON traces scored as logged outputs (a file or a folder)."""
    trace_attributes: tuple[str, ...] = ()
    """``--trace-attribute ROLE=NAME``: the attributes that name a question's id and carry
    the user's feedback, and the metadata keys of retrieved documents
    (:class:`~ragmark.data.traces.TraceKeys`)."""
    root_names: tuple[str, ...] = ()
    """``--root-name``: only traces whose root span has one of these names are questions."""
    root_kinds: tuple[str, ...] = ()
    """``--root-kind``: only traces whose root span is of one of these kinds are questions."""
    run_file_in: str | None = None
    config: str | Path | RunConfig | None = None
    pipeline: Callable[..., Any] | None = None
    """The callable of ``config``'s ``python`` pipeline, when it lives in memory."""
    name: str | None = None
    top_n: int | None = None
    unit: str | None = None
    run_file: str | None = None
    gate_alpha: float = 0.05


@dataclass(frozen=True, kw_only=True)
class CompareRequest(Request):
    """``ragmark compare``: several configs on the same questions. ``metrics`` are the
    compared ones (or ``all``); ``run_metrics`` what each run computes (default: the
    dataset's defaults)."""

    configs: Sequence[str | Path | RunConfig] = ()
    outputs: Sequence[str | Path] = ()
    """``--outputs FILE`` (repeatable): systems' logged outputs (TREC RAG's answer files
    among them) compared on the dataset's questions instead of configs run here; each
    named by its run_id, else its file's name."""
    pipelines: Mapping[str, Callable[..., Any]] = field(default_factory=dict)
    run_metrics: Sequence[str] | None = None
    baseline: str | None = None
    test: str = "permutation"
    alpha: float = 0.05
    correction: str = "per-metric"
    resamples: int = 10_000
    seed: int = 0
    stats: StatSettings | None = None
    """Overrides test, alpha, correction, resamples and seed when given."""
    pairwise: str | Sequence[str] | None = None
    """``--pairwise``: criteria every two configs' answers are judged by (None: none)."""
    rank_against: str | None = None
    """``--rank-against FILE``: a published table of run-level scores; Kendall's tau
    between the compared systems' ranking on each compared metric and the file's."""
    pairwise_orders: int = 2
    pairwise_rubric: Sequence[str] = ()
    """``--pairwise-rubric NAME=TEXT``: custom criteria for --pairwise."""
