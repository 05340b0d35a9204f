"""Where ragmark keeps its caches: ``RAGMARK_HOME``, or ``~/.cache/ragmark``.

Every cache (embeddings, LLM calls, indexes) lives under this folder, so a second run
of a configuration embeds nothing and calls nothing twice. Tests point ``RAGMARK_HOME``
at a temporary folder. Nothing is created at import: the folders appear when a cache
first asks for its path.
"""

from __future__ import annotations

import os
from pathlib import Path

from ragmark.errors import ConfigError

HOME_ENV = "RAGMARK_HOME"


def ragmark_home() -> Path:
    """The cache root: ``$RAGMARK_HOME`` when set (and non-empty), else
    ``~/.cache/ragmark``; created when missing."""
    env = os.environ.get(HOME_ENV, "").strip()
    home = Path(env).expanduser() if env else Path.home() / ".cache" / "ragmark"
    try:
        home.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ConfigError(
            f"cannot create the ragmark cache folder {home} ({e.strerror or e}); "
            f"set {HOME_ENV} to a writable folder"
        ) from None
    return home


def cache_path(*parts: str) -> Path:
    """``ragmark_home() / part / ...``, with its parent folders created.

    The last part is usually a file name (``cache_path("embeddings", "vectors.sqlite")``).
    Parts must be relative names that stay inside the home (no ``..``, no absolute path).
    """
    if not parts:
        raise ValueError("cache_path needs at least one part")
    for p in parts:
        if not p or Path(p).is_absolute() or ".." in Path(p).parts:
            raise ValueError(f"cache path parts must be relative names inside the home: {p!r}")
    path = ragmark_home().joinpath(*parts)
    path.parent.mkdir(parents=True, exist_ok=True)
    return path
