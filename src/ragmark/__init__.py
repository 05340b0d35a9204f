"""ragmark: exact, fast, offline-first evaluation of retrieval-augmented generation."""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"
__all__ = ["__version__", "evaluate"]


def __getattr__(name: str) -> Any:
    # Lazy: importing ragmark stays cheap and prints nothing.
    if name == "evaluate":
        from ragmark.metrics.evaluate import evaluate

        return evaluate
    raise AttributeError(f"module 'ragmark' has no attribute {name!r}")
