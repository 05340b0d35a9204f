"""Reading a TREC run file (``qid Q0 docid rank score tag``, white-space separated), as
trec_eval reads it: the order of a question's documents is by score (float32)
descending, then document id descending; the rank column is not used."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from ragmark.data.files import iter_lines
from ragmark.data.logged import Context, Logged, Output
from ragmark.errors import DataError
from ragmark.matching import trec_order

FORMAT = "a TREC run file: one line per retrieved document, 'qid Q0 docid rank score tag'"


def read_trec_run(path: str | Path) -> dict[str, list[tuple[str, float]]]:
    """Question id -> its (document id, score) pairs in trec_eval's order. A line of the
    wrong shape, a score that is not a finite number, or a document listed twice for a
    question is a DataError naming the line."""
    p = Path(path)
    run: dict[str, dict[str, float]] = {}
    for line_no, line in iter_lines(p):
        parts = line.split()
        if len(parts) != 6:
            raise DataError(f"expected 6 fields ({FORMAT}), got {len(parts)}", file=str(p),
                            line=line_no)
        qid, _, doc, _, score_text, _ = parts
        try:
            score = float(score_text)
        except ValueError:
            raise DataError(f"expected a number, got {score_text!r}", file=str(p),
                            line=line_no, field="score") from None
        if not math.isfinite(score):
            raise DataError(f"expected a finite number, got {score_text!r}", file=str(p),
                            line=line_no, field="score")
        docs = run.setdefault(qid, {})
        if doc in docs:
            raise DataError(f"document {doc!r} is listed twice for question {qid!r}",
                            file=str(p), line=line_no, field="docid")
        docs[doc] = score
    if not run:
        raise DataError(f"no line: expected {FORMAT}", file=str(p))
    return {q: _trec_order(docs) for q, docs in run.items()}


def _trec_order(docs: dict[str, float]) -> list[tuple[str, float]]:
    ids = list(docs)
    return [(ids[i], docs[ids[i]]) for i in trec_order(ids, [docs[d] for d in ids])]


def run_outputs(run: dict[str, list[tuple[str, float]]], dataset: Any
                ) -> tuple[Any, int]:
    """The run as logged outputs of the dataset's questions (each document a context
    with its id, in trec_eval's order, its text from the corpus when there), and how many
    of the run's questions the dataset lacks (left out, as trec_eval leaves them)."""
    texts = {d.id: d.text for d in dataset.corpus.documents}
    outs = {s.id: Output("", tuple(Context(texts.get(d, d), d, d, score)
                                   for d, score in run.get(s.id, [])))
            for s in dataset.samples}
    extra = len(set(run) - {s.id for s in dataset.samples})
    return Logged(outs, source="run_file"), extra
