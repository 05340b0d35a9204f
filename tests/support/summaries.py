"""Faithfulness items built on the fly from BEIR SciFact (CC BY-NC 2.0: derived from the
copy beside the project, never committed): summaries of abstracts, for measuring how
often a small judge ends without a verdict.

For each of the first test claims with a relevant abstract: the context is the
abstract's first sentences; a *supported* item's answer is two of its own sentences (a
two-claim summary), an *unsupported* item's answer two sentences of the next claim's
abstract over the same context."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any

_SENT = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENT.split(text) if 40 <= len(s.strip()) <= 240]


def summary_items(scifact: Path, n: int, context_sentences: int = 4) -> list[dict[str, Any]]:
    """``n`` items (alternately supported and unsupported), in a fixed order."""
    corpus = {}
    with (scifact / "corpus.jsonl").open(encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            corpus[d["_id"]] = sentences(d["text"])
    queries = {}
    with (scifact / "queries.jsonl").open(encoding="utf-8") as f:
        for line in f:
            q = json.loads(line)
            queries[q["_id"]] = q["text"]
    docs: list[tuple[str, str]] = []
    seen = set()
    with (scifact / "qrels" / "test.tsv").open(encoding="utf-8") as f:
        for qid, doc, _ in list(csv.reader(f, delimiter="\t"))[1:]:
            if qid not in seen and len(corpus.get(doc, [])) >= context_sentences:
                seen.add(qid)
                docs.append((qid, doc))
    items: list[dict[str, Any]] = []
    for i, (qid, doc) in enumerate(docs):
        if len(items) >= n:
            break
        own = corpus[doc]
        other = corpus[docs[(i + 1) % len(docs)][1]]
        supported = i % 2 == 0
        answer = own[1:3] if supported else other[1:3]
        items.append({"id": f"s{i}", "question": f"Summarise what is known about: "
                      f"{queries[qid]}", "contexts": own[:context_sentences],
                      "answer": " ".join(answer), "label": 0 if supported else 1})
    return items


def write_items(items: list[dict[str, Any]], path: Path) -> Path:
    path.write_text("".join(json.dumps(it) + "\n" for it in items), encoding="utf-8")
    return path
