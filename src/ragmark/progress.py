"""How long work reports its progress: a ``Progress`` hands out one counter per task.

A module of its own, imported by the runner, the sources and the commands alike (no
import circle). The CLI's implementations (rich bars, plain lines) live in
:mod:`ragmark.report.progress_bars`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Protocol

Advance = Callable[[int], None]
"""The counter a task hands out: ``advance(n)`` says n more items are done."""


class Progress(Protocol):
    """``with progress.task("indexing", total) as advance: advance(n)``."""

    def task(self, description: str, total: int | None) -> AbstractContextManager[
        Callable[[int], None]
    ]: ...


class NullProgress:
    """Progress that shows nothing."""

    @contextmanager
    def task(self, description: str, total: int | None) -> Iterator[Callable[[int], None]]:
        yield lambda n: None
