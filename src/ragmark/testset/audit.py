"""What ``ragmark testset check`` finds in an evaluation set (pure: the embeddings come
in as arrays): questions that nearly repeat each other, questions that give their
answer away, answers their stated passages do not hold, how much of the corpus the
questions are about, and the spread of their types, lengths and answerability.

The rules, each a count with the items it names:

- **near-duplicates**: two questions whose embeddings' cosine is at least
  :data:`DUPLICATE_COSINE`, or whose content words' Jaccard similarity is at least
  the generator's :data:`~ragmark.testset.checks.DUPLICATE_JACCARD` (the pair says
  which rule, or both); a question counts once, as the later of its first pair (the
  share is of questions that repeat an earlier one);
- **leaked answers**: the expected answer's content words all occur in the question
  (an answer of stop words only is never leaked: "Yes");
- **unsupported answers**: fewer than :data:`SUPPORTED_SHARE` of the expected
  answer's content words occur in its ground-truth passages (a set with passages);
- **coverage** (with the corpus): the documents some question is about (its qrels, its
  sections, or the documents its ground-truth passages occur in) and the clusters of
  the corpus's embeddings with at least one such document; the largest clusters with
  none.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ragmark.testset.checks import (
    DUPLICATE_COSINE,
    DUPLICATE_JACCARD,
    MIN_QUOTE_CHARS,
    jaccard,
    question_words,
)
from ragmark.text import content_tokens, normalise, normalised_contains
from ragmark.types import Document, Sample

SUPPORTED_SHARE = 0.5
"""An expected answer is supported when at least this share of its content words occur
in its ground-truth passages."""


@dataclass(frozen=True)
class Pair:
    """Two questions that nearly repeat each other: ``b`` comes after ``a``."""

    a: str
    b: str
    cosine: float | None
    jaccard: float

    @property
    def rule(self) -> str:
        by_vector = self.cosine is not None and self.cosine >= DUPLICATE_COSINE
        by_words = self.jaccard >= DUPLICATE_JACCARD
        return "both" if by_vector and by_words else "embedding" if by_vector else "words"

    def to_json(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "rule": self.rule,
                "cosine": None if self.cosine is None else round(self.cosine, 4),
                "jaccard": round(self.jaccard, 4)}


def duplicate_pairs(samples: Sequence[Sample], vectors: NDArray[np.float32] | None
                    ) -> list[Pair]:
    """Every pair of near-duplicate questions, in the set's order (``vectors``: the
    questions' unit-length embeddings, row by row; None: the word rule alone)."""
    words = [question_words(s.question) for s in samples]
    sims = None if vectors is None else vectors @ vectors.T
    out = []
    for j in range(len(samples)):
        for i in range(j):
            jac = jaccard(words[i], words[j])
            cos = None if sims is None else float(sims[i, j])
            if jac >= DUPLICATE_JACCARD or (cos is not None and cos >= DUPLICATE_COSINE):
                out.append(Pair(samples[i].id, samples[j].id, cos, jac))
    return out


def repeating(pairs: Sequence[Pair]) -> list[str]:
    """The questions that repeat an earlier one (each once), in order of their pairs."""
    return list(dict.fromkeys(p.b for p in pairs))


def leaks_answer(sample: Sample) -> bool:
    """Whether the question holds every content word of its expected answer."""
    answer = set(content_tokens(sample.expected_answer or ""))
    return bool(answer) and answer <= set(content_tokens(sample.question))


def answer_support(sample: Sample) -> float | None:
    """The share of the expected answer's content words that occur in its ground-truth
    passages; None without an answer of content words or without passages."""
    answer = set(content_tokens(sample.expected_answer or ""))
    if not answer or not sample.truth.passages:
        return None
    held = set(content_tokens(" ".join(sample.truth.passages)))
    return len(answer & held) / len(answer)


