"""The Embedder protocol: texts in, L2-normalised float32 vectors out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from ragmark.progress import Advance

"""Called with the number of texts just finished (drives a progress bar)."""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors.

    ``model_id`` names the weights and every setting that changes a vector (two
    embedders with the same ``model_id`` must give the same vector for a text): caches
    are keyed by it. ``encode`` returns an ``(len(texts), dim)`` float32 array whose rows
    have unit L2 norm, in the order of ``texts``, and calls ``progress`` with the number
    of texts finished as it goes.
    """

    @property
    def model_id(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def encode(
        self, texts: Sequence[str], progress: Advance | None = None
    ) -> NDArray[np.float32]: ...
