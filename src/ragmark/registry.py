"""One registry per kind of component. Built-ins register exactly like plugins do.

A third-party package adds a component through an entry point in the group
``ragmark.<kind>`` (e.g. ``ragmark.retriever``) whose value is a factory
``module:callable``, through the same door as the built-ins
(:class:`ragmark.extensions.Door`). Entry points are discovered lazily, on the first
lookup, never at import.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from importlib import import_module
from typing import Any

from ragmark.errors import UnknownComponentError
from ragmark.extensions import Door

Factory = Callable[..., Any]


class Table:
    """A component's config table as a frozen value (a dataclass whose fields are the
    table's keys, checked and defaulted there): the registry makes the component with
    :meth:`build`. A factory may be one, or anything else that returns the component."""

    def build(self) -> Any:
        raise NotImplementedError

# kind -> name -> "module:attribute" of the factory (resolved lazily)
_BUILTINS: dict[str, dict[str, str]] = {
    "chunker": {
        "whole": "ragmark.chunking.whole:WholeChunker",
        "fixed": "ragmark.chunking.fixed:FixedChunker",
        "sentence": "ragmark.chunking.sentence:SentenceChunker",
        "semantic": "ragmark.chunking.semantic:SemanticTable",
    },
    "retriever": {
        "bm25": "ragmark.retrieval.bm25:BM25Retriever",
        "dense": "ragmark.retrieval.dense:DenseTable",
        "hybrid": "ragmark.retrieval.hybrid:HybridRetriever",
    },
    "reranker": {
        "cross-encoder": "ragmark.retrieval.rerank:CrossEncoderReranker",
        "llm": "ragmark.retrieval.llm_rerank:LLMRerankerTable",
        "api": "ragmark.retrieval.api_rerank:APIReranker",
    },
    "generator": {
        "top1": "ragmark.generation.extractive:Top1Generator",
        "sentences": "ragmark.generation.extractive:SentencesGenerator",
        "llm": "ragmark.generation.llm:LLMGeneratorTable",
    },
    "writer": {
        "json": "ragmark.report.writers:json_writer",
        "md": "ragmark.report.writers:markdown_writer",
        "trec": "ragmark.report.writers:trec_writer",
        "csv": "ragmark.report.writers:csv_writer",
        "html": "ragmark.report.writers:html_writer",
    },
}


def _built_ins(kind: str) -> Callable[[], Iterable[tuple[str, str]]]:
    return lambda: _BUILTINS[kind].items()


DOORS: dict[str, Door[str | Factory]] = {
    kind: Door(f"ragmark.{kind}", _built_ins(kind), lazy=True, error=UnknownComponentError)
    for kind in _BUILTINS}
"""Each kind's door (:class:`ragmark.extensions.Door`): the built-ins above, then the
packages' ``ragmark.<kind>`` entry points, each kept as ``module:attribute`` until used."""


class Registry:
    """Name -> factory for one kind of component, read through its door."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.door = DOORS[kind]

    def register(self, name: str, factory: str | Factory) -> None:
        self.door.register(factory, name=name, source="registered")

    def names(self) -> list[str]:
        return sorted(self.door.load())

    def factory(self, name: str) -> Factory:
        target = self.door.load().get(name)
        if target is None:
            raise UnknownComponentError(
                f"unknown {self.kind} {name!r}; known: {', '.join(self.names())}"
            )
        if isinstance(target, str):
            module, _, attr = target.partition(":")
            target = getattr(import_module(module), attr)
            self.door.entries[name] = target
        return target

    def create(self, name: str, **params: Any) -> Any:
        factory = self.factory(name)
        try:
            made = factory(**params)
        except TypeError as e:
            raise UnknownComponentError(f"{self.kind} {name!r}: bad parameters ({e})") from None
        return made.build() if isinstance(made, Table) else made


def registry(kind: str) -> Registry:
    """The registry of one kind (a view of its door: what is registered on it is there
    for every later lookup)."""
    return Registry(kind)
