"""The labelled items ``ragmark judge-eval`` measures a judge on.

Two inputs: a JSONL file of ``{"id"?, "question"?, "context" or "contexts", "answer",
"expected_answer"?, "label"}`` objects (a team's own labels, or a public set of
support/hallucination labels), or a review CSV that people filled in (``ragmark review
export``). A label is read through the label map: by default supported, yes, true, 1,
faithful, pass, correct, consistent, grounded (any case) mean *supported*, and
unsupported, no, false, 0, hallucinated, hallucination, fail, incorrect, inconsistent,
ungrounded, unfaithful mean *unsupported*; ``--label-map "1=unsupported,0=supported"``
changes any of them. In a review CSV the ``human`` cell is yes/no or a score (at least
0.5 is supported).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ragmark.analysis.review import cell_error, parse_value, review_rows
from ragmark.annotate.store import get_queue, label_rows, labels_path, queue_of
from ragmark.data.files import iter_jsonl
from ragmark.errors import ConfigError, DataError

SUPPORTED = ("supported", "yes", "true", "1", "faithful", "pass", "correct", "consistent",
             "grounded")
UNSUPPORTED = ("unsupported", "no", "false", "0", "hallucinated", "hallucination", "fail",
               "incorrect", "inconsistent", "ungrounded", "unfaithful")


@dataclass(frozen=True, slots=True)
class Item:
    """One labelled answer: ``unsupported`` is the people's label."""

    id: str
    question: str
    contexts: tuple[str, ...]
    answer: str
    expected_answer: str | None
    unsupported: bool
    annotator: str = ""
    """Who gave the label (``ragmark annotate``'s export names them), if known."""
    note: str = ""
    """What the person noted with the label (the rules of an aligned judge)."""


def label_map(text: str | None) -> dict[str, bool]:
    """Label -> unsupported?, the defaults with ``LABEL=supported|unsupported`` pairs
    of ``text`` over them."""
    out = {k: False for k in SUPPORTED} | {k: True for k in UNSUPPORTED}
    for part in (text or "").split(","):
        if not part.strip():
            continue
        key, sep, value = part.partition("=")
        value = value.strip().lower()
        if not sep or not key.strip() or value not in ("supported", "unsupported"):
            raise ConfigError(f"--label-map: expected LABEL=supported or LABEL=unsupported "
                              f"pairs separated by commas, got {part.strip()!r}")
        out[key.strip().lower()] = value == "unsupported"
    return out


def _label(value: object, labels: dict[str, bool]) -> bool:
    if isinstance(value, bool):
        key = "true" if value else "false"
    elif isinstance(value, int | float):
        key = f"{value:g}"
    elif isinstance(value, str):
        key = value.strip().lower()
    else:
        raise ValueError(f"expected a label (text, number or true/false), got {value!r}")
    if key not in labels:
        raise ValueError(f"label {key!r} is neither supported nor unsupported in the label "
                         "map; add it with --label-map")
    return labels[key]


def _text(obj: dict[str, object], key: str, need: bool) -> str | None:
    value = obj.get(key)
    if value is None and not need:
        return None
    if not isinstance(value, str) or (need and not value.strip()):
        raise ValueError(f"field {key!r}: expected a non-empty string")
    return value


def read_jsonl(path: str | Path, labels: dict[str, bool]) -> list[Item]:
    """The items of a JSONL file; DataError naming the line and field of a bad one."""
    items = []
    for where, obj in iter_jsonl(Path(path)):
        line_no = where.line or 0
        try:
            if not isinstance(obj, dict):
                raise ValueError("expected a JSON object")
            ctx = obj.get("contexts", obj.get("context", []))
            contexts = [ctx] if isinstance(ctx, str) else ctx
            if (not isinstance(contexts, list)  # none: a judge that reads none (a criterion)
                    or not all(isinstance(c, str) for c in contexts)):
                raise ValueError("field 'contexts' (or 'context'): expected a string or a "
                                 "list of strings")
            if "label" not in obj:
                raise ValueError("field 'label' is missing")
            items.append(Item(str(obj.get("id", line_no)), _text(obj, "question", False) or "",
                              tuple(contexts), _text(obj, "answer", True) or "",
                              _text(obj, "expected_answer", False),
                              _label(obj["label"], labels),
                              str(obj.get("annotator") or ""), str(obj.get("note") or "")))
        except ValueError as e:
            raise DataError(str(e), file=str(path), line=line_no) from None
    return items


_CONTEXT = re.compile(r"^\[\d+\] ", re.MULTILINE)


def split_contexts(cell: str) -> tuple[str, ...]:
    """The contexts of a review CSV cell (``[1] text``, a blank line between them)."""
    parts = [p.strip() for p in _CONTEXT.split(cell)]
    return tuple(p for p in parts if p)


def read_review(path: str | Path, metric: str | None) -> tuple[list[Item], str | None]:
    """The rows of a review CSV that people labelled (of ``metric`` when given), and the
    metric the rows are of."""
    items, metrics = [], set()
    for row_no, start, cells in review_rows(path, ("id", "answer", "contexts", "human")):
        try:
            value = parse_value(cells["human"])
        except ValueError as e:
            raise cell_error(path, row_no, start, cells, "human", e) from None
        row_metric = cells.get("metric", "").strip() or None
        if value is None or (metric and row_metric and row_metric != metric):
            continue
        metrics.add(row_metric)
        items.append(Item(cells["id"], cells.get("question", ""),
                          split_contexts(cells["contexts"]), cells["answer"],
                          cells.get("expected_answer") or None, value < 0.5,
                          cells.get("annotator", "").strip(), cells.get("note", "")))
    found = sorted(m for m in metrics if m)
    if len(found) > 1:
        raise DataError(f"the labelled rows are of several metrics ({', '.join(found)}); "
                        "choose one with --metric", file=str(path))
    return items, found[0] if found else None


def read_store(queue: str, store: Path) -> tuple[list[Item], str]:
    """The labels of a queue of the label store at ``store`` (``ragmark annotate``), one
    item per person and label, and the queue's task."""
    task = get_queue(store, queue).task
    return [Item(r["id"], r["question"], tuple(r["contexts"]), r["answer"],
                 r["expected_answer"] or None, float(r["human"]) < 0.5, r["annotator"],
                 r["note"])
            for r in label_rows(store, queue)], task


def read_items(path: str | Path, metric: str | None, label_text: str | None,
               store: Path | None = None) -> tuple[Sequence[Item], str | None]:
    """The items of ``path`` (JSONL or review CSV, by extension, or ``store:QUEUE`` of
    the label store ``store``, default beside the run history) and the metric the file
    names (a review CSV's, a queue's task), if any; DataError when none is labelled."""
    p = Path(path)
    queue = queue_of(path)
    named: str | None
    if queue is not None:
        items, named = read_store(queue, store or labels_path())
    elif not p.is_file():
        raise ConfigError(f"{path}: no such file (a JSONL or review CSV of labels, or "
                          "store:QUEUE for a queue of `ragmark annotate`)")
    elif p.suffix.lower() == ".csv":
        items, named = read_review(p, metric)
    else:
        items, named = read_jsonl(p, label_map(label_text)), None
    if not items:
        raise DataError("no labelled item" + (f" of metric {metric!r}" if metric else ""),
                        file=str(path))
    return items, named