def documents_about(sample: Sample, corpus: Mapping[str, str]) -> set[str]:
    """The documents a question is about: its relevant qrels, its sections' documents,
    else the documents its ground-truth passages match by SPEC section 3's rule (the
    shorter of passage and document wholly in the longer, at least
    :data:`~ragmark.testset.checks.MIN_QUOTE_CHARS` characters: a passage that is a
    document with its title before it, as RAGAS's generator writes them, is about that
    document; ``corpus``: id -> its text normalised)."""
    if sample.truth.doc_grades:
        return {d for d, g in sample.truth.doc_grades.items() if g > 0}
    if sample.truth.sections:
        return {d for d, _ in sample.truth.sections}
    found = set()
    for passage in sample.truth.passages:
        needle = normalise(passage)
        found |= {d for d, text in corpus.items()
                  if normalised_contains(needle, text, MIN_QUOTE_CHARS)}
    return found


def kmeans(vectors: NDArray[np.float32], k: int, seed: int = 0, rounds: int = 50
           ) -> NDArray[np.int64]:
    """Each row's cluster among ``k`` (spherical k-means, k-means++ seeding, a fixed
    seed): the rows are unit vectors, a centre is the normalised mean of its rows."""
    n = len(vectors)
    k = max(1, min(k, n))
    rng = np.random.default_rng(seed)
    centres = [vectors[int(rng.choice(n))]]
    for _ in range(1, k):  # k-means++: far rows are likelier centres
        dist = np.clip(1.0 - np.max(vectors @ np.array(centres).T, axis=1), 0.0, None)
        total = float(dist.sum())
        pick = int(rng.choice(n)) if total == 0 else int(rng.choice(n, p=dist / total))
        centres.append(vectors[pick])
    c = np.array(centres, dtype=np.float64)
    labels = np.full(n, -1, dtype=np.int64)
    for _ in range(rounds):
        new = np.argmax(vectors @ c.T, axis=1).astype(np.int64)
        if np.array_equal(new, labels):
            break
        labels = new
        for j in range(k):
            rows = vectors[labels == j]
            if len(rows):
                mean = rows.mean(axis=0)
                c[j] = mean / (np.linalg.norm(mean) or 1.0)
    return labels


def coverage(samples: Sequence[Sample], documents: Sequence[Document],
             labels: Sequence[int] | None, shown: int = 5) -> dict[str, Any]:
    """How much of the corpus the questions are about: documents and clusters covered,
    and the largest clusters no question is about (their size and first documents)."""
    texts = {d.id: normalise(d.text) for d in documents}
    about: set[str] = set()
    for s in samples:
        about |= documents_about(s, texts)
    about &= set(texts)
    out: dict[str, Any] = {"documents": len(texts), "documents_covered": len(about),
                           "uncovered_documents": 1 - len(about) / len(texts)
                           if texts else None}
    if labels is None:
        return out
    sizes = Counter(int(x) for x in labels)
    hit = {int(x) for d, x in zip(documents, labels, strict=True) if d.id in about}
    empty = sorted((c for c in sizes if c not in hit), key=lambda c: (-sizes[c], c))
    out.update(clusters=len(sizes), clusters_covered=len(hit),
               uncovered_clusters=1 - len(hit) / len(sizes),
               largest_uncovered=[{
                   "cluster": c, "documents": sizes[c],
                   "examples": [_title(d) for d, x in zip(documents, labels, strict=True)
                                if int(x) == c][:3]} for c in empty[:shown]])
    return out


def _title(d: Document) -> str:
    """A document as a person recognises it: its title, else its first words."""
    return f"{d.id}: " + (d.title or " ".join(d.text.split()[:10]))


def spread(samples: Sequence[Sample]) -> dict[str, Any]:
    """The questions' types (the set's ``type`` / ``question_type`` field), lengths in
    words (min, median, max) and answerability (an expected answer, a ground truth,
    marked unanswerable)."""
    lengths = sorted(len(s.question.split()) for s in samples)
    types = Counter(str(s.extra.get("type") or s.extra.get("question_type") or "unstated")
                    for s in samples)
    return {"questions": len(samples), "types": dict(types.most_common()),
            "length_words": {"min": lengths[0], "median": float(np.median(lengths)),
                             "max": lengths[-1]} if lengths else None,
            "with_expected_answer": sum(bool(s.expected_answer) for s in samples),
            "with_ground_truth": sum(s.truth.kind != "none" for s in samples),
            "unanswerable": sum(not s.answerable for s in samples)}
