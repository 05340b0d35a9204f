"""Outputs sets ("bring your own outputs"): what a RAG system answered, scored without
running any retriever or generator.

One object a line (JSONL; a JSON list works too)::

    {"id": "q1", "question": "...", "answer": "...", "contexts": ["...", "..."],
     "ground_truth_contexts": ["..."], "expected_answer": "...", "expected_keywords": [...]}

``question``, ``answer`` (a string; empty is an empty answer) and ``contexts`` (a list,
possibly empty, in rank order; each a string or ``{"text", "id"?, "doc_id"?,
"score"?}``) are required. ``ground_truth_contexts`` makes the retrieval metrics (a
context matches a passage by normalised containment, as in a context set); a line
without it has them missing. ``expected_answer`` and ``expected_keywords`` make the
answer metrics that need them. Other fields are kept in ``Sample.extra``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragmark.data._fields import get_optional_string, get_optional_strings, get_string
from ragmark.data._read import Where, base_suffix, missing_error
from ragmark.data.leniency import Leniency
from ragmark.data.sets import _samples, read_items, set_name
from ragmark.errors import DataError
from ragmark.pipelines.base import Output, ShapeError, parse_contexts
from ragmark.types import Corpus, Dataset, Document, GroundTruth

OUTPUT_FIELDS = frozenset({"id", "question", "answer", "contexts", "ground_truth_contexts",
                           "expected_answer", "expected_keywords"})


@dataclass(frozen=True, slots=True)
class OutputsSet:
    """The questions with their ground truth (``dataset``; its corpus is the distinct
    contexts given) and each question's logged output, by sample id."""

    dataset: Dataset
    outputs: dict[str, Output]


NULL_ANSWERS = "null answers, scored as empty answers (their answer metrics are missing)"


def _output(obj: dict[str, Any], where: Where, lenient: Leniency) -> Output:
    if "answer" not in obj:
        raise where.error("missing; expected a string (the system's answer)", field="answer")
    if obj["answer"] is None:
        lenient.warn(NULL_ANSWERS, where.short(), where.error(
            "expected a string, got null", "answer"))
        answer = ""
    else:
        answer = get_string(obj, "answer", where, allow_empty=True)
    if "contexts" not in obj:
        raise where.error("missing; expected a list of the contexts the system retrieved, "
                          "best first (strings or objects with 'text')", field="contexts")
    try:
        contexts = parse_contexts(obj["contexts"])
    except ShapeError as e:
        raise where.error(e.message, field=e.field) from None
    return Output(answer, contexts)


def load_outputs(path: str | Path, lenient: Leniency | None = None) -> OutputsSet:
    """Read and check an outputs set; any bad line is a DataError naming the file, the
    line (or item) and the field. ``"answer": null`` is an empty answer, with a warning
    (``dataset.warnings``)."""
    path = Path(path)
    lenient = lenient or Leniency()
    if not path.exists():
        raise missing_error(path, "file")
    if base_suffix(path) not in (".json", ".jsonl"):
        raise DataError("an outputs set is a .jsonl file (one object a line) or a .json list",
                        file=str(path))
    outputs: list[Output] = []

    def make(obj: dict[str, Any], where: Where) -> tuple[str, GroundTruth, dict[str, Any]]:
        question = get_string(obj, "question", where)
        outputs.append(_output(obj, where, lenient))
        passages = get_optional_strings(obj, "ground_truth_contexts", where)
        optional = {
            "expected_answer": get_optional_string(obj, "expected_answer", where),
            "expected_keywords": get_optional_strings(obj, "expected_keywords", where),
        }
        return question, GroundTruth(passages=passages or ()), optional

    samples = _samples(read_items(path, lenient.encoding), OUTPUT_FIELDS, make, lenient)
    texts = dict.fromkeys(c.text for o in outputs for c in o.contexts)
    corpus = Corpus(tuple(Document(id=f"c{i}", text=t) for i, t in enumerate(texts, start=1)),
                    source=f"contexts of {path}")
    dataset = Dataset(set_name(path), str(path), "outputs", samples, corpus, "whole",
                      warnings=tuple(lenient.messages()))
    return OutputsSet(dataset, {s.id: o for s, o in zip(samples, outputs, strict=True)})
