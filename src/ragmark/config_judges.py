"""A config's ``[judges.METRIC]`` tables: how one judge metric judges (today its
alignment, :mod:`ragmark.judges.guidance`), checked when the config is read."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from ragmark.errors import ConfigError
from ragmark.judges.guidance import read_guidance
from ragmark.metrics.names import catalogue


class JudgeTable(BaseModel):
    """``[judges.METRIC]``: how one judge metric judges."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    alignment: str
    """An alignment file (``judge-eval --save-alignment``): people's examples and rules
    the judge is given."""


def check_judges(tables: dict[str, JudgeTable]) -> dict[str, JudgeTable]:
    """``tables`` when each names a judge metric and an alignment file of it that reads
    (a ValueError, pydantic's, naming what is wrong otherwise)."""
    for metric, table in tables.items():
        spec = catalogue().get(metric)
        if spec is None or spec.kind != "judge":
            raise ValueError(f"{metric!r} is not a judge metric")
        try:
            read_guidance(table.alignment, metric)
        except ConfigError as e:
            raise ValueError(str(e)) from None
    return tables


def guidance_of(tables: dict[str, JudgeTable]) -> dict[str, Any]:
    """Each aligned judge metric's :class:`~ragmark.judges.guidance.Guidance`."""
    return {m: read_guidance(t.alignment, m) for m, t in tables.items()}


def judges_json(tables: dict[str, JudgeTable]) -> dict[str, Any]:
    """What the results record of the aligned judges: file, hash, examples, rules."""
    return {m: {"alignment": tables[m].alignment, "hash": g.hash,
                "examples": len(g.examples), "rules": len(g.rubric)}
            for m, g in guidance_of(tables).items()}
