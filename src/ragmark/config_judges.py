"""A config's ``[judges.METRIC]`` tables: how one judge metric judges (its alignment,
:mod:`ragmark.judges.guidance`), or a judge of the user's own criterion
(:mod:`ragmark.judges.criteria`), checked (and the criterion's metric defined) when the
config is read."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from ragmark.errors import ConfigError
from ragmark.judges.criteria import Criterion, CriterionJudge, model_of
from ragmark.judges.guidance import read_guidance
from ragmark.metrics.names import METRICS, catalogue
from ragmark.types import MetricSpec

SOURCE = "config"
"""The source a criterion's metric is registered under (:data:`ragmark.metrics.names.METRICS`)."""

_DEFINING = ("criterion", "scale", "reads", "steps")


class JudgeTable(BaseModel):
    """``[judges.METRIC]``: how one judge metric judges; with a ``criterion``, a judge of
    the user's own (:class:`~ragmark.judges.criteria.Criterion`'s fields)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    alignment: str | None = None
    """An alignment file (``judge-eval --save-alignment``): people's examples and rules
    the judge is given."""
    criterion: str | None = None
    scale: str | None = None
    reads: tuple[str, ...] | None = None
    steps: tuple[str, ...] | None = None

    def definition(self) -> Criterion | None:
        """The criterion this table defines; None for a built-in judge's alignment."""
        given = {k: v for k in _DEFINING if (v := getattr(self, k)) is not None}
        return Criterion(**given) if self.criterion is not None else None


def check_judges(tables: dict[str, JudgeTable]) -> dict[str, JudgeTable]:
    """``tables`` when each names a judge metric and an alignment file of it that reads,
    or defines a criterion (then a metric of the catalogue; a ValueError, pydantic's,
    naming what is wrong otherwise)."""
    for metric, table in tables.items():
        if table.criterion is None:
            extra = [k for k in _DEFINING if getattr(table, k) is not None]
            if extra:
                raise ValueError(f"[judges.{metric}] gives {', '.join(extra)} but no "
                                 "criterion: say in plain words what is judged")
            if table.alignment is None:
                raise ValueError(f"[judges.{metric}] gives neither alignment (a built-in "
                                 "judge's people's examples) nor criterion (a judge of "
                                 "your own)")
            spec = catalogue().get(metric)
            if spec is None or spec.kind != "judge":
                raise ValueError(f"{metric!r} is not a judge metric (give a criterion to "
                                 "define a judge of your own by that name)")
        else:
            try:
                define(metric, table.definition(), "config")  # type: ignore[arg-type]
            except ValidationError as e:
                raise ValueError(f"[judges.{metric}] " + "; ".join(
                    f"{'.'.join(map(str, err['loc']))}: {err['msg']}"
                    for err in e.errors(include_url=False))) from None
            except ConfigError as e:
                raise ValueError(str(e)) from None
        if table.alignment is not None:
            try:
                read_guidance(table.alignment, metric)
            except ConfigError as e:
                raise ValueError(str(e)) from None
    return tables


def guidance_of(tables: dict[str, JudgeTable]) -> dict[str, Any]:
    """Each aligned judge metric's :class:`~ragmark.judges.guidance.Guidance`."""
    return {m: read_guidance(t.alignment, m) for m, t in tables.items()
            if t.alignment is not None}


def judges_json(tables: dict[str, JudgeTable]) -> dict[str, Any]:
    """What the results record of the judges a config sets: an aligned judge's file,
    hash, examples and rules; a criterion's definition and hash."""
    out: dict[str, Any] = {m: {"alignment": tables[m].alignment, "hash": g.hash,
                               "examples": len(g.examples), "rules": len(g.rubric)}
                           for m, g in guidance_of(tables).items()}
    for m, t in tables.items():
        d = t.definition()
        if d is not None:
            out[m] = {**out.get(m, {}), **d.model_dump(mode="json"), "definition": d.hash}
    return out


def definition_of(spec: MetricSpec | None) -> Criterion | None:
    """The criterion a metric judges by; None for any other metric."""
    judge = None if spec is None else spec.compute
    return judge.definition if isinstance(judge, CriterionJudge) else None


def define(name: str, definition: Criterion, where: str) -> MetricSpec:
    """Make ``name`` a judge metric of the catalogue judging ``definition`` (``where``:
    the config that defines it, for errors). A name the built-ins or a package hold is
    refused; a name an earlier config defined takes the new definition (a compare
    checks its configs agree, :func:`agreeing`)."""
    held = catalogue().get(name)
    if held is not None and not METRICS.sources.get(name, "").startswith(SOURCE):
        raise ConfigError(f"{where}: [judges.{name}] defines a criterion, but {name!r} is "
                          f"already a metric ({METRICS.sources.get(name)}); give the "
                          "criterion another name")
    if held is not None and definition_of(held) == definition:
        return held
    METRICS.forget(name)
    return METRICS.register(CriterionJudge(name, definition).spec(), source=f"{SOURCE} {where}")


def written_steps(names: Any, client: Any) -> dict[str, list[str]]:
    """For the criteria among the metric ``names`` whose steps ``client``'s model wrote:
    metric -> steps (what a run records)."""
    out: dict[str, list[str]] = {}
    for n in names:
        judge = getattr(catalogue().get(n), "compute", None)
        if isinstance(judge, CriterionJudge) and model_of(client) in judge.written:
            out[n] = list(judge.written[model_of(client)])
    return out


def agreeing(configs: Any) -> None:
    """A ConfigError when two of ``configs`` define a criterion of one name differently
    (a compare judges every config by one definition), naming both."""
    seen: dict[str, tuple[str, Criterion]] = {}
    for cfg in configs:
        for name, table in cfg.judges.items():
            d = table.definition()
            if d is None:
                continue
            first = seen.setdefault(name, (cfg.name, d))
            if first[1] != d:
                raise ConfigError(f"[judges.{name}] is defined differently in configs "
                                  f"{first[0]!r} and {cfg.name!r}: a compare judges every "
                                  "config by one criterion; give them the same table, or "
                                  "different names")
            # the one every config is judged by, whichever was read last
            define(name, d, f"config {first[0]!r}")


def remember(data: Any, where: str) -> None:
    """Make the criteria a results file records (its configs' ``judges``) metrics again,
    each under a name the catalogue does not hold yet, so the commands that read the
    file ask people the criterion and judge it as the run did."""
    runs = [data.get("config")] + [c.get("config", c) for c in (
        data.get("configs") or {}).values() if isinstance(c, dict)]
    for cfg in runs:
        tables = cfg.get("judges") if isinstance(cfg, dict) else None
        for name, t in (tables if isinstance(tables, dict) else {}).items():
            if not isinstance(t, dict) or "criterion" not in t or name in catalogue():
                continue
            try:
                d = Criterion(**{k: t[k] for k in _DEFINING if k in t})
            except ValidationError:
                continue  # a record this version cannot read: the name stays unknown
            METRICS.register(CriterionJudge(name, d).spec(), source=f"{SOURCE} of {where}")
