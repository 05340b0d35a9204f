"""Chunkers: exact boundaries, coverage, sections, ids, parameter validation."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmark.chunking import (
    Chunker,
    ChunkerConfigError,
    FixedChunker,
    SentenceChunker,
    WholeChunker,
    chunk_corpus,
    fixed_spans,
    sentence_spans,
)
from ragmark.errors import ConfigError
from ragmark.types import Chunk, Document


def texts(text: str, spans: list[tuple[int, int]]) -> list[str]:
    return [text[s:e] for s, e in spans]


# --- whole ---------------------------------------------------------------------------


def test_whole_chunker() -> None:
    doc = Document("a.txt", "Body text.", title="Title", sections=("x", "y"))
    assert WholeChunker().chunk(doc) == [Chunk("a.txt", "a.txt", "Title\nBody text.", None, 0)]
    assert WholeChunker().chunk(Document("b", "Only body")) == [Chunk("b", "b", "Only body")]
    assert WholeChunker().name == "whole"


# --- fixed ---------------------------------------------------------------------------


def test_fixed_exact_boundaries_no_overlap() -> None:
    t = "the quick brown fox jumps over the lazy dog"
    assert fixed_spans(t, 20, 0) == [(0, 20), (20, 40), (40, 43)]


def test_fixed_moves_end_back_to_whitespace_in_last_tenth() -> None:
    # size 20: the final 10% is indices 18..19 of the window; the space at 18 is used.
    t = "abcdefghijklmnopqr stuvw"
    assert texts(t, fixed_spans(t, 20, 0)) == ["abcdefghijklmnopqr ", "stuvw"]
    # A space at 17 is outside the final 10%: the word is cut.
    t = "abcdefghijklmnopq rstuvw"
    assert texts(t, fixed_spans(t, 20, 0)) == ["abcdefghijklmnopq rs", "tuvw"]
    # No white space at all: hard cuts every 20 characters.
    t = "x" * 45
    assert fixed_spans(t, 20, 0) == [(0, 20), (20, 40), (40, 45)]


def test_fixed_overlap_exact() -> None:
    t = "x" * 25
    assert fixed_spans(t, 10, 3) == [(0, 10), (7, 17), (14, 24), (21, 25)]
    t = "aaaa bbbb cccc dddd eeee ffff"
    # Overlap 3 from end 10 gives start 7, inside "bbbb": moved to the next word, 10.
    assert texts(t, fixed_spans(t, 10, 3)) == ["aaaa bbbb ", "cccc dddd ", "eeee ffff"]
    # Overlap 6 from end 10 gives start 4, a space (a word boundary): it stays.
    assert fixed_spans(t, 10, 6)[:2] == [(0, 10), (4, 14)]


def test_fixed_last_window_ends_at_text_end_and_no_empty_chunks() -> None:
    t = "word " * 30 + "   \n\n   "
    spans = fixed_spans(t, 50, 10)
    assert spans[-1][1] == len(t) or t[spans[-1][1] :].isspace()
    assert all(t[s:e].strip() for s, e in spans)
    assert fixed_spans("", 10, 0) == []
    assert fixed_spans("   \n ", 10, 2) == []
    assert fixed_spans("a" + " " * 30, 10, 0) == [(0, 10)]


@settings(max_examples=300)
@given(
    text=st.text(alphabet=st.sampled_from(list("abc de\n.")), max_size=300),
    size=st.integers(1, 60),
    data=st.data(),
)
def test_fixed_coverage_property(text: str, size: int, data: st.DataObject) -> None:
    overlap = data.draw(st.integers(0, size - 1))
    doc = Document("d", text)
    chunks = FixedChunker(size, overlap).chunk(doc)
    covered: set[int] = set()
    prev_start = -1
    for n, c in enumerate(chunks):
        assert c.id == f"d#{n}" and c.doc_id == "d" and c.section is None
        assert c.text == text[c.start : c.start + len(c.text)]
        assert 0 < len(c.text) <= size and c.text.strip()
        assert c.start > prev_start
        prev_start = c.start
        covered.update(range(c.start, c.start + len(c.text)))
    # Every character is covered, except white space that only a dropped
    # whitespace-only window would have held.
    assert {i for i, ch in enumerate(text) if not ch.isspace()} <= covered
    if chunks:
        end = chunks[-1].start + len(chunks[-1].text)
        assert end == len(text) or text[end:].isspace()


def test_fixed_defaults_and_validation() -> None:
    c = FixedChunker()
    assert (c.size, c.overlap, c.name) == (500, 50, "fixed")
    for size, overlap in [(10, 10), (10, 11), (10, -1), (0, 0), (-5, 0)]:
        with pytest.raises(ChunkerConfigError) as err:
            FixedChunker(size, overlap)
        assert isinstance(err.value, ValueError) and isinstance(err.value, ConfigError)
    with pytest.raises(ValueError, match="overlap must be >= 0 and smaller than the chunk size"):
        FixedChunker(100, 100)
    with pytest.raises(ValueError, match="positive integer"):
        FixedChunker(0, 0)


def test_sections_chunked_separately() -> None:
    doc = Document(
        "paper",
        "alpha beta gamma\n\ndelta epsilon",
        sections=("alpha beta gamma", "delta epsilon"),
    )
    chunks = FixedChunker(11, 0).chunk(doc)
    assert chunks == [
        Chunk("paper#0", "paper", "alpha beta ", 0, 0),
        Chunk("paper#1", "paper", "gamma", 0, 11),
        Chunk("paper#2", "paper", "delta epsil", 1, 0),  # no space in the last 10%
        Chunk("paper#3", "paper", "on", 1, 11),
    ]
    s = SentenceChunker(100).chunk(doc)
    assert [(c.id, c.section, c.start, c.text) for c in s] == [
        ("paper#0", 0, 0, "alpha beta gamma"),
        ("paper#1", 1, 0, "delta epsilon"),
    ]


# --- sentence ------------------------------------------------------------------------


def test_sentence_packing_exact() -> None:
    t = "One two. Three four. Five six seven. Eight."
    assert texts(t, sentence_spans(t, 20)) == ["One two. Three four.", "Five six seven.", "Eight."]
    assert texts(t, sentence_spans(t, 100)) == [t]
    assert texts(t, sentence_spans(t, 15)) == [
        "One two.", "Three four.", "Five six seven.", "Eight.",
    ]  # fmt: skip


def test_sentence_longer_than_size_is_split_like_fixed() -> None:
    t = "Short. A sentence that is far longer than the twenty char limit. End."
    assert texts(t, sentence_spans(t, 20)) == [
        "Short.", "A sentence that is ", "far longer than the ", "twenty char limit.", "End.",
    ]  # fmt: skip
    t = "Short. This sentence is much longer than twenty characters. End."
    assert texts(t, sentence_spans(t, 20)) == [
        "Short.", "This sentence is muc", "h longer than twenty", " characters.", "End.",
    ]  # fmt: skip


def test_sentence_chunker_ids_and_validation() -> None:
    doc = Document("d", "  A b. C d.\n\nE f.  ")
    chunks = SentenceChunker(6).chunk(doc)
    assert chunks == [Chunk("d#0", "d", "A b.", None, 2), Chunk("d#1", "d", "C d.", None, 7),
                      Chunk("d#2", "d", "E f.", None, 13)]  # fmt: skip
    assert SentenceChunker().size == 500 and SentenceChunker().name == "sentence"
    with pytest.raises(ChunkerConfigError):
        SentenceChunker(0)
    assert SentenceChunker().chunk(Document("e", " \n ")) == []


@given(
    text=st.text(alphabet=st.sampled_from(list("ab Ab. 1\n?")), max_size=200),
    size=st.integers(1, 40),
)
def test_sentence_coverage_property(text: str, size: int) -> None:
    chunks = SentenceChunker(size).chunk(Document("d", text))
    covered: set[int] = set()
    for c in chunks:
        assert c.text == text[c.start : c.start + len(c.text)]
        assert 0 < len(c.text) <= size and c.text.strip()
        covered.update(range(c.start, c.start + len(c.text)))
    assert {i for i, ch in enumerate(text) if not ch.isspace()} <= covered


# --- protocol and corpus -------------------------------------------------------------


def test_protocol_and_chunk_corpus() -> None:
    chunkers: list[Chunker] = [WholeChunker(), FixedChunker(), SentenceChunker()]
    assert all(isinstance(c, Chunker) for c in chunkers)
    docs = [Document("a", "x " * 30), Document("b", "y")]
    out = chunk_corpus(docs, FixedChunker(20, 0))
    assert [c.id for c in out] == ["a#0", "a#1", "a#2", "b#0"]
    assert chunk_corpus([], FixedChunker()) == []
