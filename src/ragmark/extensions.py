"""Every way to extend ragmark, in one place: what each extension point takes, the
entry-point group a package declares it in, and the door built-ins and packages alike
come through. Nothing here is loaded at import; each door finds its packages on first
use.

A package declares its extensions in its ``pyproject.toml``::

    [project.entry-points."ragmark.retriever"]
    my_retriever = "my_pkg.retrieval:MyRetriever"

    [project.entry-points."ragmark.metric"]
    my_metric = "my_pkg.metrics:MY_METRIC"        # a MetricSpec

A built-in is added the same way, through the same door (:class:`Door`, the one
loader every point shares): the components are listed in :mod:`ragmark.registry`, the
metrics beside their code (each module's ``SPECS``), a judge is a module of
:mod:`ragmark.judges` declaring ``SPECS``, an input format a module of
:mod:`ragmark.data.formats` declaring ``FORMAT``, an LLM provider a module of
:mod:`ragmark.llm.providers` declaring ``PROVIDER``. ``ragmark plugins`` lists every
door's entries, built-in and added.
"""

from __future__ import annotations

import importlib
import importlib.metadata
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

T = TypeVar("T")

BUILT_IN = "built-in"
"""The source of an extension that ships with ragmark."""


class Door(Generic[T]):
    """One extension point's registry, the one loader they all share: its ``entries``
    by name, each with its source (:data:`BUILT_IN`, or the package entry point it came
    from). The built-ins (``built_ins()``: ``(name, value)`` pairs) and the installed
    packages' entry points in ``group`` are loaded once, on first use, never at import,
    both through :meth:`register`. ``admit`` turns what an entry point names into the
    value (calling a factory, checking its type, adapting an old signature), raising
    ``error`` with the reason; ``name_of`` gives a value's name (None: the entry
    point's name). A ``lazy`` door keeps a package's ``module:attribute`` unloaded until
    it is used (components: a broken package breaks only the config that names it)."""

    def __init__(self, group: str, built_ins: Callable[[], Iterable[tuple[str, Any]]]
                 = lambda: (), *, admit: Callable[[Any, bool], T] | None = None,
                 name_of: Callable[[T], str] | None = None, lazy: bool = False,
                 error: type[Exception] = ValueError) -> None:
        self.group = group
        self._built_ins = built_ins
        self._admit = admit
        self._name_of = name_of
        self.lazy = lazy
        self.error = error
        self.entries: dict[str, T] = {}
        self.sources: dict[str, str] = {}
        self.packages: dict[str, tuple[str, str]] = {}
        """An entry a package added -> its entry point's (name, value)."""
        self._given: dict[str, Any] = {}
        self._loaded = False

    def register(self, value: Any, *, name: str | None = None, source: str = BUILT_IN) -> T:
        """Add ``value`` (admitted) under its name; the same value again is a no-op, a
        second value under a taken name an error naming both sources."""
        for taken, given in self._given.items():  # the same value again: admitted once
            if given is value and name in (None, taken):
                return self.entries[taken]
        got: T = value if self._admit is None else self._admit(value, source != BUILT_IN)
        key = name if name is not None else self._name_of(got) if self._name_of else None
        if key is None:
            raise self.error(f"{self.group}: an extension needs a name")
        if key in self.entries:
            if self._given[key] is value or self.entries[key] is got:
                return self.entries[key]
            raise self.error(f"{self.group}: {key!r} is already there ({self.sources[key]}); "
                             f"{source} cannot take its name")
        self.entries[key], self.sources[key], self._given[key] = got, source, value
        return got

    def forget(self, name: str) -> None:
        """Take ``name``'s entry out (a config's own judge, defined again by another)."""
        for table in (self.entries, self.sources, self._given, self.packages):
            table.pop(name, None)  # type: ignore[attr-defined]

    def load(self) -> dict[str, T]:
        """Every entry, the built-ins first (in their order), then the packages'."""
        if self._loaded:
            return self.entries
        self._loaded = True
        for name, value in self._built_ins():
            self.register(value, name=name)

        for ep in importlib.metadata.entry_points(group=self.group):
            where = f"package {ep.name} ({ep.value})"
            if self.lazy:
                self.register(ep.value, name=ep.name, source=where)
                self.packages[ep.name] = (ep.name, ep.value)
                continue
            try:
                got = self.register(ep.load(), name=None if self._name_of else ep.name,
                                    source=where)
            except self.error:
                raise
            except Exception as e:  # a broken package must not break every command
                raise self.error(f"{self.group} plugin {ep.name!r} ({ep.value}) cannot be "
                                 f"loaded: {e}") from None
            name = self._name_of(got) if self._name_of else ep.name
            self.packages[name] = (ep.name, ep.value)
        return self.entries

    def plugins(self) -> dict[str, str]:
        """The entries not built in (a package's, or registered): name -> where from."""
        self.load()
        return {n: s for n, s in self.sources.items() if s != BUILT_IN}

    def built_ins(self) -> list[str]:
        """The built-in entries' names, in order."""
        self.load()
        return [n for n, s in self.sources.items() if s == BUILT_IN]


