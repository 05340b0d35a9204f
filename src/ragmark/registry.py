"""One registry per kind of component. Built-ins register exactly like plugins do.

A third-party package adds a component through an entry point in the group
``ragmark.<kind>`` (e.g. ``ragmark.retriever``) whose value is a factory
``module:callable``. Entry points are discovered lazily, on the first lookup, never at
import.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from importlib.metadata import entry_points
from typing import Any

from ragmark.errors import UnknownComponentError

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


class Registry:
    """Name -> factory for one kind of component."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._targets: dict[str, str | Factory] = dict(_BUILTINS.get(kind, {}))
        self._plugins_loaded = False

    def register(self, name: str, factory: str | Factory) -> None:
        self._targets[name] = factory

    def _load_plugins(self) -> None:
        if self._plugins_loaded:
            return
        self._plugins_loaded = True
        for ep in entry_points(group=f"ragmark.{self.kind}"):
            self._targets.setdefault(ep.name, ep.value)

    def names(self) -> list[str]:
        self._load_plugins()
        return sorted(self._targets)

    def factory(self, name: str) -> Factory:
        self._load_plugins()
        target = self._targets.get(name)
        if target is None:
            raise UnknownComponentError(
                f"unknown {self.kind} {name!r}; known: {', '.join(self.names())}"
            )
        if isinstance(target, str):
            module, _, attr = target.partition(":")
            target = getattr(import_module(module), attr)
            self._targets[name] = target
        return target

    def create(self, name: str, **params: Any) -> Any:
        factory = self.factory(name)
        try:
            made = factory(**params)
        except TypeError as e:
            raise UnknownComponentError(f"{self.kind} {name!r}: bad parameters ({e})") from None
        return made.build() if isinstance(made, Table) else made


def registry(kind: str) -> Registry:
    """The registry of one kind (a fresh object; registrations made on it stay on it)."""
    return Registry(kind)
