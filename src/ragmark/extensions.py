"""Every way to extend ragmark, in one place: what each extension point takes, the
entry-point group a package declares it in, and the door built-ins and packages alike
come through. Nothing here is loaded at import; each door finds its packages on first
use.

A package declares its extensions in its ``pyproject.toml``::

    [project.entry-points."ragmark.retriever"]
    my_retriever = "my_pkg.retrieval:MyRetriever"

    [project.entry-points."ragmark.metric"]
    my_metric = "my_pkg.metrics:MY_METRIC"        # a MetricSpec

A built-in is added the same way, through the same door: the components are listed in
:mod:`ragmark.registry`, the metrics beside their code (each module's ``SPECS``), a
judge is a module of :mod:`ragmark.judges` declaring ``SPECS``, an input format a
module of :mod:`ragmark.data.formats` declaring ``FORMAT``, an LLM provider a module of
:mod:`ragmark.llm.providers` declaring ``PROVIDER``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ExtensionPoint:
    """One way to extend ragmark: its ``group`` (the entry-point group), what the entry
    point names (``takes``: the value and its signature), the ``door`` every one comes
    through (``module:function``), and where the built-ins of its kind are."""

    group: str
    takes: str
    door: str
    built_ins: str


_COMPONENT = ("a factory: a class or function called with the component's config-table "
              "keys as keywords, or a ragmark.registry.Table dataclass (its fields are "
              "the keys, checked) whose build() returns the component")

_DOOR = "ragmark.registry:Registry.register"

POINTS: tuple[ExtensionPoint, ...] = (
    ExtensionPoint("ragmark.chunker", f"{_COMPONENT}; the chunker's chunk(document) -> "
                   "list[Chunk] (ragmark.chunking.base.Chunker)", _DOOR,
                   "ragmark.registry (_BUILTINS['chunker'])"),
    ExtensionPoint("ragmark.retriever", f"{_COMPONENT}; the retriever's index(chunks) and "
                   "retrieve(queries, k) -> (chunk indices, scores), best first "
                   "(ragmark.retrieval.base.Retriever)",
                   _DOOR,
                   "ragmark.registry (_BUILTINS['retriever'])"),
    ExtensionPoint("ragmark.reranker", f"{_COMPONENT}; the reranker's score(query, "
                   "passages) -> a score each (ragmark.retrieval.rerank.Reranker)", _DOOR,
                   "ragmark.registry (_BUILTINS['reranker'])"),
    ExtensionPoint("ragmark.generator", f"{_COMPONENT}; the generator's generate(question, "
                   "contexts) -> answer (ragmark.generation.base.Generator)", _DOOR,
                   "ragmark.registry (_BUILTINS['generator'])"),
    ExtensionPoint("ragmark.writer", "a factory returning write(written: "
                   "ragmark.report.writers.Written) -> the paths written (a results "
                   "format for --format)", _DOOR,
                   "ragmark.registry (_BUILTINS['writer'])"),
    ExtensionPoint("ragmark.metric", "a ragmark.types.MetricSpec (or a callable returning "
                   "one): kind 'answer' with compute(case: ragmark.case.Case) -> Score, or "
                   "kind 'judge' with compute(client, case, counts) -> awaitable Score or "
                   "{metric: Score}", "ragmark.metrics.names:register",
                   "each family's SPECS (ragmark.metrics.*), each judge module's SPECS "
                   "(ragmark.judges.*)"),
    ExtensionPoint("ragmark.input_format", "a ragmark.data.formats.RowFormat (or a callable "
                   "returning one): detect(field names) -> bool, row(row, where, lenient) "
                   "-> a ragmark item, export(items, model) -> a test set in its shape; "
                   "or a FolderFormat: detect(folder) -> bool, load(folder, corpus, split, "
                   "lenient) -> Dataset; or a DocumentFormat: detect(parsed JSON) -> bool, "
                   "load(path, data, corpus, lenient) -> Dataset; or an ItemsFormat: "
                   "detect(items) -> bool, rows(items, against, lenient) -> ragmark rows",
                   "ragmark.data.formats:register",
                   "the modules of ragmark.data.formats (each a FORMAT)"),
    ExtensionPoint("ragmark.llm_provider", "a ragmark.llm.providers.base.Provider: how to "
                   "call one provider's chat API (its request body, its answer, its "
                   "structured-output forms)", "ragmark.llm.providers:providers",
                   "the modules of ragmark.llm.providers (each a PROVIDER)"),
)
"""Every extension point, components first."""


def groups() -> tuple[str, ...]:
    """The entry-point groups ragmark reads."""
    return tuple(p.group for p in POINTS)
