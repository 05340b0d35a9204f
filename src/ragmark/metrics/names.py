"""Metric names: the one place where a metric string is parsed.

Every metric has one canonical string form (``ndcg@10``, ``recall@5``, ``mrr``,
``groundedness``). ``parse_metric`` accepts the canonical form, a few well-known
aliases (``P@10``, ``success@5``, ``recip_rank``, ``Rprec``) and any letter case, and
returns a :class:`MetricName` whose ``str()`` is canonical. An unknown name raises
:class:`~ragmark.errors.UnknownComponentError` listing the known ones.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from ragmark.case import Case
from ragmark.errors import UnknownComponentError
from ragmark.extensions import BUILT_IN, Door
from ragmark.metrics import abstention as ab
from ragmark.metrics import agent as ag
from ragmark.metrics import answer as am
from ragmark.metrics import labels as lab
from ragmark.metrics import production as prod
from ragmark.metrics import retrieval as ret
from ragmark.metrics.metric_name import (
    NAME,
    Option,
    canonical,
    check_options,
    commas,
    show,
    split,
    typed,
)
from ragmark.types import NEEDS, MetricSpec  # noqa: F401  (NEEDS, MetricSpec: names' API)

_BUILTIN_SPECS = (*ret.SPECS, *am.SPECS, *ab.SPECS, *prod.SPECS, *ag.SPECS, *lab.SPECS)
"""The built-in metrics computed without a model, each family's declared beside its
code: the retrieval metrics in :mod:`ragmark.metrics.retrieval`, the answer metrics in
:mod:`ragmark.metrics.answer`, the abstention metrics in
:mod:`ragmark.metrics.abstention`, the production measures in
:mod:`ragmark.metrics.production`, the label metrics ``ragmark label`` computes in
:mod:`ragmark.metrics.labels`. The judge metrics, in their modules of
:mod:`ragmark.judges`, join on first use of :func:`catalogue` (they bring the LLM
stack; parsing ``ndcg@10`` does not need it)."""

def _judges() -> Iterable[tuple[str, MetricSpec]]:
    from ragmark.judges import specs as judge_specs

    return ((j.name, j) for j in judge_specs())


def _admit(spec: Any, plugin: bool) -> MetricSpec:
    """A metric as the catalogue holds it: a package's spec (or the callable returning
    one) checked as :func:`register` says, an old-form answer metric adapted."""
    if plugin and not isinstance(spec, MetricSpec) and callable(spec):
        spec = spec()
    if not isinstance(spec, MetricSpec):
        raise UnknownComponentError(f"a metric plugin must give a MetricSpec, got {spec!r}")
    check_options(spec)
    if not plugin:
        return spec
    if spec.kind not in ("retrieval", "answer", "judge") or spec.compute is None:
        raise UnknownComponentError(f"metric plugin {spec.name!r}: only retrieval metrics "
                                    "(compute(graded, k)), answer metrics (compute(case)) "
                                    "and judges (compute(client, case, counts)) with a "
                                    "compute function can be added")
    if spec.kind == "judge" and spec.options:
        raise UnknownComponentError(f"metric plugin {spec.name!r}: a judge's name takes "
                                    "no options (give it a config key: spec.params)")
    if not _NAME.fullmatch(spec.name):
        raise UnknownComponentError(
            f"metric plugin {spec.name!r}: a metric's name is lower-case letters, digits and "
            "'_', starting with a letter or '_' (it is read back from --metrics, where "
            "'@' gives a cutoff, parentheses options, and names are lower-cased)")
    return replace(spec, compute=_adapted(spec.name, spec.compute)) if (
        spec.kind == "answer" and _positional(spec.compute) == 3) else spec


METRICS: Door[MetricSpec] = Door("ragmark.metric", _judges, admit=_admit,
                                 name_of=lambda s: s.name, error=UnknownComponentError)
"""The metric catalogue's door (:class:`ragmark.extensions.Door`): the built-ins (at
import), then, on first use of :func:`catalogue`, the judges and the packages'
(``ragmark.metric`` entry points), in the order the defaults are computed and
reported."""

def catalogue() -> dict[str, MetricSpec]:
    """Every metric: the built-ins, the judge metrics, and those packages add through the
    ``ragmark.metric`` entry-point group (each a :class:`MetricSpec`, or a callable
    returning one); the judges and packages are loaded once, on first use, never at
    import."""
    return METRICS.load()


def register(spec: MetricSpec, *, plugin: bool = True) -> None:
    """Add a metric to the catalogue (:data:`METRICS`): the one door the built-ins and
    the plugins come through; a name is there once (the same spec again is a no-op). A
    plugin adds a retrieval metric, ``compute(graded, k, **options)``
    (:class:`~ragmark.metrics.graded.Graded`, per-query values), an answer metric,
    ``compute(case, **options)`` (a :class:`~ragmark.case.Case`), or a judge,
    ``compute(client, case, counts)``, as the built-ins declare theirs, with the options
    its name takes (``spec.options``); an answer metric of the old form
    ``compute(sample, answer, contexts)`` still works, adapted, with a
    DeprecationWarning."""
    METRICS.register(spec, source="registered" if plugin else BUILT_IN)


def _positional(fn: Callable[..., Any]) -> int:
    """How many positional parameters ``fn`` takes (those without a default)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return 1
    return sum(1 for p in params if p.default is p.empty
               and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))


