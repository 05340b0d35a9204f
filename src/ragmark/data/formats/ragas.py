"""RAGAS evaluation datasets: the sample fields of RAGAS 0.2+ (``user_input``,
``retrieved_contexts``, ``response``, ``reference``, ``reference_contexts``) and the
older ones (``question``, ``contexts``, ``answer``, ``ground_truth`` or
``ground_truths``); JSONL, a JSON list, or CSV as RAGAS writes it (list columns as
Python list literals). Several ``ground_truths``: the first is the expected answer (a
counted warning). A test set is written as ``EvaluationDataset.to_jsonl`` writes it."""

from __future__ import annotations

from typing import Any

from ragmark.data.files import Where
from ragmark.data.foreign import cell_list, cell_text, item_of, with_logged
from ragmark.data.formats import RowFormat
from ragmark.data.leniency import Leniency

SEVERAL_TRUTHS = "several ground_truths, the first is the expected answer"
_OLD = {"ground_truth", "ground_truths"}


def _detect(keys: set[str]) -> bool:
    return "user_input" in keys or ("question" in keys and bool(keys & _OLD))


def _row(row: dict[str, Any], where: Where, lenient: Leniency) -> dict[str, Any]:
    expected = cell_text(row.get("reference"), where, "reference")
    if expected is None and "ground_truth" in row:
        expected = cell_text(row.get("ground_truth"), where, "ground_truth")
    truths = cell_list(row.get("ground_truths"), where, "ground_truths", lenient)
    if expected is None and truths:
        if len(truths) > 1:
            lenient.warn(SEVERAL_TRUTHS, where.short(), where.error(
                f"{len(truths)} ground_truths where one expected answer belongs",
                "ground_truths"))
        expected = truths[0]
    gold = cell_list(row.get("reference_contexts"), where, "reference_contexts", lenient)
    item = item_of(FORMAT, row, where, "user_input" if "user_input" in row else "question",
                   expected, gold)
    return with_logged(item, row, where, lenient, "response" if "response" in row else "answer",
                       "retrieved_contexts" if "retrieved_contexts" in row else "contexts")


def _export(items: list[dict[str, Any]], model: str) -> Any:
    return [{"user_input": it["question"],
             "reference_contexts": list(it.get("ground_truth_contexts") or []),
             "reference": it.get("expected_answer")} for it in items]


FORMAT = RowFormat("ragas", "RAGAS", "'user_input' (or 'question' in older sets)",
                   "user_input/question, ...", _detect, _row, _export, ".jsonl", order=10)
