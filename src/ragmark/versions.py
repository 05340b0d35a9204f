"""Versions of ragmark and of the libraries that shape its numbers, for results files."""

from __future__ import annotations

import platform
from importlib.metadata import PackageNotFoundError, version

_PACKAGES = ("ragmark", "numpy", "scipy", "bm25s", "PyStemmer", "sentence-transformers",
             "torch", "faiss-cpu")


def versions() -> dict[str, str]:
    """Python and the installed versions of the packages that matter (absent ones left
    out)."""
    out = {"python": platform.python_version()}
    for name in _PACKAGES:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            continue
    return out