@dataclass(frozen=True)
class ExtensionPoint:
    """One way to extend ragmark: its ``group`` (the entry-point group), what the entry
    point names (``takes``: the value and its signature), the ``door`` every one comes
    through (``module:NAME`` or ``module:NAME[key]`` of a :class:`Door`), and where the
    built-ins of its kind are."""

    group: str
    takes: str
    door: str
    built_ins: str


_COMPONENT = ("a factory: a class or function called with the component's config-table "
              "keys as keywords, or a ragmark.registry.Table dataclass (its fields are "
              "the keys, checked) whose build() returns the component")


def _component(kind: str, what: str) -> ExtensionPoint:
    return ExtensionPoint(f"ragmark.{kind}", f"{_COMPONENT}; {what}",
                          f"ragmark.registry:DOORS[{kind}]",
                          f"ragmark.registry (_BUILTINS['{kind}'])")


POINTS: tuple[ExtensionPoint, ...] = (
    _component("chunker", "the chunker's chunk(document) -> list[Chunk] "
                          "(ragmark.chunking.base.Chunker)"),
    _component("retriever", "the retriever's index(chunks) and retrieve(queries, k) -> "
                            "(chunk indices, scores), best first "
                            "(ragmark.retrieval.base.Retriever)"),
    _component("reranker", "the reranker's score(query, passages) -> a score each "
                           "(ragmark.retrieval.rerank.Reranker)"),
    _component("generator", "the generator's generate(question, contexts) -> answer "
                             "(ragmark.generation.base.Generator)"),
    ExtensionPoint("ragmark.writer", "a factory returning write(written: "
                   "ragmark.report.writers.Written) -> the paths written (a results "
                   "format for --format)", "ragmark.registry:DOORS[writer]",
                   "ragmark.registry (_BUILTINS['writer'])"),
    ExtensionPoint("ragmark.metric", "a ragmark.types.MetricSpec (or a callable returning "
                   "one): kind 'retrieval' with compute(graded: ragmark.metrics.graded."
                   "Graded, k, **options) -> per-question values, kind 'answer' with "
                   "compute(case: ragmark.case.Case, **options) -> Score, or kind 'judge' "
                   "with compute(client, case, counts) -> awaitable Score or {metric: "
                   "Score}; options: the ones its name takes (MetricSpec.options)",
                   "ragmark.metrics.names:METRICS",
                   "each family's SPECS (ragmark.metrics.*), each judge module's SPECS "
                   "(ragmark.judges.*)"),
    ExtensionPoint("ragmark.input_format", "a ragmark.data.formats.RowFormat (or a callable "
                   "returning one): detect(field names) -> bool, row(row, where, lenient) "
                   "-> a ragmark item, export(items, model) -> a test set in its shape "
                   "(optional), needs: the fields its rows must have, reads: the file "
                   "suffixes it claims; or a FolderFormat: detect(folder) "
                   "-> bool, load(folder, corpus, split, lenient) -> Dataset; or a "
                   "DocumentFormat: detect(parsed JSON) -> bool, load(path, data, corpus, "
                   "lenient) -> Dataset; or an ItemsFormat: detect(items) -> bool, "
                   "rows(items, against, lenient) -> ragmark rows",
                   "ragmark.data.formats:FORMATS",
                   "the modules of ragmark.data.formats (each a FORMAT)"),
    ExtensionPoint("ragmark.llm_provider", "a ragmark.llm.providers.base.Provider: how to "
                   "call one provider's chat API (its request body, its answer, its "
                   "structured-output forms)", "ragmark.llm.providers:PROVIDERS",
                   "the modules of ragmark.llm.providers (each a PROVIDER)"),
)
"""Every extension point, components first."""


def groups() -> tuple[str, ...]:
    """The entry-point groups ragmark reads."""
    return tuple(p.group for p in POINTS)


def door_of(point: ExtensionPoint) -> Door[Any]:
    """The door of ``point`` (its module imported: the built-ins come with it)."""
    module, _, attr = point.door.partition(":")
    name, _, key = attr.rstrip("]").partition("[")
    found = getattr(importlib.import_module(module), name)
    return found[key] if key else found
