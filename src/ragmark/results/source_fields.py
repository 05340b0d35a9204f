"""What a question's source gave that ragmark does not read, as the results keep it:
under the question's ``recorded`` object, apart from ragmark's own fields
(:data:`ragmark.results.model.QUERY_FIELDS`), as JSON."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ragmark.types import Sample

CONVERSATION_KEYS = frozenset({"conversation_id", "turn", "history"})
"""A question's fields that ragmark reads as its place in a conversation (written as
``conversation``), not kept again under ``recorded``."""


def source_fields(sample: Sample) -> dict[str, Any]:
    """What ``sample``'s source gave that ragmark does not read (:attr:`Sample.extra`,
    but its conversation), as JSON: kept under ``recorded``. A value JSON cannot hold
    as it is (a Parquet timestamp, bytes, NaN) is kept as its text (NaN as null).

    >>> import datetime
    >>> from ragmark.types import GroundTruth
    >>> source_fields(Sample("q", "?", GroundTruth(), extra={"turn": 1, "tier": "gold",
    ...     "at": datetime.date(2026, 1, 2), "score": float("nan")}))
    {'tier': 'gold', 'at': '2026-01-02', 'score': None}
    """
    return {k: as_json(v) for k, v in sample.extra.items() if k not in CONVERSATION_KEYS}


def as_json(v: Any) -> Any:
    """``v`` as a JSON value (see :func:`source_fields`)."""
    if v is None or isinstance(v, str | bool | int):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, Mapping):
        return {str(k): as_json(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [as_json(x) for x in v]
    if callable(item := getattr(v, "item", None)):  # a NumPy number
        return as_json(item())
    iso = getattr(v, "isoformat", None)
    return iso() if callable(iso) else str(v)
