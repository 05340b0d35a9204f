"""The demo that ships with ragmark: a five-document corpus about RAG (``corpus/``) and a
keyword evaluation set (``questions.json``), written for ragmark."""

from __future__ import annotations

import atexit
from contextlib import ExitStack
from functools import cache
from importlib.resources import as_file, files
from pathlib import Path

__all__ = ["demo_path"]


@cache
def demo_path() -> Path:
    """The folder holding ``corpus/`` and ``questions.json``, as a real file-system path.

    An installed package gives its own folder; a package imported from a zip file is
    extracted to a temporary folder that is removed at exit.
    """
    root = files(__name__)
    if isinstance(root, Path):
        return root
    stack = ExitStack()
    atexit.register(stack.close)
    return stack.enter_context(as_file(root))
