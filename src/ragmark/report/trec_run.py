"""TREC run file writer: ``qid Q0 docid rank score tag``, one line per document."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ragmark.errors import DataError
from ragmark.results.model import RunReport


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


def trec_lines(report: RunReport, tag: str | None = None) -> list[str]:
    """Document-level lines (a document at its best chunk's rank), trec_eval order.

    Scores are written with 9 significant digits, enough for trec_eval to read back the
    same float32 values and so the same order.
    """
    tag = "".join("_" if c.isspace() else c for c in tag or str(report.config.get("name")))
    lines = []
    for q in report.queries:
        seen: set[str] = set()
        rank = 0
        for r in q.retrieved:  # already in trec order
            if r.doc_id in seen:
                continue
            seen.add(r.doc_id)
            rank += 1
            lines.append(f"{q.id} Q0 {r.doc_id} {rank} {r.score:.9g} {tag}")
    return lines


def write_trec_run(report: RunReport, path: str | Path, tag: str | None = None) -> Path:
    """Write the run file; ids with white space are a DataError, never a corrupt line."""
    check_trec_ids((q.id for q in report.queries), "question")
    check_trec_ids((r.doc_id for q in report.queries for r in q.retrieved), "document")
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("\n".join(trec_lines(report, tag)) + "\n", encoding="utf-8")
    return p
