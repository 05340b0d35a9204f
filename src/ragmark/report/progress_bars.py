"""Progress for long work: rich bars on a terminal, plain lines every few seconds
without one (CI logs), nothing with ``--quiet``."""

from __future__ import annotations

import sys
import threading
import time
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


def rate_text(rate: float) -> str:
    """``410.2/s``; under one item a second, the seconds each takes (``38.5 s each``: a
    slow model's calls read "0.0/s" otherwise)."""
    return f"{1 / rate:,.1f} s each" if 0 < rate < 1 else f"{rate:,.1f}/s"


class _RateColumn(ProgressColumn):
    """Items per second."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text("" if speed is None else rate_text(speed), style="progress.data.speed")


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


class PlainProgress:
    """Without a terminal: one plain line every ``every`` seconds while a task runs
    (stage, done/total, rate, time left), and a closing line for a task that printed
    one. Short tasks print nothing."""

    def __init__(self, write: Callable[[str], None] | None = None, every: float = 5.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.write = write or (lambda line: print(line, file=sys.stderr, flush=True))
        self.every = every
        self.clock = clock

    @contextmanager
    def task(self, description: str, total: int | None) -> Iterator[Callable[[int], None]]:
        start = self.clock()
        lock = threading.Lock()
        state = {"done": 0, "last": start, "printed": False}

        def advance(n: int) -> None:
            with lock:
                state["done"] += n
                now = self.clock()
                if now - state["last"] < self.every:
                    return
                state["last"], state["printed"] = now, True
                done = int(state["done"])
            self.write(progress_line(description, done, total, now - start))

        yield advance
        if state["printed"]:
            done = int(state["done"])
            self.write(f"{description}: done, {done:,} in {self.clock() - start:.1f} s")


def progress_line(description: str, done: int, total: int | None, elapsed: float) -> str:
    """``indexing: 2,000/5,183 (39%), 410.2/s, about 7.8 s left``."""
    rate = done / elapsed if elapsed > 0 else 0.0
    if total:
        left = (total - done) / rate if rate > 0 else None
        return (f"{description}: {done:,}/{total:,} ({done / total:.0%}), {rate_text(rate)}"
                + ("" if left is None else f", about {left:,.1f} s left"))
    return f"{description}: {done:,} done, {rate_text(rate)}, {elapsed:.1f} s"
