"""The import graph of ``src/ragmark``: every import of a ragmark module by another
(at the top, inside a function, or for type checking only), each module's layer, and what
the issue 21 rules count: import circles, imports that run from a lower layer up to a
higher one, and package pairs that import each other.

A module's layer is that of the longest prefix of its dotted name in :data:`LAYERS`
(declared once, here); 0 is the bottom. Run ``python tests/support/import_graph.py`` to
print the counts and every import that runs up.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"

LAYERS: dict[str, int] = {
    # 0: the core every part uses: types, errors, text, statistics, progress, home
    "ragmark.errors": 0, "ragmark.types": 0, "ragmark.text": 0, "ragmark.home": 0,
    "ragmark.versions": 0, "ragmark.aio": 0, "ragmark.progress": 0, "ragmark.stats": 0,
    "ragmark.registry": 0, "ragmark.languages": 0, "ragmark.libraries": 0,
    "ragmark.retry": 0, "ragmark.sqlite": 0, "ragmark.case": 0, "ragmark.hosts": 0,
    "ragmark.extensions": 0, "ragmark.trajectory": 0,
    # 1: matching and metrics, models and their clients, data loading
    "ragmark.matching": 1, "ragmark.metrics": 1, "ragmark.llm": 1, "ragmark.judges": 1,
    "ragmark.embeddings": 1, "ragmark.chunking": 1, "ragmark.data": 1,
    # 2: the pipeline parts and their configuration
    "ragmark.config": 2, "ragmark.config_tables": 2, "ragmark.config_judges": 2,
    "ragmark.retrieval": 2,
    "ragmark.generation": 2,
    "ragmark.pipelines": 2,
    # where the work runs (local, Ray), below the parts that spread their work on it;
    # the local web server the receiver and the pages share
    "ragmark.executors": 1, "ragmark.web": 1,
    # 3: running: a run, its scoring and judging, compare, pooling, label, testset, and
    # the results model (with its envelope) they make
    "ragmark.running": 3, "ragmark.passage_labels": 3, "ragmark.testset": 3, "ragmark.results": 3,
    # 3: simulated users played against a system (its conversations, journal, transcripts)
    "ragmark.simulate": 3,
    # 4: results and their analysis
    "ragmark.report": 4, "ragmark.analysis": 4, "ragmark.history": 4,
    "ragmark.judge_eval": 4,
    # people's labels: the annotation store, its queues and page (on the web server)
    "ragmark.annotate": 4,
    # 5: the plan of a run or compare, built once, executed or estimated
    "ragmark.plan": 5,
    # 5: following a system in production (windows over the history, the receiver)
    "ragmark.monitor": 5,
    # 5: attacks through the corpus (planted documents, their outcomes and rates)
    "ragmark.probe": 5,
    # 6: the interfaces: command line, Python API, pytest
    "ragmark": 6, "ragmark.__main__": 6, "ragmark.cli": 6, "ragmark.api": 6,
    "ragmark.pytest_plugin": 6, "ragmark.testing": 6, "ragmark.demo": 6,
}


ORDER_1 = ("ragmark.web", "ragmark.llm", "ragmark.executors", "ragmark.embeddings",
           "ragmark.chunking", "ragmark.judges", "ragmark.metrics", "ragmark.matching",
           "ragmark.data")
"""The order inside layer 1 (issue 49, item 6), lowest first: a package imports only
those before it. The model clients (llm), where work runs, the embeddings and chunking
on them, the judges on the clients, the metric catalogue over the judges, matching over
the metrics' grades, the readers over all of them."""


def modules() -> dict[str, Path]:
    """Dotted module name -> file, for every module of ``src/ragmark``."""
    out = {}
    for path in sorted((SRC / "ragmark").rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def rank_in_layer_1(module: str) -> int | None:
    """The place of a layer-1 module's package in :data:`ORDER_1` (None outside)."""
    for i, p in enumerate(ORDER_1):
        if module == p or module.startswith(p + "."):
            return i
    return None


def layer(module: str) -> int:
    parts = module.split(".")
    for i in range(len(parts), 0, -1):
        got = LAYERS.get(".".join(parts[:i]))
        if got is not None:
            return got
    raise KeyError(f"{module} has no layer: declare it in LAYERS")


def _targets(module: str, path: Path, known: set[str]) -> Iterator[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            # a submodule imported by name (`from . import b`) is that module; any
            # other name (`from ragmark.llm import open_client`) is the module `base`
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base
                     for a in node.names]
        for name in names:
            while name and name not in known:  # `from ragmark.x import f`: the module x
                name = name.rpartition(".")[0]
            if name and name.startswith("ragmark") and name != module:
                yield name


def edges() -> set[tuple[str, str]]:
    """(importer, imported) for every import between two modules of ``src/ragmark``;
    an import of a package's name (``from ragmark.llm import X``) counts as one of the
    package's ``__init__``."""
    mods = modules()
    known = set(mods)
    return {(m, t) for m, p in mods.items() for t in _targets(m, p, known)}


def circles(graph: set[tuple[str, str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan)."""
    nexts: dict[str, list[str]] = {}
    for a, b in graph:
        nexts.setdefault(a, []).append(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    sys.setrecursionlimit(10_000)

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in nexts.get(v, []):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(nexts):
        if v not in index:
            visit(v)
    return out


def _unit(module: str) -> str:
    """The package or root module a module belongs to (``ragmark.llm.client`` -> ``llm``)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def upward(graph: set[tuple[str, str]]) -> list[tuple[str, str]]:
    """The imports from a lower layer to a higher one."""
    return sorted((a, b) for a, b in graph if layer(a) < layer(b))


def mutual_packages(graph: set[tuple[str, str]]) -> list[tuple[str, str]]:
    """Pairs of packages (or root modules) that import each other."""
    pairs = {(_unit(a), _unit(b)) for a, b in graph if _unit(a) != _unit(b)
             and "ragmark" not in (_unit(a), _unit(b))}
    return sorted((a, b) for a, b in pairs if a < b and (b, a) in pairs)


if __name__ == "__main__":
    g = edges()
    print(f"{len(modules())} modules, {len(g)} imports")
    print(f"circles: {len(circles(g))}")
    for c in circles(g):
        print("  " + " <-> ".join(c))
    up = upward(g)
    print(f"imports that run up a layer: {len(up)}")
    for a, b in up:
        print(f"  {a} ({layer(a)}) -> {b} ({layer(b)})")
    print(f"package pairs importing each other: {mutual_packages(g)}")
