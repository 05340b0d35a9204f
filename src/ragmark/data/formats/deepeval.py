"""DeepEval goldens and test cases (``input``, ``expected_output``, ``context``,
``retrieval_context``, ``actual_output``), as its dataset saves them: JSON (a list, or
``goldens`` / ``test_cases``); JSONL and CSV with the list columns joined by ``|``, as
DeepEval writes and reads them. A test set is written as goldens, the question's type,
difficulty and sources in ``additional_metadata``."""

from __future__ import annotations

from typing import Any

from ragmark.data.files import Where
from ragmark.data.foreign import cell_list, cell_text, item_of, with_logged
from ragmark.data.formats import RowFormat
from ragmark.data.leniency import Leniency

_FIELDS = {"actual_output", "expected_output", "retrieval_context", "context"}


def _detect(keys: set[str]) -> bool:
    return "input" in keys and bool(keys & _FIELDS)


def _row(row: dict[str, Any], where: Where, lenient: Leniency) -> dict[str, Any]:
    expected = cell_text(row.get("expected_output"), where, "expected_output")
    gold = cell_list(row.get("context"), where, "context", lenient, "|")
    return with_logged(item_of(FORMAT, row, where, "input", expected, gold), row, where,
                       lenient, "actual_output", "retrieval_context", "|")


def _export(items: list[dict[str, Any]], model: str) -> Any:
    return [{"input": it["question"], "expected_output": it.get("expected_answer"),
             "context": list(it.get("ground_truth_contexts") or []),
             "additional_metadata": {k: it[k] for k in ("id", "type", "difficulty",
                                                       "source_ids") if k in it}}
            for it in items]


FORMAT = RowFormat("deepeval", "DeepEval", "'input'", "input, ...", _detect, _row, _export,
                   order=20)
