"""The input formats ragmark reads, one module of this package a format, each declaring
``FORMAT``: a :class:`FolderFormat` (a dataset that is a folder: BEIR and TREC RAG, Open
RAG Benchmark) says how to tell such a folder and read it; a :class:`RowFormat` (another
tool's evaluation set or logged outputs, one question a row: RAGAS, DeepEval,
LlamaIndex) says how to tell the format from its rows' fields, how to read a row as a
ragmark item, and how to write a test set in it; a :class:`DocumentFormat` (a JSON
document that is a whole dataset: LlamaIndex's EmbeddingQAFinetuneDataset) says how to
tell and read it; an :class:`ItemsFormat` (items of a JSON or JSON Lines file in a shape
of their own: conversations, TREC RAG's answer files) says how to tell its items and
turn them into ragmark's rows. The names ``--input-format`` and ``testset --format`` take are
declared here, once, by the formats themselves.

Built-in formats and a package's formats come through one door, :func:`register`: the
built-ins are found by a scan of this package (a module dropped in is a new format), a
package's through the ``ragmark.input_format`` entry-point group (each a format or a
callable returning one). Loaded on first use, never at import.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragmark.data.files import Where, base_suffix
from ragmark.data.leniency import Leniency
from ragmark.errors import DataError
from ragmark.extensions import Door
from ragmark.types import Dataset

NATIVE = "ragmark"
"""ragmark's own format (its evaluation sets and outputs logs)."""


@dataclass(frozen=True)
class RowFormat:
    """An evaluation set or logged outputs in another tool's shape, one question a row.

    ``name``: what ``--input-format`` and ``testset --format`` take; ``title``: how
    messages name it; ``question``: where its rows hold the question (for the error of a
    row without one); ``fields``: its telling fields, for the error of a file in no
    format; ``detect(keys)``: whether rows with these field names are in it (the first
    format, by ``order``, that says yes reads them; None: those that have ``needs``);
    ``row(row, where, lenient)``: a row as a ragmark item (``question``, ``id``,
    ``expected_answer``, ``ground_truth_contexts``, and a logged ``answer`` with its
    ``contexts``), any bad field an error naming ``where`` and the field;
    ``export(items, model)``: a ragmark test set in its shape, written to a file ending
    in ``suffix`` (None: it is read only, and ``testset`` does not offer it). What a
    format claims is declared: the fields its rows must have (``needs``) and the files
    it reads (``reads``, suffixes); detection asks both, then ``detect``."""

    name: str
    title: str
    question: str
    fields: str
    detect: Callable[[set[str]], bool] | None
    row: Callable[[dict[str, Any], Where, Leniency], dict[str, Any]]
    export: Callable[[list[dict[str, Any]], str], Any] | None = None
    suffix: str = ".json"
    order: int = 50
    reads: tuple[str, ...] = ()
    """The file suffixes (``.csv``) whose rows it may claim when told from their fields;
    empty: any file's."""
    needs: frozenset[str] = frozenset()
    """The fields a row must have for the format to claim it."""

    def claims(self, keys: set[str], suffix: str | None) -> bool:
        """Whether rows with field names ``keys``, in a file ending in ``suffix`` (None:
        not a file), are in this format: its suffixes, its fields, then ``detect``."""
        return ((not self.reads or suffix is None or suffix in self.reads)
                and self.needs <= keys and (self.detect is None or self.detect(keys)))


@dataclass(frozen=True)
class FolderFormat:
    """A dataset that is a folder: ``name`` (the dataset's ``format``), what its folder
    holds (``expects``, for the error of a folder in no format), ``detect(folder)``:
    whether the folder is one (the first format, by ``order``, that says yes reads it),
    and ``load(folder, corpus, split, lenient)``: the dataset, any bad line an error
    naming the file, the line and the field."""

    name: str
    expects: str
    detect: Callable[[Path], bool]
    load: Callable[[Path, str | Path | None, str, Leniency], Dataset]
    order: int = 50


@dataclass(frozen=True)
class DocumentFormat:
    """A dataset that is one JSON document: ``name``, what it holds (``expects``),
    ``detect(data)``: whether the parsed document is one, and ``load(path, data,
    corpus, lenient)``: the dataset."""

    name: str
    expects: str
    detect: Callable[[Any], bool]
    load: Callable[[Path, Any, str | Path | None, Leniency], Dataset]
    order: int = 50


@dataclass(frozen=True)
class ItemsFormat:
    """Items of a JSON or JSON Lines file in a shape of their own, each item read as one
    or more of ragmark's rows: ``name``, what its items hold (``expects``),
    ``detect(items)``: whether the items are in it (the first format, by ``order``, that
    says yes reads them), ``rows(items, against, lenient)``: ragmark's rows, each with
    its place (``against``: the dataset logged outputs are scored on, for a format whose
    items cite its corpus; None when reading a set), any bad item an error naming its
    place and field; ``sets``: whether ``--dataset`` takes it too (its rows then a
    context set whose truth is optional), else only ``--outputs``."""

    name: str
    expects: str
    detect: Callable[[list[tuple[Where, Any]]], bool]
    rows: Callable[[list[tuple[Where, Any]], Dataset | None, Leniency],
                   list[tuple[Where, dict[str, Any]]]]
    sets: bool = False
    order: int = 50


Format = RowFormat | FolderFormat | DocumentFormat | ItemsFormat
"""Any input format."""

def _built_ins() -> list[tuple[str, Format]]:
    """The formats this package's modules declare (``FORMAT``), by module name."""
    import pkgutil

    found = []
    for m in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        declared = getattr(importlib.import_module(f"{__name__}.{m.name}"), "FORMAT", None)
        if isinstance(declared, Format):
            found.append((declared.name, declared))
    return found


