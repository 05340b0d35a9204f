"""The checks a generated question must pass (pure): its quotes really occur in their
sources, each source quoted, it is not a near-duplicate of a kept question, its type
still has room.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import product
from typing import NamedTuple

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
    got = check_quotes(quotes, sources)
    return None if isinstance(got, QuoteProblem) else got


class QuoteProblem(NamedTuple):
    """What :func:`check_quotes` found wrong: ``code`` for the program
    ("quote_too_short", "quote_not_in_source"), ``message`` for the model asked again."""

    code: str
    message: str


def check_quotes(quotes: Sequence[str], sources: Sequence[str]) -> list[str] | QuoteProblem:
    """The spans of ``sources`` that ``quotes`` reproduce, in source order (the rule of
    :func:`match_quotes`), or the first thing wrong with them, said so that a model can
    mend it: a quote under :data:`MIN_QUOTE_CHARS`, a quote in no source, a source with
    no quote."""
    cleaned = [clean_quote(q) for q in quotes]
    for i, q in enumerate(cleaned, start=1):
        if len(normalise(q)) < MIN_QUOTE_CHARS:
            return QuoteProblem("quote_too_short", f"quote {i} ({q!r}) is under "
                                f"{MIN_QUOTE_CHARS} characters: copy a whole sentence")
    found = [{j: span for j, s in enumerate(sources)
              if (span := locate_quote(q, s)) is not None} for q in cleaned]
    for i, (q, where) in enumerate(zip(cleaned, found, strict=True), start=1):
        if not where:
            shown = q if len(q) <= 120 else q[:117] + "..."
            return QuoteProblem("quote_not_in_source", f"quote {i} ({shown!r}) is not "
                                "copied character for character from the documents: copy "
                                "a sentence exactly as it is written, changing no word")
    for pick in product(*(sorted(f) for f in found)):
        if set(pick) == set(range(len(sources))):
            order = sorted(range(len(cleaned)), key=lambda k: pick[k])
            return [found[k][pick[k]] for k in order]
    bare = next((j for j in range(len(sources)) if not any(j in f for f in found)), None)
    if bare is None:
        return QuoteProblem("quote_not_in_source", f"{len(cleaned)} quote(s) for "
                            f"{len(sources)} documents: give one quote copied from each "
                            "document, in order")
    # the 1.5B model quotes one document twice and is not mended by "document 2 has no
    # quote" alone: say where its quotes came from and how the bare one begins
    held = {j for f in found for j in f}
    whence = (f" (every quote is from document {min(held) + 1})" if len(held) == 1
              else "")
    return QuoteProblem("quote_not_in_source", f"document {bare + 1}, which begins "
                        f"{_opening(sources[bare])!r}, has no quote{whence}: give one "
                        "quote copied from each document, in order")


def _opening(text: str, words: int = 8) -> str:
    """The first ``words`` words of ``text``, with "..." when there are more.

    >>> _opening("Tarsk is a river port on the Vell, at the mouth of the Oma.", 5)
    'Tarsk is a river port ...'
    """
    parts = text.split()
    return " ".join(parts[:words]) + (" ..." if len(parts) > words else "")


_NOUN = r"(?:passages?|documents?|texts?|articles?|excerpts?|abstracts?)"
_THE = (r"(?:the|this|these|those|both|each|either) "
        r"(?:(?:two|first|second|given|provided|above|following) )?")
_SAY = (r"says?|states?|describes?|mentions?|discuss(?:es)?|reports?|suggests?|shows?|"
        r"claims?|argues?|explains?|notes?|indicates?|presents?|highlights?")
_REPORTS = f"(?:{_SAY})"
_STUDY = r"(?:study|paper|research|trial|experiment|authors|researchers|investigators)"
_FINDS = (f"(?:{_SAY}|" + r"find|found|conclude[sd]?|observe[sd]?|investigate[sd]?|"
          r"examine[sd]?|use[sd]?|measure[sd]?|propose[sd]?)")
_SOURCE_WORDS = re.compile(
    r"\b(?:(?:according to|based on|in|from|of|by|within|throughout|across|between) "
    + _THE + _NOUN + r"|" + _THE + _NOUN + " " + _REPORTS
    + r"|(?:both|two|first|second) " + _NOUN + r"|document \d"
    + r"|(?:this|these) " + _STUDY
    + r"|(?:according to|based on|in|from|of|by) the " + _STUDY + r"(?=\s*[?.,;:]|\s*$)"
    + r"|the " + _STUDY + " " + _FINDS + r")\b", re.IGNORECASE)
"""How a question points at the text it was written from: "of the passage", "according
to the text", "the passage says", "both documents", "document 2", "this study", "the
name of the study?", "what did the authors find" (not "How does BM25 rank the
documents?", which asks about documents, nor "the study drug", "the study of tides")."""


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


_A_STUDY = re.compile(_STUDY, re.IGNORECASE)


def rephrase_advice(words: str) -> str:
    """What to write instead of ``words`` (what :func:`source_reference` found), said to
    the model: a study is named by what it is about, a passage by its subject."""
    if _A_STUDY.search(words):
        return ("ask about what the study examined instead, naming it (the treatment, "
                "condition, gene or population), as someone who has not read it would")
    return "name the subject instead"


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