def _adapted(name: str, given: Callable[..., Any]) -> Callable[[Case], Any]:
    """An answer metric of the old form ``compute(sample, answer, contexts)`` read as
    ``compute(case)``, with a DeprecationWarning once, when it is registered."""
    warnings.warn(f"metric plugin {name!r}: compute(sample, answer, contexts) is "
                  "deprecated; declare compute(case) and read case.sample, case.answer, "
                  "case.contexts (ragmark.case.Case)", DeprecationWarning, stacklevel=3)

    def compute(case: Case) -> Any:
        return given(case.sample, case.answer, list(case.contexts))

    return compute


for _spec in _BUILTIN_SPECS:
    METRICS.register(_spec)


ALIASES = {
    "p": "precision",
    "r": "recall",
    "success": "hit",
    "recip_rank": "mrr",
    "rprec": "r_precision",
    "ndcg_cut": "ndcg",
    "map_cut": "map",
    "recall_k": "recall",
}

_NAME = NAME
"""What a metric's own name may be: what :func:`parse_metric` reads back whole."""


@dataclass(frozen=True, slots=True, order=True)
class MetricName:
    """A metric: its family ``name``, the ``options`` its name gives (those that differ
    from the declared defaults, in declared order) and its cutoff ``k``. ``str()`` is
    its canonical text."""

    name: str
    k: int | None = None
    options: tuple[Option, ...] = ()

    def __str__(self) -> str:
        opts = f"({','.join(f'{n}={show(v)}' for n, v in self.options)})" \
            if self.options else ""
        return f"{self.name}{opts}" + ("" if self.k is None else f"@{self.k}")

    @property
    def spec(self) -> MetricSpec:
        found = METRICS.entries.get(self.name)  # a built-in without loading the judges
        return found if found is not None else catalogue()[self.name]

    @property
    def kind(self) -> str:
        return self.spec.kind

    def settings(self) -> dict[str, Any]:
        """Every option the metric declares, with this name's value or the default:
        what its ``compute`` is given by keyword."""
        return {p.name: p.default for p in self.spec.options} | dict(self.options)


def read_name(text: str) -> MetricName:
    """A name a results file, the history or a report holds, read back (never by
    splitting on ``@``): as :func:`parse_metric` reads it when the catalogue knows it;
    else its parts as written (a plugin's that is not installed now: options as text),
    and a text not of a name's form is a family of its own.

    >>> read_name("ndcg@10"), read_name("pairwise:overall").name
    (MetricName(name='ndcg', k=10, options=()), 'pairwise:overall')
    >>> read_name("rouge_9(n=2)@3")
    MetricName(name='rouge_9', k=3, options=(('n', '2'),))
    """
    try:
        return parse_metric(text)
    except UnknownComponentError:
        pass
    parts = canonical(text)
    return MetricName(text) if parts is None else MetricName(parts[0], parts[2], parts[1])


def judge_metrics() -> tuple[str, ...]:
    """The judge metrics, in the catalogue's order (those a dropped-in judge module
    declares among them)."""
    return tuple(n for n, s in catalogue().items() if s.kind == "judge")


def ask_of(metric: str) -> str:
    """What people answer yes or no to about ``metric``: its spec's ``ask``, else the one
    generic question (a metric that declares none: a plugin's)."""
    found = catalogue().get(metric)
    return found.ask if found is not None and found.ask else (
        f"is the {metric} verdict yes?")


def verdict_at(metric: str) -> float:
    """The value at and above which ``metric``'s verdict is yes (its spec's; 0.5 for a
    metric the catalogue does not hold)."""
    found = catalogue().get(metric)
    return found.verdict_at if found is not None else 0.5


def scale_of(metric: str) -> str:
    """What people are asked when they label ``metric`` on a five-point scale; empty
    when they label it yes or no."""
    found = catalogue().get(metric)
    return found.scale if found is not None else ""


def lower_is_better() -> frozenset[str]:
    """The metrics for which a rise is the bad direction (latency, refusal,
    hallucination, ...), as the catalogue declares them."""
    return frozenset(s.name for s in catalogue().values() if s.better == "lower")


def aggregates() -> frozenset[str]:
    """The aggregate metrics (``grounded_ratio``, ``aurc``): computed over a run, with
    no per-question value of their own; reported and gated, not tested question by
    question."""
    return frozenset(s.name for s in catalogue().values() if s.kind == "aggregate")


