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
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ragmark.errors import ConfigError


class Component(BaseModel):
    """A component chosen by name, with its parameters (checked by the component)."""

    model_config = ConfigDict(extra="allow", frozen=True)
    name: str

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


class RunConfig(BaseModel):
    """One pipeline: chunker -> retriever -> generator, and how it is judged."""

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


BUILTINS: dict[str, dict[str, Any]] = {
    "sparse": {"name": "sparse"},
}


def _format_validation(err: ValidationError, source: str) -> str:
    lines = []
    for e in err.errors():
        key = ".".join(str(p) for p in e["loc"]) or "(top level)"
        msg = e["msg"]
        if e["type"] == "extra_forbidden":
            known = ", ".join(RunConfig.model_fields)
            msg = f"unknown key; known keys: {known}"
        lines.append(f"{source}, key '{key}': {msg}")
    return "\n".join(lines)


def load_config(spec: str | Path, **overrides: Any) -> RunConfig:
    """A built-in name (``sparse``) or the path of a TOML file; ``overrides`` (not None)
    replace top-level keys."""
    spec_s = str(spec)
    if spec_s in BUILTINS:
        data = dict(BUILTINS[spec_s])
        source = f"built-in config {spec_s!r}"
    else:
        path = Path(spec_s)
        if not path.exists():
            raise ConfigError(
                f"config {spec_s!r} is neither a built-in ({', '.join(BUILTINS)}) nor a file"
            )
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8-sig"))
        except UnicodeDecodeError as e:
            raise ConfigError(f"{path}: not valid UTF-8 ({e.reason} at byte {e.start})") from None
        except tomllib.TOMLDecodeError as e:
            raise ConfigError(f"{path}: invalid TOML: {e}") from None
        data.setdefault("name", path.stem)
        source = str(path)
    data.update({k: v for k, v in overrides.items() if v is not None})
    try:
        return RunConfig.model_validate(data)
    except ValidationError as e:
        raise ConfigError(_format_validation(e, source)) from None
