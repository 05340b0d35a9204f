"""An executor for tests that behaves like a cluster without one."""

from __future__ import annotations

import pickle


class PicklingExecutor:
    """Spreads work like a cluster: shared values, items and results cross a pickle
    boundary, and items complete out of order."""

    name = "pickling"
    distributed = True
    slots = 2

    def __init__(self) -> None:
        self.items: list[object] = []

    def map(self, fn, shared, items, *, on_done=None):
        self.items = list(items)
        out = [None] * len(items)
        for i in reversed(range(len(items))):
            got = pickle.loads(pickle.dumps(fn(pickle.loads(pickle.dumps(shared)),
                                               pickle.loads(pickle.dumps(items[i])))))
            out[i] = got
            if on_done is not None:
                on_done(i, got)
        return out

    def info(self):
        return {"name": self.name}

    def close(self):
        pass
