"""The checks a generated question must pass (pure): its quotes really occur in their
sources, each source quoted, it is not a near-duplicate of a kept question, its type
still has room.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import product

from ragmark.text import content_tokens, normalise, tokenize

MIN_QUOTE_CHARS = 20
"""A quote must have this many characters after normalising: ``run`` matches a passage
of fewer characters to nothing (SPEC section 3)."""

DUPLICATE_JACCARD = 0.75
"""Two questions are near-duplicates when the Jaccard similarity of their word sets
(lower-cased, stop words removed) is at least this."""

DUPLICATE_COSINE = 0.9
"""Two questions whose embeddings' cosine is at least this are near-duplicates."""

_WRAPPERS = " \t\r\n\"'`\u201c\u201d\u2018\u2019\u00ab\u00bb"


def clean_quote(quote: str) -> str:
    """``quote`` without surrounding quotation marks, white space and ellipses.

    >>> clean_quote('  "...the tower was finished in 1889."  ')
    'the tower was finished in 1889.'
    """
    q = quote
    while True:
        before = q
        q = q.strip(_WRAPPERS)
        for dots in ("...", "\u2026"):
            q = q.removeprefix(dots).removesuffix(dots)
        if q == before:
            return q


def _normalised_map(text: str) -> tuple[str, list[int]]:
    """:func:`~ragmark.text.normalise` of ``text`` (character by character) and, for
    every character of it, the index in ``text`` it comes from."""
    chars: list[str] = []
    where: list[int] = []
    space = False
    for i, ch in enumerate(text):
        if ch.isspace():
            space = bool(chars)
            continue
        if space:
            chars.append(" ")
            where.append(i)
            space = False
        for c in ch.lower():
            chars.append(c)
            where.append(i)
    return "".join(chars), where


def locate_quote(quote: str, source: str) -> str | None:
    """The span of ``source`` that ``quote`` reproduces, compared lower-cased with white
    space collapsed (the containment rule of SPEC section 3, with the quote as the
    shorter side); None when it does not occur or is under :data:`MIN_QUOTE_CHARS`.

    A quote whose last character is a stop the source does not have there (the model
    closed a sentence the source goes on with: "... analysis." for "... analysis, as
    well as ...") is located without that stop.

    >>> locate_quote("hybrid SEARCH fuses\\nBM25", "In short, Hybrid  search fuses BM25 and dense.")
    'Hybrid  search fuses BM25'
    >>> locate_quote("It suits RFLP and PCR analysis.", "It suits RFLP and PCR analysis, too.")
    'It suits RFLP and PCR analysis'
    """
    needle = normalise(clean_quote(quote))
    if len(needle) < MIN_QUOTE_CHARS:
        return None
    hay, where = _normalised_map(source)
    at = hay.find(needle)
    if at < 0 and needle[-1] in ".!?;:," and len(needle) > MIN_QUOTE_CHARS:
        needle = needle[:-1].rstrip()
        at = hay.find(needle)
    if at < 0:
        return None if needle not in normalise(source) else clean_quote(quote)
    return source[where[at] : where[at + len(needle) - 1] + 1]


def match_quotes(quotes: Sequence[str], sources: Sequence[str]) -> list[str] | None:
    """Every quote located in a source, in source order (then the order given), when
    each quote occurs in some source and each source holds at least one of them; None
    otherwise. A quote found in two sources counts for the one that needs it."""
    if len(quotes) < len(sources):
        return None
    found = [{i: span for i, s in enumerate(sources)
              if (span := locate_quote(q, s)) is not None} for q in quotes]
    if not all(found):
        return None
    for pick in product(*(sorted(f) for f in found)):
        if set(pick) == set(range(len(sources))):
            order = sorted(range(len(quotes)), key=lambda k: pick[k])
            return [found[k][pick[k]] for k in order]
    return None


POINTS_AT_SOURCE = "points at its source"
_NOUN = r"(?:passages?|documents?|texts?|articles?|excerpts?|abstracts?)"
_THE = (r"(?:the|this|these|those|both|each|either) "
        r"(?:(?:two|first|second|given|provided|above|following) )?")
