"""Running ragmark's async work (LLM calls, external pipelines) from synchronous code.

The sync entry points (the runner, the CLI, the Python API) call :func:`run_sync`: in a
thread without an event loop it is ``asyncio.run``; inside a running loop (a notebook,
an async web app) ``asyncio.run`` would refuse, so the coroutine runs to completion on a
loop of its own in a helper thread, and the caller's loop is left alone.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """The coroutine's result, from synchronous code, with or without a running loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(coro)
        except BaseException as e:  # re-raised in the caller's thread
            box["error"] = e

    # the caller's context variables go along (the data's language a judge is told)
    t = threading.Thread(target=contextvars.copy_context().run, args=(target,),
                         name="ragmark-async", daemon=True)
    t.start()
    t.join()
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]
