"""A small BEIR folder cut from SciFact: the first test questions, their relevant
documents, and the first other documents of the corpus as distractors."""

from __future__ import annotations

import csv
import json
from pathlib import Path


def beir_slice(src: Path, dest: Path, questions: int, documents: int) -> Path:
    """Write ``dest`` (corpus.jsonl, queries.jsonl, qrels/test.tsv) with the first
    ``questions`` test questions that have qrels and ``documents`` documents in all."""
    with (src / "qrels" / "test.tsv").open(encoding="utf-8") as f:
        rows = [r for r in csv.reader(f, delimiter="\t")][1:]
    qids: list[str] = []
    for qid, _, _ in rows:
        if qid not in qids:
            qids.append(qid)
    qids = qids[:questions]
    kept_rows = [r for r in rows if r[0] in qids]
    relevant = {r[1] for r in kept_rows}
    docs = [json.loads(line) for line in (src / "corpus.jsonl").open(encoding="utf-8")]
    keep = [d for d in docs if d["_id"] in relevant]
    keep += [d for d in docs if d["_id"] not in relevant][: max(documents - len(keep), 0)]
    queries = {q["_id"]: q for q in map(json.loads, (src / "queries.jsonl").open(encoding="utf-8"))}
    (dest / "qrels").mkdir(parents=True, exist_ok=True)
    (dest / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in keep), "utf-8")
    (dest / "queries.jsonl").write_text(
        "".join(json.dumps(queries[q]) + "\n" for q in qids), "utf-8")
    (dest / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join("\t".join(r) + "\n" for r in kept_rows),
        "utf-8")
    return dest
