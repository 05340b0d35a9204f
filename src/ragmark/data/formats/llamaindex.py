"""LlamaIndex's ``LabelledRagDataset`` (``rag_dataset.json``: ``{"examples": [{query,
reference_contexts, reference_answer, query_by, reference_answer_by}]}``), its rows read
as questions with their expected answer and gold contexts; a test set is written as one.
(Its ``EmbeddingQAFinetuneDataset``, relevance by id with its own corpus, is a whole
dataset: :mod:`ragmark.data.formats.embedding_qa`.)"""

from __future__ import annotations

from typing import Any

from ragmark.data.files import Where
from ragmark.data.foreign import cell_list, cell_text, item_of
from ragmark.data.formats import RowFormat
from ragmark.data.leniency import Leniency


def _detect(keys: set[str]) -> bool:
    return "query" in keys and bool(keys & {"reference_answer", "reference_contexts"})


def _row(row: dict[str, Any], where: Where, lenient: Leniency) -> dict[str, Any]:
    expected = cell_text(row.get("reference_answer"), where, "reference_answer")
    gold = cell_list(row.get("reference_contexts"), where, "reference_contexts", lenient)
    return item_of(FORMAT, row, where, "query", expected, gold)


def _export(items: list[dict[str, Any]], model: str) -> Any:
    by = {"model_name": model, "type": "ai"}
    return {"examples": [{"query": it["question"], "query_by": by,
                          "reference_contexts": list(it.get("ground_truth_contexts") or []),
                          "reference_answer": it.get("expected_answer") or "",
                          "reference_answer_by": by} for it in items]}


FORMAT = RowFormat("llamaindex", "LlamaIndex", "'query'", "query, ...", _detect, _row,
                   _export, order=30)
