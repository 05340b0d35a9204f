"""The executor protocol, the local executor, and the executor a run is using.

The active executor is held in a context variable (:func:`using` sets it for a block),
so the parts that can spread work (the embedding cache, the retrieval stage, matching)
find it without every signature carrying it.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Protocol, TypeVar

from ragmark.errors import ConfigError

S = TypeVar("S")
T = TypeVar("T")
R = TypeVar("R")

EXECUTORS = ("local", "ray")


class Executor(Protocol):
    """Runs ``fn(shared, item)`` for every item and returns the results in item order.

    ``shared`` is sent once (an index, a retriever) and every item (a shard of
    questions, a batch of texts) on its own; ``fn`` must be a module-level function.
    ``on_done(i, result)`` is called as each item completes (in completion order): the
    caller saves or counts what is finished, so a killed run keeps it.
    ``distributed`` says whether work leaves this process (the callers only shard work
    then). ``info()`` is what the results file records.
    """

    name: str
    distributed: bool

    @property
    def slots(self) -> int:
        """How many items can run at once (CPUs of the cluster; 1 here)."""
        ...

    def map(self, fn: Callable[[S, T], R], shared: S, items: Sequence[T], *,
            on_done: Callable[[int, R], None] | None = None) -> list[R]: ...

    def info(self) -> dict[str, Any]: ...

    def close(self) -> None: ...


class LocalExecutor:
    """Everything in this process, one item after the other."""

    name = "local"
    distributed = False
    slots = 1

    def map(self, fn: Callable[[S, T], R], shared: S, items: Sequence[T], *,
            on_done: Callable[[int, R], None] | None = None) -> list[R]:
        out = []
        for i, item in enumerate(items):
            out.append(fn(shared, item))
            if on_done is not None:
                on_done(i, out[-1])
        return out

    def info(self) -> dict[str, Any]:
        return {"name": "local", "nodes": 1, "workers": 1}

    def close(self) -> None:
        pass


_ACTIVE: contextvars.ContextVar[Executor | None] = contextvars.ContextVar(
    "ragmark_executor", default=None)
_LOCAL = LocalExecutor()


def active() -> Executor:
    """The executor of the current run (local when none was set)."""
    return _ACTIVE.get() or _LOCAL


@contextmanager
def using(executor: Executor | None) -> Iterator[Executor]:
    """Make ``executor`` the active one for the block (None: leave it as it is)."""
    if executor is None:
        yield active()
        return
    token = _ACTIVE.set(executor)
    try:
        yield executor
    finally:
        _ACTIVE.reset(token)


def create(name: str = "local", address: str | None = None) -> Executor:
    """The executor called ``name``; ``address`` is the Ray cluster's (``auto``,
    ``HOST:PORT``, ``ray://HOST:PORT``; default: a local Ray instance)."""
    if name == "local":
        if address is not None:
            raise ConfigError("--address is for --executor ray; the local executor runs "
                              "in this process")
        return LocalExecutor()
    if name == "ray":
        from ragmark.executors.ray_executor import RayExecutor

        return RayExecutor(address)
    raise ConfigError(f"unknown executor {name!r}; choices: {', '.join(EXECUTORS)}")
