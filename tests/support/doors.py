"""A test's own copy of an extension point's registry (a ragmark.extensions.Door), so
what it registers is gone after it: the door loaded, then its entries copied (those
``keep`` accepts), and with ``reload`` read afresh on next use (built-ins and packages
again: the packages' entries are dropped from the copy, to be read from the entry points
the test sets). Call it before changing what the door finds (a
package's ``__path__``, the entry points), so the door itself never sees the change."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def isolated(monkeypatch: Any, door: Any, keep: Callable[[str, Any], bool] | None = None,
             reload: bool = False) -> Any:
    door.load()
    kept = [n for n, v in door.entries.items() if (keep is None or keep(n, v))
            and not (reload and n in door.packages)]  # a package's: read again
    monkeypatch.setattr(door, "entries", {n: door.entries[n] for n in kept})
    monkeypatch.setattr(door, "sources", {n: door.sources[n] for n in kept})
    monkeypatch.setattr(door, "_given", {n: door._given[n] for n in kept})
    monkeypatch.setattr(door, "packages", {n: door.packages[n] for n in kept
                                           if n in door.packages})
    monkeypatch.setattr(door, "_loaded", not reload)
    return door