def known_metrics() -> str:
    """The known metric names, for error messages and ``--help``."""
    parts = []
    for s in catalogue().values():
        suffix = {"required": "@k", "optional": "[@k]", "none": ""}[s.cutoff]
        opts = f"[({','.join(f'{p.name}=' for p in s.options)})]" if s.options else ""
        parts.append(s.name + opts + suffix)
    return ", ".join(parts)


def parse_metric(text: str | MetricName) -> MetricName:
    """Parse ``"ndcg@10"``, ``"rbp(p=0.9)@10"`` (or an alias, in any case) into a
    :class:`MetricName`: the family looked up in the catalogue, each option turned into
    its declared type (:func:`~ragmark.metrics.metric_name.typed`).

    >>> str(parse_metric("P@5")), str(parse_metric("recip_rank")), str(parse_metric("NDCG_cut_10"))
    ('precision@5', 'mrr', 'ndcg@10')
    """
    if isinstance(text, MetricName):
        return text
    if not isinstance(text, str):
        raise UnknownComponentError(f"a metric name must be a string, got {text!r}")
    whole = text.strip().lower()
    named = METRICS.entries.get(whole) or (catalogue().get(whole) if _NAME.fullmatch(whole)
                                           else None)
    if named is not None:  # a name ending in _2 is its own before it is a cutoff
        if named.cutoff == "required":
            raise UnknownComponentError(f"metric {text!r} needs a cutoff, e.g. '{whole}@10'")
        return MetricName(whole, None)
    parts = split(text)
    if parts is None:
        raise UnknownComponentError(f"unknown metric {text!r}; known: {known_metrics()}")
    base, given, k_text = parts
    base = ALIASES.get(base, base)
    spec = METRICS.entries.get(base) or catalogue().get(base)
    if spec is None:
        raise UnknownComponentError(f"unknown metric {text!r}; known: {known_metrics()}")
    k = int(k_text) if k_text is not None else None
    if spec.cutoff == "required" and k is None:
        raise UnknownComponentError(f"metric {text!r} needs a cutoff, e.g. '{base}@10'")
    if spec.cutoff == "none" and k is not None:
        raise UnknownComponentError(f"metric {text!r} takes no cutoff; use '{base}'")
    if k is not None and k < 1:
        raise UnknownComponentError(f"metric {text!r}: the cutoff must be at least 1")
    return MetricName(base, k, typed(spec, text.strip(), given))


def groups() -> dict[str, tuple[str, ...]]:
    """Names that stand for several metrics, as their catalogue entries declare them
    (``group``): ``claims`` for every claim-level metric, ``nuggets`` for the four
    nugget scores, ``support`` for the three support scores."""
    out: dict[str, list[str]] = {}
    for name, s in catalogue().items():
        if s.group:
            out.setdefault(s.group, []).append(name)
    return {g: tuple(names) for g, names in out.items()}


def expand_groups(texts: Iterable[str | MetricName]) -> list[str | MetricName]:
    """``texts`` with each group name (:func:`groups`) replaced by its metrics (the
    groups, judges' names, are looked up only for a name that is not a built-in's)."""
    out: list[str | MetricName] = []
    for t in texts:
        key = t.strip().lower() if isinstance(t, str) else ""
        base = split(key)
        if not key or (base is not None and ALIASES.get(b := base[0], b) in METRICS.entries):
            out.append(t)
        else:
            out.extend(groups().get(key, (t,)))
    return out


def split_names(text: str | Iterable[str | MetricName]) -> list[str]:
    """The names of a comma-separated list (or of a list of names), stripped, blanks
    dropped: how every list of metric names a user gives is read (``--metrics``,
    ``--judge-metrics``, the gates' lists)."""
    parts = commas(text) if isinstance(text, str) else [str(t) for t in text]
    return [p.strip() for p in parts if p.strip()]


def parse_metrics(texts: Iterable[str | MetricName] | str) -> list[MetricName]:
    """Parse a list (or a comma-separated string) of metric names to compute, a group
    name standing for its metrics (:func:`groups`); duplicates dropped. A label metric
    is refused (:func:`computable`)."""
    if isinstance(texts, str):
        texts = split_names(texts)
    seen: dict[MetricName, None] = {}
    for t in expand_groups(texts):
        seen.setdefault(computable(parse_metric(t)), None)
    return list(seen)


def computable(name: MetricName) -> MetricName:
    """``name`` when ``run`` and ``compare`` compute it; an error naming the command
    that does for a label metric (``judged_precision@5``: ``ragmark label``)."""
    if name.kind == "label":
        raise UnknownComponentError(
            f"{name} is a label metric: 'ragmark label' computes it from an LLM's "
            "relevance labels; run and compare do not")
    return name