def _admit(given: Any, plugin: bool) -> Format:
    fmt = given if isinstance(given, Format) or not callable(given) else given()
    if not isinstance(fmt, Format):
        raise DataError(f"an input format must be a RowFormat, FolderFormat, DocumentFormat "
                        f"or ItemsFormat, got {fmt!r}")
    if fmt.name == NATIVE:
        raise DataError(f"input format {fmt.name!r} is ragmark's own")
    if isinstance(fmt, RowFormat) and fmt.detect is None and not fmt.needs:
        raise DataError(f"input format {fmt.name!r} claims nothing: give it the fields its "
                        "rows need (needs) or a detect function")
    return fmt


FORMATS: Door[Format] = Door("ragmark.input_format", _built_ins, admit=_admit,
                             name_of=lambda f: f.name, error=DataError)
"""The input formats' door (:class:`ragmark.extensions.Door`): this package's modules
and the packages' ``ragmark.input_format`` entry points."""


def register(fmt: Format) -> None:
    """Add an input format through :data:`FORMATS`, as a package's (a name is there
    once; the same one again is a no-op)."""
    FORMATS.register(fmt, source="registered")


def formats() -> dict[str, RowFormat]:
    """Every row format by name, in the order they are tried: the built-ins (this
    package's modules) and a package's (the ``ragmark.input_format`` entry points)."""
    return {n: f for n, f in _all().items() if isinstance(f, RowFormat)}


def folders() -> dict[str, FolderFormat]:
    """Every folder format by name, in the order they are tried."""
    return {n: f for n, f in _all().items() if isinstance(f, FolderFormat)}


def documents() -> dict[str, DocumentFormat]:
    """Every format of a JSON document that is a whole dataset, in the order tried."""
    return {n: f for n, f in _all().items() if isinstance(f, DocumentFormat)}


def shapes() -> dict[str, ItemsFormat]:
    """Every format of items in a shape of their own, in the order tried."""
    return {n: f for n, f in _all().items() if isinstance(f, ItemsFormat)}


def shape_of(items: list[tuple[Where, Any]], *, sets: bool = False) -> ItemsFormat | None:
    """The shape the items are in (``sets``: of those ``--dataset`` takes); None:
    ragmark's own rows."""
    return next((f for f in shapes().values() if (f.sets or not sets) and f.detect(items)),
                None)


def _all() -> dict[str, Format]:
    return dict(sorted(FORMATS.load().items(), key=lambda kv: kv[1].order))


def names() -> tuple[str, ...]:
    """The format names ``--input-format`` takes: ragmark's own, then the others."""
    return (NATIVE, *formats())


NATIVE_FIELDS = frozenset({"answer", "contexts", "ground_truth_contexts",
                           "expected_keywords", "must_be_grounded_in", "expected_tool_calls",
                           "messages", "tool_calls", "hops"})
"""Fields only ragmark's own rows have: rows with a ``question`` and one of them are
ragmark's, and a format that claims them too makes the file ambiguous."""


def detect(keys: set[str], path: str | Path | None = None) -> RowFormat | None:
    """The format whose rows have these field names (in a file of a suffix it reads);
    None: ragmark's own. Rows two formats claim, or that a format claims though they are
    ragmark's own, are refused, naming the claimants (``--input-format`` says which)."""
    suffix = None if path is None else base_suffix(Path(path))
    claims = [f for f in formats().values() if f.claims(keys, suffix)]
    # a package's format that claims ragmark's own rows would take them over silently
    # (the built-ins tell theirs apart by design: old RAGAS rows by ground_truth)
    added = FORMATS.plugins()
    own = "question" in keys and bool(keys & NATIVE_FIELDS) and any(
        f.name in added for f in claims)
    if len(claims) + own > 1:
        named = [*(["ragmark's own"] if own else []), *(f.name for f in claims)]
        raise DataError(f"the rows' fields fit several input formats ({', '.join(named)}): "
                        "say which with --input-format "
                        f"({', '.join(n for n in names())})",
                        file=None if path is None else str(path))
    return claims[0] if claims else None


def which(name: str) -> RowFormat:
    """The format of that name (not ragmark's own, which needs no reading)."""
    found = formats().get(name)
    if found is None:
        raise DataError(f"unknown input format {name!r}; known: {', '.join(names())}")
    return found


def telling_fields() -> str:
    """Each format's telling fields, for the error of a file in none of them."""
    return "; ".join(f"{f.title}: {f.fields}" for f in formats().values())


def export(items: list[dict[str, Any]], name: str, model: str = "") -> Any:
    """A ragmark test set (``question``, ``expected_answer``, ``ground_truth_contexts``,
    ``type``, ``difficulty``, ``source_ids``) in format ``name``'s shape; ``model``: the
    LLM that wrote it."""
    if name == NATIVE:
        return items
    fmt = which(name)
    if fmt.export is None:
        raise DataError(f"input format {name!r} is read only: a test set cannot be written "
                        f"in it (those that can: {', '.join(writable())})")
    return fmt.export(items, model)


def writable() -> tuple[str, ...]:
    """The formats a test set can be written in: ragmark's own, then those with an
    ``export``."""
    return (NATIVE, *(n for n, f in formats().items() if f.export is not None))


def suffix(name: str) -> str:
    """The file a test set in format ``name`` is written as (``.json`` or ``.jsonl``)."""
    return ".json" if name == NATIVE else which(name).suffix
