"""TREC run file writer: ``qid Q0 docid rank score tag``, one line per document."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np

from ragmark.errors import DataError
from ragmark.results.model import RetrievedRecord, RunReport


def check_trec_ids(ids: Iterable[str], what: str) -> None:
    """A DataError when an id holds white space (or is empty): trec_eval splits a run
    line on white space, so such an id makes a line of more than six columns."""
    bad = list(dict.fromkeys(i for i in ids if not i or any(c.isspace() for c in i)))
    if bad:
        shown = ", ".join(repr(i) for i in bad[:5])
        raise DataError(
            f"--run-file: {len(bad)} {what} id{'s' * (len(bad) > 1)} contain white space or "
            f"are empty, which a TREC run file cannot hold (trec_eval reads six columns "
            f"split on white space): {shown}{' ...' if len(bad) > 5 else ''}. Give them ids "
            "without spaces, or leave out --run-file")


def _documents(retrieved: Iterable[RetrievedRecord]) -> list[tuple[str, float | None]]:
    """(document, score) at each document's first (best) place, in trec order."""
    seen: set[str] = set()
    out = []
    for r in retrieved:
        if r.doc_id not in seen:
            seen.add(r.doc_id)
            out.append((r.doc_id, r.score))
    return out


def _keeps_order(docs: list[tuple[str, float | None]]) -> bool:
    """Whether trec_eval, which orders by score (float32) and then by id (descending),
    reads the documents back in the order given: every score given, each pair in that
    order (ragmark's own rankings always are; an external system's scores may tie or
    interleave)."""
    if any(s is None for _, s in docs):
        return False
    f32 = [float(np.float32(s)) for _, s in docs]
    return all(a > b or (a == b and ia > ib)
               for (ia, _), (ib, _), a, b in zip(docs, docs[1:], f32, f32[1:], strict=False))


def trec_note(report: RunReport) -> str | None:
    """What a TREC run file of ``report`` says in a note: the questions whose ranking has
    no score, or scores that do not fall with the rank (an external system's), were
    written scores made from the rank."""
    made = sum(1 for q in report.queries if (docs := _documents(q.retrieved))
               and not _keeps_order(docs))
    if not made:
        return None
    return (f"the TREC run file gives {made} question{'s' if made != 1 else ''} scores made "
            "from the rank (n, n-1, ...): their source gave none, or scores that do not "
            "fall with its order (trec_eval orders by score); the results keep the source's "
            "own scores, or none")


def trec_lines(report: RunReport, tag: str | None = None) -> list[str]:
    """Document-level lines (a document at its best chunk's rank), trec_eval order.

    Scores are written with 9 significant digits, enough for trec_eval to read back the
    same float32 values and so the same order.
    """
    tag = "".join("_" if c.isspace() else c for c in tag or str(report.config.get("name")))
    lines = []
    for q in report.queries:
        docs = _documents(q.retrieved)
        # a missing score, or scores trec_eval would reorder (an external system's), are
        # made from the rank instead (trec_note says so)
        scores = [s for _, s in docs] if _keeps_order(docs) else [
            float(len(docs) - i) for i in range(len(docs))]
        lines += [f"{q.id} Q0 {d} {rank} {s:.9g} {tag}"
                  for rank, ((d, _), s) in enumerate(zip(docs, scores, strict=True), start=1)]
    return lines


def write_trec_run(report: RunReport, path: str | Path, tag: str | None = None) -> Path:
    """Write the run file; ids with white space are a DataError, never a corrupt line."""
    check_trec_ids((q.id for q in report.queries), "question")
    check_trec_ids((r.doc_id for q in report.queries for r in q.retrieved), "document")
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("\n".join(trec_lines(report, tag)) + "\n", encoding="utf-8")
    return p
