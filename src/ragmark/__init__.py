"""ragmark: exact, fast, offline-first evaluation of retrieval-augmented generation."""

from __future__ import annotations

from typing import Any

from ragmark.versions import VERSION as __version__

__all__ = ["__version__", "compare_pipelines", "evaluate", "evaluate_pipeline"]


def __getattr__(name: str) -> Any:
    # Lazy: importing ragmark stays cheap and prints nothing.
    if name == "evaluate":
        from ragmark.metrics.evaluate import evaluate

        return evaluate
    if name in ("evaluate_pipeline", "compare_pipelines"):
        from ragmark import api

        return getattr(api, name)
    raise AttributeError(f"module 'ragmark' has no attribute {name!r}")
