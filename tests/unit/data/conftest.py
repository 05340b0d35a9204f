"""Small input files for the loader tests, written in tmp_path."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ragmark.errors import DataError

CORPUS = {
    "doc1.txt": "A RAG pipeline has two main parts: a retriever and a generator.",
    "doc2.txt": "Recall at k counts the relevant documents found in the top k results.",
    "notes/doc3.md": "# Harness\nA harness runs every question and records the metrics.",
}


class Files:
    """Writes files under one root folder and returns their paths."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, name: str) -> Path:
        return self.root / name

    def text(self, name: str, content: str | bytes) -> Path:
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8", newline="")
        return path

    def json(self, name: str, value: Any) -> Path:
        return self.text(name, json.dumps(value, indent=2, ensure_ascii=False))

    def jsonl(self, name: str, rows: list[Any]) -> Path:
        lines = [r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in rows]
        return self.text(name, "\n".join(lines) + "\n")

    def corpus(self, name: str = "corpus", docs: dict[str, str] | None = None) -> Path:
        for doc, text in (CORPUS if docs is None else docs).items():
            self.text(f"{name}/{doc}", text)
        return self.root / name

    def beir(
        self,
        name: str = "beir",
        *,
        corpus: list[Any] | None = None,
        queries: list[Any] | None = None,
        qrels: str | None = None,
        split: str = "test",
    ) -> Path:
        if corpus is None:
            corpus = [
                {"_id": "d1", "title": "Cats", "text": "Cats purr when they are content."},
                {"_id": "d2", "title": "Dogs", "text": "Dogs bark at strangers."},
                {"_id": "d3", "title": "Only a title", "text": ""},
            ]
        if queries is None:
            queries = [
                {"_id": "q1", "text": "Why do cats purr?"},
                {"_id": "q2", "text": "Do dogs bark?"},
                {"_id": "q3", "text": "A training query"},
            ]
        if qrels is None:
            qrels = "query-id\tcorpus-id\tscore\nq2\td2\t2\nq1\td1\t1\nq2\td3\t0\n"
        self.jsonl(f"{name}/corpus.jsonl", corpus)
        self.jsonl(f"{name}/queries.jsonl", queries)
        self.text(f"{name}/qrels/{split}.tsv", qrels)
        return self.root / name

    def orb(
        self,
        name: str = "orb",
        *,
        queries: Any = None,
        qrels: Any = None,
        answers: Any = None,
        docs: dict[str, Any] | None = None,
    ) -> Path:
        if queries is None:
            queries = {
                "q1": {"query": "What does the encoder do?", "type": "abstractive"},
                "q2": {"query": "How large is the table?", "type": "extractive"},
            }
        if qrels is None:
            qrels = {
                "q2": {"doc_id": "2401.00001v1", "section_id": 1},
                "q1": {"doc_id": "2401.00001v1", "section_id": 0},
            }
        if docs is None:
            docs = {
                "2401.00001v1": {
                    "title": "An encoder",
                    "sections": [
                        {"text": "The encoder maps tokens to vectors."},
                        {"text": "Table 1 has 12 rows.", "tables": {"t1": "..."}},
                    ],
                },
                "2402.00002v3": {"title": "Other", "sections": [{"text": "Unrelated."}]},
            }
        folder = self.root / name
        self.json(f"{name}/queries.json", queries)
        self.json(f"{name}/qrels.json", qrels)
        if answers is not None:
            self.json(f"{name}/answers.json", answers)
        (folder / "corpus").mkdir(parents=True, exist_ok=True)
        for doc_id, doc in docs.items():
            self.json(f"{name}/corpus/{doc_id}.json", doc)
        return folder


@pytest.fixture
def files(tmp_path: Path) -> Files:
    return Files(tmp_path)


@pytest.fixture
def error_of() -> Callable[..., str]:
    """Calls a loader that must fail, and returns the DataError's message."""

    def run(function: Callable[..., Any], *args: Any, **kwargs: Any) -> str:
        with pytest.raises(DataError) as info:
            function(*args, **kwargs)
        return str(info.value)

    return run
