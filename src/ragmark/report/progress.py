"""Progress bars (rich) for long work; a quiet variant shows nothing."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    Task,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text


class _RateColumn(ProgressColumn):
    """Items per second."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text("" if speed is None else f"{speed:,.1f}/s", style="progress.data.speed")


class RichProgress:
    """One bar per task, on stderr, removed when the task ends; transient so reports stay
    clean. Shows items done, rate and time left."""

    def __init__(self, console: Console) -> None:
        self.console = console

    @contextmanager
    def task(self, description: str, total: int | None) -> Iterator[Callable[[int], None]]:
        columns = [SpinnerColumn(), TextColumn("{task.description}")]
        if total is not None:
            columns += [BarColumn(), MofNCompleteColumn(), TaskProgressColumn(),
                        _RateColumn(),
                        TimeElapsedColumn(), TimeRemainingColumn()]
        else:
            columns += [TimeElapsedColumn()]
        with Progress(*columns, console=self.console, transient=True) as p:
            tid = p.add_task(description, total=total)
            yield lambda n: p.advance(tid, n)
