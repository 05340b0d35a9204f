"""A private event loop in a daemon thread, for sync code that makes many async calls.

A pipeline component called once per question (the LLM reranker) cannot start a new
event loop per call without losing the client's connection pool each time; it submits
its coroutines to one loop that lives as long as the component instead.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class LoopThread:
    """Runs coroutines to completion on one background event loop."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def _start(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="ragmark-llm",
                                          daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    @property
    def started(self) -> bool:
        return self._loop is not None

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """The coroutine's result (its exception is raised here)."""
        return self.submit(coro).result()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Start the coroutine on the loop; its future, to wait on from this thread."""
        return asyncio.run_coroutine_threadsafe(coro, self._start())

    def close(self) -> None:
        """Stop the loop and its thread; a later ``run`` starts a new one."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None:
            return
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        loop.close()