_REPORTS = (r"(?:says?|states?|describes?|mentions?|discuss(?:es)?|reports?|suggests?|"
            r"shows?|claims?|argues?|explains?|notes?|indicates?|presents?|highlights?)")
_SOURCE_WORDS = re.compile(
    r"\b(?:(?:according to|based on|in|from|of|by|within|throughout|across|between) "
    + _THE + _NOUN + r"|" + _THE + _NOUN + " " + _REPORTS
    + r"|(?:both|two|first|second) " + _NOUN + r"|document \d)\b", re.IGNORECASE)
"""How a question points at the text it was written from: "of the passage", "according
to the text", "the passage says", "both documents", "document 2" (not "How does BM25
rank the documents?", which asks about documents)."""


def source_reference(question: str) -> str | None:
    """The words by which ``question`` points at the text it was written from ("the
    passage", "both documents"), which someone asking a search system has not seen;
    None when it does not.

    >>> source_reference("What is the main topic of the passage?")
    'of the passage'
    >>> source_reference("How does BM25 rank the documents?") is None
    True
    """
    found = _SOURCE_WORDS.search(question)
    return None if found is None else found.group(0)


QUOTE_NOT_FOUND = "is not copied character for character from the documents"
QUOTE_MISSING = "has no quote"
QUOTE_TOO_SHORT = f"is under {MIN_QUOTE_CHARS} characters"
"""How :func:`quote_problem` words each problem (the rejection's reason is read back
from them when a re-ask did not mend it)."""


def quote_problem(quotes: Sequence[str], sources: Sequence[str]) -> str | None:
    """What is wrong with ``quotes`` as quotes of ``sources``, said so that a model can
    mend it (the first problem), or None when :func:`match_quotes` matches them."""
    cleaned = [clean_quote(q) for q in quotes]
    for i, q in enumerate(cleaned, start=1):
        if len(normalise(q)) < MIN_QUOTE_CHARS:
            return f"quote {i} ({q!r}) {QUOTE_TOO_SHORT}: copy a whole sentence"
    where = [{j for j, s in enumerate(sources) if locate_quote(q, s) is not None}
             for q in cleaned]
    for i, (q, found) in enumerate(zip(cleaned, where, strict=True), start=1):
        if not found:
            shown = q if len(q) <= 120 else q[:117] + "..."
            return (f"quote {i} ({shown!r}) {QUOTE_NOT_FOUND}: copy a sentence exactly as "
                    "it is written, changing no word")
    if match_quotes(cleaned, sources) is None:
        covered = set().union(*where)
        bare = next(j for j in range(len(sources)) if j not in covered)
        return (f"document {bare + 1} {QUOTE_MISSING}: give one quote copied from each "
                "document, in order")
    return None


def question_words(question: str) -> frozenset[str]:
    """The words compared for near-duplicates: content words, or all words when the
    question has only stop words."""
    return frozenset(content_tokens(question) or tokenize(question))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """|a ∩ b| / |a ∪ b|; 1.0 for two empty sets.

    >>> jaccard(frozenset({"tower", "height"}), frozenset({"tower", "built"}))
    0.3333333333333333
    """
    union = a | b
    return len(a & b) / len(union) if union else 1.0


def near_duplicate(words: frozenset[str], kept: Sequence[frozenset[str]]) -> int | None:
    """The index of the first kept question ``words`` nearly repeats, or None."""
    for i, other in enumerate(kept):
        if jaccard(words, other) >= DUPLICATE_JACCARD:
            return i
    return None


def quotas(size: int, types: Sequence[str]) -> dict[str, int]:
    """``size`` items shared round-robin over ``types``: the first ones get one more.

    >>> quotas(10, ["factual", "comparative", "reasoning", "summarization"])
    {'factual': 3, 'comparative': 3, 'reasoning': 2, 'summarization': 2}
    """
    n = len(types)
    return {t: size // n + (1 if i < size % n else 0) for i, t in enumerate(types)}
