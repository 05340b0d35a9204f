"""Run configurations: built-in names or a TOML file, validated by pydantic.

A TOML file describes one pipeline::

    name = "bm25-small-chunks"
    top_k = 20          # retrieved per question
    top_n = 3           # passed on to the generator
    unit = "auto"       # "chunk" | "document" | "auto"

    [chunker]
    name = "fixed"
    size = 300
    overlap = 30

    [retriever]
    name = "bm25"
    k1 = 1.2
    b = 0.75

    [generator]
    name = "sentences"
    max_chars = 300

A hybrid retriever fuses two or more retrievers::

    [retriever]
    name = "hybrid"
    fusion = "rrf"      # or "weighted" (normalised scores, see ``norm`` and ``weights``)
    k = 60

    [[retriever.retrievers]]
    name = "bm25"

    [[retriever.retrievers]]
    name = "dense"

A ``[grid]`` table expands one file into several configs, one per combination of its
values; its keys are dotted paths into the config::

    [grid]
    "chunker.size" = [200, 500]
    top_k = [5, 10]

A ``[judges.METRIC]`` table sets how one judge metric judges: ``alignment = "FILE"``
gives it the examples and rules people's labels chose (``judge-eval --align
--save-alignment FILE``; the path relative to where ragmark runs).

A ``[pipeline]`` table makes the config an external RAG system (a Python callable or an
HTTP endpoint, see :mod:`ragmark.pipelines.config`) that ragmark asks instead of running
a chunker, retriever and generator; such a config has none of those tables.
"""

from __future__ import annotations

import copy
import inspect
import itertools
import re
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ragmark.config_judges import JudgeTable, check_judges, guidance_of, judges_json
from ragmark.config_tables import (  # noqa: F401  (the env names: config's API)
    EMBEDDING_ENV,
    apply_language,
    resolve_auto_reranker,
    resolve_embedding_env,
)
from ragmark.errors import ConfigError, UnknownComponentError, validation_problems
from ragmark.llm.table import LLMTable, SimulatorTable
from ragmark.matching import match_threshold
from ragmark.pipelines.config import PIPELINE_MODELS, PipelineConfig, PythonPipelineConfig
from ragmark.registry import registry

KINDS = ("chunker", "retriever", "reranker", "generator")


class Component(BaseModel):
    """A component chosen by name, with its parameters (checked by the component)."""

    model_config = ConfigDict(extra="allow", frozen=True)
    name: str

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


def check_regexes(patterns: Sequence[str], what: str) -> None:
    """A ValueError naming the first of ``patterns`` that is not a regular expression."""
    for p in patterns:
        try:
            re.compile(p)
        except re.error as e:
            raise ValueError(f"{what} {p!r} is not a regular expression: {e}") from None


