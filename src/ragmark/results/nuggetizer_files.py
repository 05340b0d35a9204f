"""What a run's nugget scores rest on, from their details, written beside the results in
the files TREC RAG's tools read and write (castorini's nuggetizer):

- ``<results>.nuggets.jsonl``: the nuggets each question's answers were scored against,
  so that another system is scored against the same ones (``--nuggets``);
- ``<results>[.<config>].assignments.jsonl``: each answer's nuggets with their
  importance and assignment (nuggetizer's assignment output: ``qid``, ``query``,
  ``answer_text``, ``run_id``, ``nuggets``), which nuggetizer's own scoring reads;
- ``<results>[.<config>].nugget_scores.jsonl``: the per-topic scores in nuggetizer's
  metrics layout (``qid``, ``strict_vital_score``, ``strict_all_score``,
  ``vital_score``, ``all_score``), then the ``"qid": "all"`` line of their means. A
  score that is missing (no vital nugget) is null and left out of the mean, where
  nuggetizer writes 0 and counts it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ragmark.data.nugget_files import nugget_line
from ragmark.judges.nugget_scores import METRICS, Assigned, nugget_scores
from ragmark.results.model import QueryRecord, RunReport
from ragmark.types import Nugget

SUFFIX = ".nuggets.jsonl"
OURS_AS_THEIRS = {"nugget_vital_strict": "strict_vital_score",
                  "nugget_all_strict": "strict_all_score", "nugget_vital": "vital_score",
                  "nugget_all": "all_score"}
"""ragmark's names of the four scores -> nuggetizer's."""


def scored_nuggets(q: QueryRecord) -> tuple[str, list[dict[str, Any]]] | None:
    """(where the nuggets came from, the nuggets with importance and assignment) that the
    question's nugget scores carry (the same on each), or None without them."""
    for name in METRICS:
        m = q.metrics.get(name)
        listed = m.details.get("nuggets") if m is not None and m.details else None
        if isinstance(listed, list) and listed and m is not None:
            return str(m.details.get("source", "")), [n for n in listed
                                                        if isinstance(n, dict)]
    return None


def nuggets_used(report: RunReport | Iterable[QueryRecord]
                 ) -> dict[str, tuple[str, tuple[Nugget, ...]]]:
    """Question id -> (question, the nuggets its answer was scored against), for the
    questions whose nugget scores had nuggets (of a report, or of its records)."""
    out: dict[str, tuple[str, tuple[Nugget, ...]]] = {}
    for q in report.queries if isinstance(report, RunReport) else report:
        listed = (scored_nuggets(q) or ("", []))[1]
        if listed:
            out[q.id] = (q.question, tuple(Nugget(str(n["text"]), str(n["importance"]))
                                           for n in listed))
    return out


def nuggets_hash(records: Iterable[QueryRecord]) -> str | None:
    """SHA-256 over the nuggets each question's answer was scored against (by question
    id), or None when no answer was: two runs whose nugget scores can be compared have
    the same."""
    used = nuggets_used(records)
    if not used:
        return None
    h = hashlib.sha256()
    for qid in sorted(used):
        h.update(json.dumps([qid, [(n.text, n.importance) for n in used[qid][1]]],
                            ensure_ascii=False).encode("utf-8"))
    return h.hexdigest()


def _lines(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                    encoding="utf-8")
    return path


def assignments(report: RunReport, run_id: str) -> list[dict[str, Any]]:
    """Each scored answer as nuggetizer's assignment output: the answer as the nuggets
    were assigned against it (a TREC answer's sentence texts joined by a space, as
    nuggetizer joins them), and the answer file's ``response_length`` where it gave one
    (else the answer's words)."""
    rows = []
    for q in report.queries:
        listed = (scored_nuggets(q) or ("", []))[1]
        if listed:
            text, sentences = _assessed(q)
            given = (q.sample.extra if q.sample is not None else {}).get("response_length")
            length = given if isinstance(given, int) and not isinstance(given, bool) else (
                ragnarok_length(text) if sentences else len(text.split()))
            rows.append({"query": q.question, "qid": q.id, "answer_text": text,
                         "response_length": length, "run_id": run_id,
                         "nuggets": [dict(n) for n in listed]})
    return rows


def _assessed(q: QueryRecord) -> tuple[str, bool]:
    """The answer text the nugget scores were assigned against (their details say it
    when it was not the answer as recorded: the sentences' texts), and whether it was
    the sentences'."""
    for name in METRICS:
        m = q.metrics.get(name)
        said = m.details.get("answer_text") if m is not None and m.details else None
        if isinstance(said, str):
            return said, True
    return q.answer or "", False


def ragnarok_length(text: str) -> int:
    """An answer's ``response_length`` as castorini's Ragnarok writes it into TREC RAG
    answer files: its words, commas and semicolons counting as spaces (``data.py``)."""
    return len(text.replace(",", " ").replace(";", " ").split())


def topic_scores(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The per-topic scores of the assignment rows (:func:`assignments`) in nuggetizer's
    metrics layout, then the "all" line: all four, whichever of them the run asked."""
    out: list[dict[str, Any]] = []
    for row in rows:
        got = nugget_scores([Assigned(Nugget(str(n["text"]), str(n["importance"])),
                                      str(n["assignment"])) for n in row["nuggets"]])
        out.append({"qid": row["qid"], **{theirs: got[ours].value
                                          for ours, theirs in OURS_AS_THEIRS.items()}})
    means: dict[str, Any] = {"qid": "all"}
    for theirs in OURS_AS_THEIRS.values():
        values = [r[theirs] for r in out if r[theirs] is not None]
        means[theirs] = sum(values) / len(values) if values else None
    return out + [means] if out else []


def write_nuggets_beside(result: Any, stem: Path) -> list[Path]:
    """Write the files of the module beside the results at ``stem`` (the nuggets once:
    a compare scores every config against the same, each question's from the first
    config that scored an answer to it); nothing when no answer was scored against
    nuggets."""
    reports: Mapping[str, RunReport] = getattr(result, "reports", None) or {"": result}
    used: dict[str, tuple[str, tuple[Nugget, ...]]] = {}
    for report in reports.values():  # a question a config did not answer, another did
        used |= {k: v for k, v in nuggets_used(report).items() if k not in used}
    if not used:
        return []
    written = [_lines(stem.with_name(stem.name + SUFFIX),
                      [nugget_line(qid, question, nuggets)
                       for qid, (question, nuggets) in used.items()])]
    for name, report in reports.items():
        base = stem.name + (f".{name}" if name else "")
        run_id = name or str(report.config.get("name") or stem.name)
        rows = assignments(report, run_id)
        written.append(_lines(stem.with_name(base + ".assignments.jsonl"), rows))
        written.append(_lines(stem.with_name(base + ".nugget_scores.jsonl"),
                              topic_scores(rows)))
    return written
