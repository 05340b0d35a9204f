"""A queue's labels as the readers of people's labels take them: ``--human-labels
store:QUEUE`` (one label per item for the PPI correction) and ``judge-eval store:QUEUE``
(one item per person and label)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragmark.analysis.human_labels import HumanLabel, HumanLabels
from ragmark.analysis.review import join_contexts
from ragmark.annotate.store import get_queue, label_rows, labels_path
from ragmark.errors import DataError


def human_labels(queue: str, history: str | Path | None = None,
                 store: str | Path | None = None) -> HumanLabels:
    """The queue's labels (the store ``store``, else beside the run history), one per item: the
    mean of its people's labels (1 yes, 0 no), so two who disagree give 0.5; a
    preference's A's score (1 A, 0 B, 0.5 a tie), likewise averaged."""
    store = labels_path(history, store)
    get_queue(store, queue)  # a ConfigError naming the queues there when it is not one
    by_id: dict[str, list[dict[str, Any]]] = {}
    for r in label_rows(store, queue):
        by_id.setdefault(r["id"], []).append(r)
    if not by_id:
        raise DataError(f"queue {queue!r} has no label yet: label with `ragmark annotate`",
                        file=str(store))
    return HumanLabels(f"{store} (queue {queue})", tuple(
        HumanLabel(i, g[0]["metric"], g[0]["answer"], join_contexts(g[0]["contexts"]),
                   sum(float(r["human"]) for r in g) / len(g), g[0].get("answer_b"))
        for i, g in by_id.items()))
