"""How a retrieved item gets its relevance grade (SPEC section 3). Pure.

Ground truth is a set of *targets*, each with a grade:
- ids / file names: a target per relevant document id; a chunk of that document matches;
- sections: a target per (document, section); a chunk lying in that section, or a chunk
  not tied to one section (a whole document), matches;
- passages: a target per ground-truth passage; a chunk matches when, after lower-casing
  and collapsing white space, the shorter of the two texts is contained in the longer
  and has at least 20 characters (the ``contains`` rule, the default); with the
  ``similarity:T`` rule (RAGAS's non-LLM context recall and precision) when their string
  similarity, 1 - the normalised Levenshtein distance of the texts as given, is at
  least T.

Rankings are judged per chunk or per document (a document ranks at its best chunk).
Recall and the gains of nDCG/MAP count each target once: an item "reaches" only the
targets no earlier item reached; precision counts every item that matches a target.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ragmark.metrics.graded import Graded
from ragmark.text import normalise
from ragmark.types import Chunk, GroundTruth

UNITS = ("chunk", "document")
MIN_MATCH_CHARS = 20
CONTAINS = "contains"
RULES = "contains, or similarity:T with T in (0, 1] (e.g. similarity:0.5, as RAGAS's rule)"


def match_threshold(rule: str) -> float | None:
    """The similarity threshold of a context match rule (None: ``contains``); a
    ValueError for a rule that is neither."""
    if rule == CONTAINS:
        return None
    name, _, value = rule.partition(":")
    try:
        t = float(value)
    except ValueError:
        t = -1.0
    if name.strip() != "similarity" or not 0 < t <= 1:
        raise ValueError(f"context match rule {rule!r}: expected {RULES}")
    return t


def similarity(a: str, b: str) -> float:
    """1 - the normalised Levenshtein distance of two texts (rapidfuzz's, as RAGAS's
    ``NonLLMStringSimilarity`` computes it)."""
    try:
        from rapidfuzz.distance import Levenshtein
    except ImportError:
        from ragmark.errors import MissingExtraError

        raise MissingExtraError("rapidfuzz", "match") from None
    return float(1.0 - Levenshtein.normalized_distance(a, b))


def too_short(passage: str, min_chars: int = MIN_MATCH_CHARS) -> bool:
    """A ground-truth passage that no chunk can match: under ``min_chars`` characters
    once lower-cased with white space collapsed."""
    return len(normalise(passage)) < min_chars


def unmatchable(truth: GroundTruth, min_chars: int = MIN_MATCH_CHARS,
                rule: str = CONTAINS) -> str | None:
    """Why no retrieved chunk can ever match this ground truth (every passage too
    short for the ``contains`` rule), or None when one can."""
    if rule == CONTAINS and truth.passages and all(too_short(p, min_chars) for p in truth.passages):
        return (f"every ground-truth passage is under {min_chars} characters, so none can "
                f"match (the containment rule needs {min_chars})")
    return None


@dataclass(frozen=True, slots=True)
class Match:
    """Why an item is relevant: the targets it matches, their best grade, the rule used."""

    targets: tuple[str, ...]
    grade: int
    rule: str  # "id" | "section" | "text" | "similarity"


@dataclass(frozen=True, slots=True)
class GradedItem:
    """One ranked item (a chunk, or a document at its best chunk) and its match."""

    rank: int
    id: str
    doc_id: str
    score: float
    match: Match | None
    new_targets: tuple[str, ...] = ()


class Matcher:
    """Matches chunks against one question's ground truth."""

    def __init__(self, truth: GroundTruth, min_chars: int = MIN_MATCH_CHARS,
                 rule: str = CONTAINS) -> None:
        self.truth = truth
        self.min_chars = min_chars
        self.threshold = match_threshold(rule)
        self._passages = [normalise(p) for p in truth.passages]
        self._sections: dict[str, set[int]] = {}
        for d, s in truth.sections:
            self._sections.setdefault(d, set()).add(s)

    def target_grades(self) -> dict[str, int]:
        """Every relevant target (grade > 0) of the question with its grade."""
        t = self.truth
        if t.passages:
            return {f"passage {i + 1}": 1 for i in range(len(t.passages))}
        if t.sections:
            return {f"{d} section {s}": 1 for d, s in t.sections}
        return {d: g for d, g in t.doc_grades.items() if g > 0}

    def match(self, chunk: Chunk) -> Match | None:
        t = self.truth
        if t.passages and self.threshold is not None:
            found = tuple(f"passage {i + 1}" for i, p in enumerate(t.passages)
                          if similarity(chunk.text, p) >= self.threshold)
            return Match(found, 1, "similarity") if found else None
        if t.passages:
            text = normalise(chunk.text)
            found = tuple(
                f"passage {i + 1}" for i, p in enumerate(self._passages) if self._contains(text, p)
            )
            return Match(found, 1, "text") if found else None
        if t.sections:
            secs = self._sections.get(chunk.doc_id)
            if not secs:
                return None
            hit = sorted(secs) if chunk.section is None else sorted(secs & {chunk.section})
            if not hit:
                return None
            return Match(tuple(f"{chunk.doc_id} section {s}" for s in hit), 1, "section")
        g = t.doc_grades.get(chunk.doc_id, 0)
        return Match((chunk.doc_id,), g, "id") if g > 0 else None

    def _contains(self, a: str, b: str) -> bool:
        short, long_ = (a, b) if len(a) <= len(b) else (b, a)
        return len(short) >= self.min_chars and short in long_


