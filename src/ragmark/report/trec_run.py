"""TREC run file writer: ``qid Q0 docid rank score tag``, one line per document."""

from __future__ import annotations

from pathlib import Path

from ragmark.report.model import RunReport


def trec_lines(report: RunReport, tag: str | None = None) -> list[str]:
    """Document-level lines (a document at its best chunk's rank), trec_eval order.

    Scores are written with 9 significant digits, enough for trec_eval to read back the
    same float32 values and so the same order.
    """
    tag = tag or str(report.config.get("name", "ragmark"))
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
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("\n".join(trec_lines(report, tag)) + "\n", encoding="utf-8")
    return p
