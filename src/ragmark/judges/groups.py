"""A numbered judge call that does not fit the model's window whole is split into groups
of its items before any text is cut: the passages of context precision or relevance,
the statements of citation correctness, each group its own call with its own exact
count, the verdicts numbered back in order. Only when even one item a call needs its
texts cut (or the numbered list is not what makes the prompt long) is the call cut as
before (:mod:`ragmark.judges.fit`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ragmark.judges.fit import fit

Bounds = list[tuple[int, int]]


def split(n: int, groups: int) -> Bounds:
    """``n`` items in ``groups`` contiguous groups of near-equal size, larger first.

    >>> split(5, 2)
    [(0, 3), (3, 5)]
    """
    size, extra = divmod(n, groups)
    out, start = [], 0
    for g in range(groups):
        stop = start + size + (1 if g < extra else 0)
        out.append((start, stop))
        start = stop
    return out


def part(prompt: Any, item: Any, start: int, stop: int) -> Any:
    """``item`` with only the numbered items ``start:stop``."""
    field = prompt.numbered.input_list
    return item.model_copy(update={field: list(getattr(item, field))[start:stop]})


def groups_that_fit(prompt: Any, item: Any, cap: int, window: int | None,
                    measure: Callable[[Any], int] | None) -> Bounds | None:
    """The fewest groups of ``item``'s numbered list whose calls each fit ``window``
    whole; None when the prompt numbers nothing, has one item, or no grouping avoids a
    cut."""
    if prompt.numbered is None or window is None:
        return None
    n = len(getattr(item, prompt.numbered.input_list))
    for groups in range(2, n + 1):
        bounds = split(n, groups)
        fitted = [fit(prompt, part(prompt, item, a, b), cap, window, measure)
                  for a, b in bounds]
        if all(not f.cut and f.problem is None for f in fitted):
            return bounds
    return None


def merged(prompt: Any, bounds: Bounds, outs: Sequence[Any]) -> Any:
    """The groups' answers as one answer to the whole call: each verdict's number moved
    by its group's start, in order."""
    nb = prompt.numbered
    entries = []
    for (start, _), out in zip(bounds, outs, strict=True):
        for entry in getattr(out, nb.output_list):
            entries.append(entry.model_copy(update={nb.number: getattr(entry, nb.number)
                                                    + start}))
    return outs[0].model_copy(update={nb.output_list: entries})
