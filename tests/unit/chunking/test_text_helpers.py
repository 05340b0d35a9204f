"""ragmark.text: normalise, tokenize, stop-words, sentences, containment, truncation."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragmark.text import (
    STOPWORDS,
    contains_normalised,
    content_tokens,
    normalise,
    split_sentences,
    tokenize,
    truncate_words,
)


def sentences(text: str) -> list[str]:
    return [text[s:e] for s, e in split_sentences(text)]


def test_normalise() -> None:
    assert normalise("  Hybrid\n\n\tSEARCH\u00a0 fuses  ") == "hybrid search fuses"
    assert normalise("") == ""
    assert normalise(" \n ") == ""


def test_tokenize() -> None:
    assert tokenize("BM25's top-k, état_2 (nDCG@10)") == [
        "bm25", "s", "top", "k", "état", "2", "ndcg", "10",
    ]  # fmt: skip
    assert tokenize("Über 3.5 Größe") == ["über", "3", "5", "größe"]
    assert tokenize("__ -- !!") == []


def test_stopwords() -> None:
    assert 120 <= len(STOPWORDS) <= 250
    assert {"the", "a", "of", "is", "and", "which"} <= STOPWORDS
    assert not {"retriever", "chunk", "recall", "bm25"} & STOPWORDS
    assert all(w == w.lower() and w.isalpha() for w in STOPWORDS)
    assert content_tokens("The retriever is a part of the pipeline") == [
        "retriever", "part", "pipeline",
    ]  # fmt: skip


def test_split_sentences_basic() -> None:
    t = 'First one. Second one! Third one? 4 is a number. "Quoted" too.'
    assert sentences(t) == [
        "First one.", "Second one!", "Third one?", "4 is a number.", '"Quoted" too.',
    ]  # fmt: skip
    assert split_sentences(t)[0] == (0, 10)


def test_split_sentences_abbreviations_and_numbers() -> None:
    t = (
        "See Fig. 3 and Eq. 2. Smith et al. Showed it, e.g. Here. Dr. Who came, i.e. Later. "
        "It costs 3.50 dollars. J. R. Tolkien wrote No. 5 of them. The answer is no. "
        "Use the top k. Then stop."
    )
    assert sentences(t) == [
        "See Fig. 3 and Eq. 2.",
        "Smith et al. Showed it, e.g. Here.",
        "Dr. Who came, i.e. Later.",
        "It costs 3.50 dollars.",
        "J. R. Tolkien wrote No. 5 of them.",
        "The answer is no.",
        "Use the top k.",
        "Then stop.",
    ]


def test_split_sentences_no_split_before_lowercase_or_without_space() -> None:
    assert sentences("version 2.0 is out. and then more.") == ["version 2.0 is out. and then more."]
    assert sentences("end.Next starts") == ["end.Next starts"]


def test_split_sentences_blank_lines_and_closers() -> None:
    t = '  Title line\n\n  body without stop\n \nHe said "Go." Then (it ended.) Fine...  Ok'
    assert sentences(t) == [
        "Title line", "body without stop", 'He said "Go."', "Then (it ended.)", "Fine...",
        "Ok",
    ]  # fmt: skip


def test_split_sentences_empty() -> None:
    assert split_sentences("") == []
    assert split_sentences(" \n\n ") == []


@given(st.text(alphabet=st.sampled_from(list("ab .!?\n\"'A1(")), max_size=80))
def test_split_sentences_partition(text: str) -> None:
    spans = split_sentences(text)
    covered: set[int] = set()
    prev_end = 0
    for s, e in spans:
        assert prev_end <= s < e <= len(text)
        assert not text[s].isspace() and not text[e - 1].isspace()
        covered.update(range(s, e))
        prev_end = e
    assert {i for i, c in enumerate(text) if not c.isspace()} <= covered


def test_contains_normalised() -> None:
    long = "Reciprocal rank fusion adds 1 / (k + rank) over the lists."
    assert contains_normalised("RECIPROCAL  rank\nfusion adds", long)
    assert contains_normalised(long, "reciprocal rank fusion adds")  # order does not matter
    assert not contains_normalised("rank fusion", long)  # 11 characters < 20
    assert contains_normalised("rank fusion", long, min_len=5)
    assert not contains_normalised("reciprocal rank fusion sums", long)
    assert contains_normalised("x" * 20, "x" * 20)


def test_truncate_words() -> None:
    assert truncate_words("dense retrieval uses embeddings", 20) == "dense retrieval uses"
    assert truncate_words("dense retrieval uses embeddings", 21) == "dense retrieval uses"
    assert truncate_words("dense retrieval uses embeddings", 19) == "dense retrieval"
    assert truncate_words("short", 10) == "short"
    assert truncate_words("abcdefghij klm", 5) == "abcde"
    assert truncate_words("abc", 0) == ""
    with pytest.raises(ValueError, match="max_chars"):
        truncate_words("abc", -1)
