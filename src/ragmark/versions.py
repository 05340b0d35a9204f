"""Versions of ragmark and of the libraries that shape its numbers, for results files;
and the canonical hash that names configs, datasets and indexes."""

from __future__ import annotations

import hashlib
import json
import platform
from importlib.metadata import PackageNotFoundError, version
from typing import Any

VERSION = "0.1.0"
"""ragmark's version (``ragmark.__version__``; pyproject.toml says the same)."""

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


def canonical_hash(value: Any) -> str:
    """sha256 of the canonical JSON (sorted keys, no spaces) of ``value``."""
    blob = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()
