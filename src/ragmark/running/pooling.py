"""Pooled judgments: let an LLM judge the documents the qrels never judged.

Public qrels judge only what some system once retrieved, so a new system is punished
for relevant documents nobody judged. ``ragmark label --pool`` takes the top k documents
of every config, keeps those the question's qrels do not judge, asks the label judge
(can an answer to the question be derived from the document? YES/NO) about each, and
writes an *extended qrels* file: every original judgment untouched and marked ``qrels``,
then the LLM's, marked ``llm:<model>`` (YES = 1, NO = 0; a document the judge gave no
label is left unjudged and counted). ``run``/``compare --qrels-extra FILE`` add the LLM
judgments of that file for the (question, document) pairs the dataset's qrels lack; the
original judgments always win.

The file is tab-separated with a header: ``query-id corpus-id score source``.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ragmark.data.files import iter_lines
from ragmark.errors import ConfigError, DataError
from ragmark.types import Dataset, GroundTruth, Sample, Score

HEADER = ("query-id", "corpus-id", "score", "source")
POOL_CHARS = 4000
"""A pooled document is shown to the judge up to this many characters."""


@dataclasses.dataclass(frozen=True, slots=True)
class PoolItem:
    qid: str
    doc_id: str
    question: str
    text: str


def pool(dataset: Dataset, reports: Mapping[str, Any], top_k: int) -> list[PoolItem]:
    """The unjudged documents in the top ``top_k`` of every config (each (question,
    document) once, in first-seen order). ConfigError when the ground truth is not
    judged documents (qrels)."""
    if not any(s.truth.kind == "ids" for s in dataset.samples):
        raise ConfigError("--pool needs judged documents (BEIR qrels or a keyword set); "
                          f"this {dataset.format} set's ground truth is passages or sections")
    docs = dataset.corpus.by_id()
    truth = {s.id: s.truth.doc_grades for s in dataset.samples}
    seen: dict[tuple[str, str], PoolItem] = {}
    for report in reports.values():
        for q in report.queries:
            judged = truth.get(q.id, {})
            ranked = list(dict.fromkeys(r.doc_id for r in q.retrieved))  # best chunk first
            for d in ranked[:top_k]:
                if d in judged or (q.id, d) in seen or d not in docs:
                    continue
                seen[(q.id, d)] = PoolItem(q.id, d, q.question, docs[d].text[:POOL_CHARS])
    return list(seen.values())


def write_extended_qrels(path: str | Path, dataset: Dataset, items: Sequence[PoolItem],
                         labels: Sequence[Score], model: str) -> dict[str, int]:
    """Write the extended qrels file; the counts of what it holds."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    counts: Counter[str] = Counter()
    lines = ["\t".join(HEADER)]
    for s in dataset.samples:
        for d, g in s.truth.doc_grades.items():
            lines.append(f"{s.id}\t{d}\t{g}\tqrels")
            counts["original"] += 1
    for it, lab in zip(items, labels, strict=True):
        if not lab.ok:
            counts["unlabelled"] += 1
            continue
        grade = 1 if lab.value == 1.0 else 0
        lines.append(f"{it.qid}\t{it.doc_id}\t{grade}\tllm:{model}")
        counts["llm_relevant" if grade else "llm_not_relevant"] += 1
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return {k: counts[k] for k in ("original", "llm_relevant", "llm_not_relevant",
                                   "unlabelled")}


def read_extra(path: str | Path) -> dict[str, dict[str, int]]:
    """The LLM judgments of an extended qrels file (rows marked ``llm:...``);
    DataError naming the line of a bad row."""
    out: dict[str, dict[str, int]] = {}
    for n, line in iter_lines(Path(path)):
        cells = line.split("\t")
        if n == 1 and tuple(c.strip() for c in cells) == HEADER:
            continue
        if len(cells) != 4:
            raise DataError(f"expected 4 tab-separated columns ({' '.join(HEADER)}), got "
                            f"{len(cells)}", file=str(path), line=n)
        qid, doc, grade, source = (c.strip() for c in cells)
        try:
            g = int(grade)
        except ValueError:
            raise DataError(f"score must be an integer, got {grade!r}", file=str(path),
                            line=n, field="score") from None
        if source.startswith("llm"):
            out.setdefault(qid, {})[doc] = g
        elif source != "qrels":
            raise DataError(f"source must be 'qrels' or 'llm:MODEL', got {source!r}",
                            file=str(path), line=n, field="source")
    return out


def with_extra(dataset: Dataset, extra: Mapping[str, Mapping[str, int]], path: str
               ) -> tuple[Dataset, dict[str, Any]]:
    """``dataset`` with the extra judgments added where its qrels have none for the
    (question, document); what was added, for the results file."""
    if not any(s.truth.kind == "ids" for s in dataset.samples):
        raise ConfigError("--qrels-extra adds judged documents; this set's ground truth is "
                          "passages or sections")
    added = relevant = 0
    samples: list[Sample] = []
    for s in dataset.samples:
        more = {d: g for d, g in extra.get(s.id, {}).items() if d not in s.truth.doc_grades}
        if more and s.truth.kind in ("ids", "none"):
            added += len(more)
            relevant += sum(1 for g in more.values() if g > 0)
            grades = MappingProxyType({**s.truth.doc_grades, **more})
            s = dataclasses.replace(s, truth=GroundTruth(doc_grades=grades))
        samples.append(s)
    info = {"file": path, "judgments_added": added, "relevant_added": relevant}
    return dataclasses.replace(dataset, samples=tuple(samples)), info
