"""Cohen's kappa of two raters' labels, from their labels or their table."""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np
from numpy.typing import NDArray

from ragmark.types import Score


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> Score:
    """Cohen's kappa of two raters' labels of the same items.

    kappa = (p_o - p_e) / (1 - p_e), p_o the share of items on which they agree, p_e the
    agreement expected by chance from each rater's label frequencies (Cohen 1960). When
    both raters give every item one and the same label, p_e = 1 and kappa is undefined:
    missing with the reason (not NaN, not 0). Example: ``[1, 1, 0, 0]`` against
    ``[1, 0, 0, 0]``: p_o = 0.75, p_e = 0.5, kappa 0.5.
    """
    if len(a) != len(b):
        raise ValueError(f"two raters must label the same items: {len(a)} != {len(b)}")
    index = {label: i for i, label in enumerate(dict.fromkeys([*a, *b]))}
    table = np.zeros((len(index), len(index)), dtype=np.int64)
    np.add.at(table, ([index[x] for x in a], [index[x] for x in b]), 1)
    only = f" ({next(iter(index))!r})" if len(index) == 1 else ""
    return kappa_of_table(table, only)


def kappa_of_table(table: NDArray[np.int64] | Sequence[Sequence[int]], label: str = "") -> Score:
    """Cohen's kappa from a square table of counts (rows: rater A's label, columns: rater
    B's); see :func:`cohen_kappa`. Computed on integer counts, so it is exact."""
    t = np.asarray(table, dtype=np.int64)
    n = int(t.sum())
    if n == 0:
        return Score.missing("no item has both labels")
    agree = int(np.trace(t))
    chance = int(t.sum(axis=1) @ t.sum(axis=0))  # n^2 * p_e
    details = {"observed": agree / n, "expected": chance / (n * n)}
    if chance == n * n:
        return Score.missing(
            f"kappa is undefined: both raters gave all {n} items the same label{label}, "
            "so chance agreement is 1", **details)
    return Score((n * agree - chance) / (n * n - chance), details=details)