class RunConfig(BaseModel):
    """One pipeline: chunker -> retriever -> (reranker) -> generator, and how it is judged."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str = "sparse"
    chunker: Component | None = None  # None: the dataset's default chunker
    retriever: Component = Component(name="bm25")
    reranker: Component | None = None  # re-scores the top_k before top_n go on
    generator: Component = Component(name="sentences")
    top_k: int = Field(10, ge=1)
    top_n: int = Field(3, ge=1)
    unit: Literal["auto", "chunk", "document"] = "auto"
    alpha: float = Field(0.5, ge=0.0, le=1.0)
    grounded_threshold: float = Field(0.10, ge=0.0, le=1.0)
    refusal_patterns: tuple[str, ...] = ()
    """Regular expressions (case-insensitive) that mark an answer as a refusal, besides
    the default phrases (:data:`ragmark.metrics.production.REFUSALS`)."""
    language: str | None = None
    """The language of the data (``de``, ``german``): BM25's stemmer and stop-words
    unless its table sets them (:mod:`ragmark.languages`)."""
    context_match: str = "contains"
    """How a retrieved context matches a ground-truth passage: ``contains`` (one text
    holds the other, 20 characters at least) or ``similarity:T`` (string similarity at
    least T, as RAGAS's non-LLM context recall and precision count it;
    :mod:`ragmark.matching`)."""
    refusal_judge: bool = False
    """Whether an LLM judge (:mod:`ragmark.judges.refusal`) decides which answers are
    refusals, instead of the phrases and patterns (needs an LLM endpoint)."""
    access: tuple[str, ...] | None = None
    """Who is asking: the access groups of the user the questions are asked as. A
    document whose metadata ``access`` (a group or a list of them) names none of these
    is left out of the index (:mod:`ragmark.retrieval.access`); None: no filter, every
    document is seen."""
    pipeline: PipelineConfig | None = None  # an external system instead of the parts above
    llm: LLMTable | None = None  # the LLM endpoint (judges; llm generator and reranker)
    simulator: SimulatorTable | None = None
    """``ragmark simulate``'s simulated user: fields set over the judges' endpoint (the
    ``[llm]`` table and flags), e.g. another ``model`` or ``base_url``, a ``temperature``."""
    judges: dict[str, JudgeTable] = {}
    """Per judge metric: its alignment (``[judges.faithfulness] alignment = "FILE"``)."""

    @field_validator("judges")
    @classmethod
    def _judges(cls, v: dict[str, JudgeTable]) -> dict[str, JudgeTable]:
        return check_judges(v)

    def guidance(self) -> dict[str, Any]:
        """Each aligned judge metric's :class:`~ragmark.judges.guidance.Guidance`."""
        return guidance_of(self.judges)

    def judges_json(self) -> dict[str, Any]:
        """What the results record of the aligned judges: file, hash, examples, rules."""
        return judges_json(self.judges)

    @field_validator("refusal_patterns")
    @classmethod
    def _patterns(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        check_regexes(v, "refusal pattern")
        return v

    @field_validator("context_match")
    @classmethod
    def _match(cls, v: str) -> str:
        t = match_threshold(v.strip())
        return "contains" if t is None else f"similarity:{t:g}"

    def llm_params(self, component: Component) -> dict[str, Any]:
        """A component's parameters; an ``llm`` one gets the ``[llm]`` table's endpoint
        for what its own table does not give."""
        if component.name != "llm" or self.llm is None:
            return component.params
        return {**self.llm.endpoint(), **component.params}


_HYBRID: dict[str, Any] = {
    "name": "hybrid",
    "fusion": "rrf",
    "k": 60,
    "retrievers": [{"name": "bm25"}, {"name": "dense"}],
}

BUILTINS: dict[str, dict[str, Any]] = {
    "sparse": {"name": "sparse"},
    "dense": {"name": "dense", "retriever": {"name": "dense"}},
    "dense-api": {"name": "dense-api", "retriever": {"name": "dense", "provider": "env"}},
    "hybrid": {"name": "hybrid", "retriever": _HYBRID},
    "hybrid-rerank": {"name": "hybrid-rerank", "retriever": _HYBRID,
                      "reranker": {"name": "auto"}},
}
"""Built-in configs by name. ``reranker = "auto"`` takes whichever reranker is set up."""


def _format_validation(err: ValidationError, source: str) -> str:
    lines = []
    for p in validation_problems(err):
        loc = list(p.loc)
        model: type[BaseModel] = RunConfig
        if loc[:1] == ["pipeline"] and len(loc) > 1 and loc[1] in PIPELINE_MODELS:
            model = PIPELINE_MODELS[str(loc.pop(1))]  # drop pydantic's union tag
        elif loc[:1] == ["llm"] and len(loc) > 1:
            model = LLMTable
        key = ".".join(str(x) for x in loc) or "(top level)"
        msg = p.msg
        if p.type == "extra_forbidden":
            known = ", ".join(model.model_fields)
            table = f" of [{loc[0]}]" if model is not RunConfig else ""
            msg = f"unknown key; known keys{table}: {known}"
        elif p.type in ("union_tag_invalid", "union_tag_not_found"):
            key += ".kind"
            msg = f"expected {' or '.join(map(repr, PIPELINE_MODELS))}"
        lines.append(f"{source}, key '{key}': {msg}")
    return "\n".join(lines)


def _component_errors(kind: str, comp: Any, key: str, source: str) -> list[str]:
    """Unknown names and parameters of one component (and of nested ``retrievers``)."""
    if not isinstance(comp, dict) or not isinstance(comp.get("name"), str):
        return []  # pydantic reports the shape
    try:
        factory = registry(kind).factory(comp["name"])
    except UnknownComponentError as e:
        return [f"{source}, key '{key}.name': {e}"]
    errors = []
    params = {k: v for k, v in comp.items() if k != "name"}
    try:
        sig = inspect.signature(factory)
    except (TypeError, ValueError):
        sig = None
    if sig is not None and not any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in sig.parameters.values()
    ):
        known = [n for n, p in sig.parameters.items() if p.kind is not p.VAR_POSITIONAL]
        for k in params:
            if k not in known:
                errors.append(
                    f"{source}, key '{key}.{k}': not a parameter of {kind} {comp['name']!r}; "
                    f"known: {', '.join(known) or 'none'}"
                )
    subs = params.get("retrievers")
    if kind == "retriever" and isinstance(subs, list):
        for i, sub in enumerate(subs):
            if not isinstance(sub, dict) or "name" not in sub:
                errors.append(f"{source}, key '{key}.retrievers[{i}]': expected a table with "
                              "a 'name'")
            else:
                errors += _component_errors("retriever", sub, f"{key}.retrievers[{i}]", source)
    return errors


def _pipeline_checks(data: dict[str, Any], source: str) -> None:
    """A pipeline config has no parts of its own; its python_path is relative to the file."""
    pipe = data.get("pipeline")
    if pipe is None:
        return
    parts = [k for k in KINDS if k in data]
    if parts:
        raise ConfigError(f"{source}, key '{parts[0]}': a config with a [pipeline] asks an "
                          f"external system; it takes no {', '.join(KINDS[:-1])} or {KINDS[-1]}")
    paths = pipe.get("python_path") if isinstance(pipe, dict) else None
    if isinstance(paths, list) and Path(source).is_file():
        from ragmark.pipelines.python import resolve_python_path

        pipe["python_path"] = resolve_python_path(paths, Path(source).parent)


