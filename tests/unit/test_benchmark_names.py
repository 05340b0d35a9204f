"""The benchmark scripts name only what ragmark has: every ``from ragmark... import
NAME`` in ``benchmarks/`` resolves (a renamed module or a removed type breaks a script
no timed test runs; two did after issue 49)."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def test_every_ragmark_name_a_benchmark_imports_exists():
    missing = []
    for script in sorted(BENCHMARKS.glob("*.py")):
        for node in ast.walk(ast.parse(script.read_text())):
            if not (isinstance(node, ast.ImportFrom) and node.module
                    and node.module.split(".")[0] == "ragmark"):
                continue
            module = importlib.import_module(node.module)
            for alias in node.names:
                if hasattr(module, alias.name):
                    continue
                try:
                    importlib.import_module(f"{node.module}.{alias.name}")
                except ImportError:
                    missing.append(f"{script.name}: {node.module}.{alias.name}")
    assert missing == []