def trec_order(ids: Sequence[str], scores: ArrayLike) -> NDArray[np.intp]:
    """Positions of ``ids`` (distinct) in trec_eval's order: float32 score descending,
    then id descending. The one ranking order of ragmark: matching, fusion, the TREC
    files read and written.

    >>> trec_order(["a", "b", "c"], [1.0, 2.0, 1.0]).tolist()
    [1, 2, 0]
    """
    if len(ids) == 0:
        return np.zeros(0, dtype=np.intp)
    s32 = np.asarray(scores, dtype=np.float32)
    # the ids are distinct, so the ascending (score, id) order reversed is exactly the
    # descending (score, id) order
    return np.lexsort((np.asarray(ids, dtype=str), s32))[::-1]


def grade_ranking(
    truth: GroundTruth,
    chunks: Sequence[Chunk],
    scores: Sequence[float],
    unit: str = "chunk",
    matcher: Matcher | None = None,
) -> list[GradedItem]:
    """Rank retrieved chunks (trec_eval order) and grade each item against the truth.

    With ``unit="document"`` the chunks collapse to their documents, each at its best
    chunk's score; a document matches the union of its retrieved chunks' targets.
    """
    if unit not in UNITS:
        raise ValueError(f"unit must be one of {UNITS}, got {unit!r}")
    m = matcher or Matcher(truth)
    items: list[tuple[str, str, float, Match | None]] = []
    if unit == "chunk":
        for c, s in zip(chunks, scores, strict=True):
            items.append((c.id, c.doc_id, float(s), m.match(c)))
    else:
        best: dict[str, float] = {}
        found: dict[str, dict[str, int]] = {}
        rules: dict[str, str] = {}
        for c, s in zip(chunks, scores, strict=True):
            if c.doc_id not in best or np.float32(s) > np.float32(best[c.doc_id]):
                best[c.doc_id] = float(s)
            mc = m.match(c)
            tg = found.setdefault(c.doc_id, {})
            if mc is not None:
                rules[c.doc_id] = mc.rule
                for t in mc.targets:
                    tg[t] = max(tg.get(t, 0), mc.grade)
        for d, s in best.items():
            tg = found[d]
            mt = Match(tuple(tg), max(tg.values()), rules[d]) if tg else None
            items.append((d, d, s, mt))
    order = trec_order([i[0] for i in items], [i[2] for i in items])
    out: list[GradedItem] = []
    seen: set[str] = set()
    for rank, pos in enumerate(order, start=1):
        item_id, doc_id, score, mt = items[pos]
        new: tuple[str, ...] = ()
        if mt is not None:
            new = tuple(t for t in mt.targets if t not in seen)
            seen.update(new)
        out.append(GradedItem(rank, item_id, doc_id, score, mt, new))
    return out


def to_graded(
    qids: Sequence[str],
    target_grades: Sequence[dict[str, int]],
    rankings: Sequence[Sequence[GradedItem]],
    truths: Sequence[GroundTruth] | None = None,
) -> Graded:
    """Flatten judged rankings into the arrays the metric engine works on (with the
    ground truths, also the retrieved items their qrels judge not relevant)."""
    hq: list[int] = []
    hr: list[int] = []
    hn: list[int] = []
    hg: list[float] = []
    nq: list[int] = []
    nr: list[int] = []
    n_nonrel: list[int] = []
    for qi, (grades, ranking) in enumerate(zip(target_grades, rankings, strict=True)):
        judged = truths[qi].doc_grades if truths is not None else {}
        n_nonrel.append(sum(1 for g in judged.values() if g == 0))
        for it in ranking:
            if it.match is None:
                if judged.get(it.doc_id) == 0:  # judged not relevant (negative: unjudged)
                    nq.append(qi)
                    nr.append(it.rank)
                continue
            hq.append(qi)
            hr.append(it.rank)
            hn.append(len(it.new_targets))
            hg.append(float(sum(grades.get(t, 0) for t in it.new_targets)))
    return Graded.build(qids, [list(g.values()) for g in target_grades], hq, hr, hn, hg,
                        nq, nr, n_nonrel)