def with_language(cfg: RunConfig, language: str | None) -> RunConfig:
    """``cfg`` in ``language`` (``--language``): as ``language = ...`` in its file would
    make it, its bm25 retrievers' own stemmer and stop-words kept. A ConfigError for an
    unknown language."""
    if language is None:
        return cfg
    data = cfg.model_dump(mode="json", exclude_none=True)
    data.pop("language", None)
    full = {**data, "language": language}
    apply_language(full, "--language")
    return RunConfig.model_validate(full)


def _validate(data: dict[str, Any], source: str) -> RunConfig:
    _pipeline_checks(data, source)
    apply_language(data, source)
    resolve_auto_reranker(data, source)
    resolve_embedding_env(data, source)
    try:
        cfg = RunConfig.model_validate(data)
    except ValidationError as e:
        raise ConfigError(_format_validation(e, source)) from None
    if isinstance(cfg.pipeline, PythonPipelineConfig):
        from ragmark.pipelines.python import load_target

        load_target(cfg.pipeline, source)  # an import error shows before any work
    if cfg.pipeline is not None:
        return cfg
    errors = []
    for kind in KINDS:
        errors += _component_errors(kind, data.get(kind), kind, source)
    if errors:
        raise ConfigError("\n".join(errors))
    _build_checks(cfg, source)
    return cfg


def _build_checks(cfg: RunConfig, source: str) -> None:
    """Build the chunker, retriever and (non-LLM) reranker once, so that a value they
    refuse (an overlap past the size, a weight per retriever) is an error naming the file
    and the key before any data is read. Models load lazily: building is cheap."""
    for kind in ("chunker", "retriever", "reranker"):
        comp = getattr(cfg, kind)
        if comp is None or comp.name == "llm":
            continue
        try:
            registry(kind).create(comp.name, **comp.params)
        except ConfigError as e:
            raise ConfigError(f"{source}, key '{kind}': {e}") from None


def _read(spec: str) -> tuple[dict[str, Any], str]:
    if spec in BUILTINS:
        return copy.deepcopy(BUILTINS[spec]), f"built-in config {spec!r}"
    path = Path(spec)
    if not path.is_file():
        raise ConfigError(
            f"config {spec!r} is neither a built-in ({', '.join(BUILTINS)}) nor a file"
        )
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8-sig"))
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: not valid UTF-8 ({e.reason} at byte {e.start})") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: invalid TOML: {e}") from None
    data.setdefault("name", path.stem)
    return data, str(path)


def _set_path(data: dict[str, Any], dotted: str, value: Any, source: str) -> None:
    parts = dotted.split(".")
    node = data
    for i, p in enumerate(parts[:-1]):
        nxt = node.get(p)
        if nxt is None:
            nxt = node[p] = {}
        if not isinstance(nxt, dict):
            where = ".".join(parts[: i + 1])
            raise ConfigError(f"{source}, key 'grid.{dotted}': '{where}' is not a table")
        node = nxt
    node[parts[-1]] = value


def _expand_grid(data: dict[str, Any], source: str, fixed: set[str]) -> list[dict[str, Any]]:
    grid = data.pop("grid", None)
    if grid is None:
        return [data]
    if not isinstance(grid, dict) or not grid:
        raise ConfigError(f"{source}, key 'grid': expected a table of key = [values]")
    keys = list(grid)
    for k in keys:
        vals = grid[k]
        if not isinstance(vals, list) or not vals:
            raise ConfigError(f"{source}, key 'grid.{k}': expected a non-empty list of values")
        if k in fixed:
            raise ConfigError(f"{source}, key 'grid.{k}': also given on the command line; "
                              "drop one of the two")
        if k == "name":
            raise ConfigError(f"{source}, key 'grid.name': the name cannot vary in a grid")
    out = []
    base = data.get("name", "config")
    for combo in itertools.product(*(grid[k] for k in keys)):
        item = copy.deepcopy(data)
        for k, v in zip(keys, combo, strict=True):
            _set_path(item, k, v, source)
        label = ",".join(f"{k}={v}" for k, v in zip(keys, combo, strict=True))
        item["name"] = f"{base}[{label}]"
        out.append(item)
    return out


def load_configs(spec: str | Path, **overrides: Any) -> list[RunConfig]:
    """A built-in name or a TOML file, grids expanded; ``overrides`` (not None) replace
    top-level keys."""
    data, source = _read(str(spec))
    given = {k: v for k, v in overrides.items() if v is not None}
    data.update(given)
    return [_validate(d, source) for d in _expand_grid(data, source, set(given))]


def load_config(spec: str | Path, **overrides: Any) -> RunConfig:
    """Exactly one config: a built-in name (``sparse``, ``dense``, ``hybrid``,
    ``hybrid-rerank``) or a TOML file without a grid."""
    cfgs = load_configs(spec, **overrides)
    if len(cfgs) != 1:
        raise ConfigError(
            f"config {str(spec)!r} is a grid of {len(cfgs)} configs; "
            "run them with 'ragmark compare'"
        )
    return cfgs[0]
