"""The judges' own noise in a difference of two means (issue 63, item 5): where a run
asked its judges several times (``--judge-repeats``) it knows each judge metric's
within-question standard deviation; a difference of two runs' means over ``n``
questions then carries, from the judges alone, a standard error of
``sqrt(sum over the runs of within_sd^2 / (repeats * n))``. A drop within 1.96 of those
(the 95% band) is not called a regression, nor a compare's difference significant."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any


def noise_band(noises: Sequence[Mapping[str, Mapping[str, Any]]], metric: str, n: int
               ) -> float | None:
    """Half the width of the 95% band the difference of two means over ``n`` questions
    has from the judges' noise, by each run's measured noise (metric -> ``within_sd``,
    ``repeats``); None where no run measured it for ``metric``.

    >>> round(noise_band([{}, {"m": {"within_sd": 0.2, "repeats": 2}}], "m", 40), 4)
    0.0438
    """
    parts = [(r["within_sd"], r["repeats"]) for noise in noises
             if (r := noise.get(metric)) and r.get("within_sd") is not None]
    if not parts or n < 1:
        return None
    return 1.96 * math.sqrt(sum(sd ** 2 / (reps * n) for sd, reps in parts))
