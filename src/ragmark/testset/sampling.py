"""Which passages each question is written from: drawn from the corpus with a seed (pure).

Every question type walks the documents in its own seeded order, one passage per
document per pass (a document's passages in an order seeded by its id), so the questions
spread over the corpus before any document is used twice. Given the corpus's clusters
(a label a document), a pass takes one document of each cluster in turn (clusters and
their documents in seeded orders), so the first questions spread over the clusters
before any cluster is used twice. Documents are chunked only when
first drawn. A two-document question pairs its passage with the most similar one (by
shared words) among a seeded sample of passages from other documents.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ragmark.chunking import Chunker
from ragmark.testset.checks import jaccard
from ragmark.testset.prompts import DOCUMENTS
from ragmark.text import content_tokens, normalise, truncate_words
from ragmark.types import Corpus

MIN_PASSAGE_CHARS = 80
"""Passages shorter than this (normalised) are too thin to write a question from."""

PARTNER_POOL = 16
"""How many passages of other documents are compared to find a partner."""


@dataclass(frozen=True)
class Passage:
    """A passage a question is written from: its document (id and position in the
    corpus), its number among the document's chunks, and its text (cut to the limit)."""

    doc_id: str
    doc: int
    chunk: int
    text: str

    @property
    def key(self) -> tuple[int, int]:
        return (self.doc, self.chunk)


class Sampler:
    """Draws the source passages of each question type, the same for the same seed."""

    def __init__(self, corpus: Corpus, chunker: Chunker, seed: int, max_chars: int,
                 clusters: Sequence[int] | None = None) -> None:
        self.documents = corpus.documents
        self.clusters = None if clusters is None else list(clusters)
        self.chunker = chunker
        self.seed = seed
        self.max_chars = max_chars
        self._passages: dict[int, list[Passage]] = {}
        self._words: dict[tuple[int, int], frozenset[str]] = {}
        self._streams: dict[str, Iterator[tuple[Passage, ...]]] = {}

    def passages(self, doc: int) -> list[Passage]:
        """The usable passages of document ``doc``, in its seeded order."""
        got = self._passages.get(doc)
        if got is None:
            d = self.documents[doc]
            got = []
            for n, chunk in enumerate(self.chunker.chunk(d)):
                text = truncate_words(chunk.text, self.max_chars)
                if len(normalise(text)) >= MIN_PASSAGE_CHARS:
                    got.append(Passage(d.id, doc, n, text))
            random.Random(f"{self.seed}/doc/{d.id}").shuffle(got)
            self._passages[doc] = got
        return got

    def draw(self, qtype: str) -> tuple[Passage, ...] | None:
        """The next sources for a question of ``qtype`` (one or two passages), or None
        when the corpus has no more."""
        stream = self._streams.get(qtype)
        if stream is None:
            stream = self._pairs(qtype) if DOCUMENTS[qtype] == 2 else self._singles(qtype)
            self._streams[qtype] = stream
        return next(stream, None)

    def order(self, qtype: str) -> list[int]:
        """The documents in the order ``qtype`` walks them: seeded, and, given clusters,
        one document of each cluster in turn."""
        rng = random.Random(f"{self.seed}/type/{qtype}")
        order = list(range(len(self.documents)))
        rng.shuffle(order)
        if self.clusters is None:
            return order
        groups: dict[int, list[int]] = {}
        for doc in order:
            groups.setdefault(self.clusters[doc], []).append(doc)
        labels = sorted(groups)
        rng.shuffle(labels)
        out: list[int] = []
        for depth in range(max(len(g) for g in groups.values())):
            out += [groups[c][depth] for c in labels if depth < len(groups[c])]
        return out

    def _anchors(self, qtype: str) -> Iterator[Passage]:
        order = self.order(qtype)
        depth = 0
        while True:
            more = False
            for doc in order:
                ps = self.passages(doc)
                if depth < len(ps):
                    more = True
                    yield ps[depth]
            if not more:
                return
            depth += 1

    def _singles(self, qtype: str) -> Iterator[tuple[Passage, ...]]:
        for p in self._anchors(qtype):
            yield (p,)

    def _pairs(self, qtype: str) -> Iterator[tuple[Passage, ...]]:
        rng = random.Random(f"{self.seed}/partner/{qtype}")
        used: set[frozenset[tuple[int, int]]] = set()
        for a in self._anchors(qtype):
            b = self._partner(a, rng, used)
            if b is not None:
                used.add(frozenset((a.key, b.key)))
                yield (a, b)

    def _partner(
        self, a: Passage, rng: random.Random, used: set[frozenset[tuple[int, int]]]
    ) -> Passage | None:
        n = len(self.documents)
        docs = [d for d in rng.sample(range(n), min(n, PARTNER_POOL + 1)) if d != a.doc]
        pool: list[Passage] = []
        for d in docs[:PARTNER_POOL]:
            ps = self.passages(d)
            if ps:
                pool.append(ps[rng.randrange(len(ps))])
        mine = self._words_of(a)
        ranked = sorted(
            range(len(pool)), key=lambda i: (-jaccard(mine, self._words_of(pool[i])), i)
        )
        for i in ranked:
            if frozenset((a.key, pool[i].key)) not in used:
                return pool[i]
        return None

    def _words_of(self, p: Passage) -> frozenset[str]:
        words = self._words.get(p.key)
        if words is None:
            words = frozenset(content_tokens(p.text))
            self._words[p.key] = words
        return words
