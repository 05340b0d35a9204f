"""Work a judge of several calls does once and shares: one task per client, event loop
and key, so the metrics asked of one question (the claim metrics, the four nugget
scores) and the answers that share a question's nuggets await the same calls."""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Awaitable, Callable, Hashable
from typing import Any

_MEMO: weakref.WeakKeyDictionary[Any, dict[Any, Any]] = weakref.WeakKeyDictionary()


def once_per_client(client: Any, key: tuple[Hashable, ...],
                    make: Callable[[], Awaitable[Any]]) -> Awaitable[Any]:
    """The task of ``key`` for ``client`` in the running event loop, started by
    ``make()`` the first time it is asked for."""
    loop = asyncio.get_running_loop()
    memo = _MEMO.setdefault(client, {})
    task = memo.get((loop, *key))
    if task is None:
        task = memo[(loop, *key)] = loop.create_task(make())  # type: ignore[arg-type]
    return task  # type: ignore[no-any-return]
