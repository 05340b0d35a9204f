"""A fingerprint of a dataset, so results files say what data they were computed on."""

from __future__ import annotations

import hashlib

from ragmark.types import Dataset

LOGGED = ("outputs", "traces")
"""The formats of a system's logged outputs: their corpus is the contexts they gave, so
it is no part of the dataset's identity (its questions and ground truth are)."""


def dataset_hash(dataset: Dataset) -> str:
    """SHA-256 over the corpus (ids, titles, texts) and the questions with their ground
    truth (their nuggets too, when given): two results files with the same hash were
    computed on the same data. The "corpus" of logged outputs is the contexts the system
    retrieved, not data: their identity is the questions and ground truth alone, so two
    days of logs over the same questions are one dataset."""
    h = hashlib.sha256()

    def put(*parts: object) -> None:
        for p in parts:
            b = str(p).encode("utf-8")
            h.update(len(b).to_bytes(8, "little"))
            h.update(b)

    for d in dataset.corpus.documents if dataset.format not in LOGGED else ():
        put("doc", d.id, d.title, d.text)
    for s in dataset.samples:
        t = s.truth
        put("q", s.id, s.question, sorted(t.doc_grades.items()), t.sections, t.passages,
            s.expected_answer, s.expected_keywords)
        if s.nuggets is not None:  # what the nugget scores count against (none: as before)
            put("n", [(n.text, n.importance) for n in s.nuggets])
    return h.hexdigest()
