"""Extractive generators: exact outputs."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragmark.generation import Generator, SentencesGenerator, Top1Generator
from ragmark.types import Chunk


def ctx(*texts: str) -> list[Chunk]:
    return [Chunk(f"d{i}#0", f"d{i}", t) for i, t in enumerate(texts)]


QUESTION = "How does hybrid search combine sparse and dense retrieval?"
CONTEXTS = ctx(
    "BM25 is a sparse retriever. It weights rare terms. Dense retrieval uses embeddings.",
    "Hybrid search fuses sparse and dense rankings. Reciprocal rank fusion uses k = 60.",
    "Unrelated text about cooking.",
)


def test_protocol() -> None:
    assert isinstance(Top1Generator(), Generator)
    assert isinstance(SentencesGenerator(), Generator)
    assert Top1Generator().name == "top1" and SentencesGenerator().name == "sentences"
    assert (SentencesGenerator().max_chars, SentencesGenerator().top_n) == (300, 3)


def test_top1() -> None:
    contexts = ctx("  Hybrid   search\nfuses BM25 and dense rankings. ", "second context")
    assert Top1Generator().generate("q", contexts) == "Hybrid search fuses BM25 and dense rankings."
    assert Top1Generator(20).generate("q", contexts) == "Hybrid search fuses"
    assert Top1Generator(19).generate("q", contexts) == "Hybrid search fuses"
    assert Top1Generator(18).generate("q", contexts) == "Hybrid search"
    assert Top1Generator(4).generate("q", contexts) == "Hybr"  # one long word is cut
    assert Top1Generator().generate("q", []) == ""


def test_validation() -> None:
    for bad in (0, -1):
        with pytest.raises(ValueError, match="max_chars"):
            Top1Generator(bad)
        with pytest.raises(ValueError, match="max_chars"):
            SentencesGenerator(max_chars=bad)
        with pytest.raises(ValueError, match="top_n"):
            SentencesGenerator(top_n=bad)


def test_sentences_best_first_output_in_original_order() -> None:
    # Scores: "Hybrid search fuses..." 4, "Dense retrieval..." 2, "BM25 is..." 1, others 0.
    assert SentencesGenerator().generate(QUESTION, CONTEXTS) == (
        "BM25 is a sparse retriever. Dense retrieval uses embeddings. "
        "Hybrid search fuses sparse and dense rankings."
    )


def test_sentences_budget() -> None:
    # 46 + 1 + 32 = 79 characters fit in 80; the third sentence would not.
    assert SentencesGenerator(max_chars=80).generate(QUESTION, CONTEXTS) == (
        "Dense retrieval uses embeddings. Hybrid search fuses sparse and dense rankings."
    )
    assert SentencesGenerator(max_chars=78).generate(QUESTION, CONTEXTS) == (
        "Hybrid search fuses sparse and dense rankings."
    )
    # The best sentence alone is too long: it is cut at a word boundary.
    assert SentencesGenerator(max_chars=20).generate(QUESTION, CONTEXTS) == "Hybrid search fuses"


def test_sentences_top_n() -> None:
    assert SentencesGenerator(top_n=1).generate(QUESTION, CONTEXTS) == (
        "BM25 is a sparse retriever. Dense retrieval uses embeddings."
    )


def test_sentences_ties_prefer_better_rank_then_earlier_position() -> None:
    contexts = ctx("Zeta alpha. Alpha first.", "Alpha second.")
    assert SentencesGenerator(max_chars=12).generate("alpha?", contexts) == "Zeta alpha."
    assert SentencesGenerator(max_chars=24).generate("alpha?", contexts) == (
        "Zeta alpha. Alpha first."
    )
    assert SentencesGenerator(max_chars=100).generate("alpha?", contexts[::-1]) == (
        "Alpha second. Zeta alpha. Alpha first."
    )


def test_sentences_fallback_to_top1() -> None:
    assert SentencesGenerator().generate("What about kangaroos?", CONTEXTS) == (
        "BM25 is a sparse retriever. It weights rare terms. Dense retrieval uses embeddings."
    )
    assert SentencesGenerator(max_chars=30).generate("the of", CONTEXTS) == (
        "BM25 is a sparse retriever. It"
    )
    assert SentencesGenerator().generate(QUESTION, []) == ""


def test_sentences_overlapping_chunks() -> None:
    contexts = ctx(
        "Dense retrieval uses embeddings. Hybrid search fuses",
        "Hybrid search fuses sparse and dense rankings.",
        "Hybrid search fuses sparse and dense rankings.",
    )
    assert SentencesGenerator().generate(QUESTION, contexts) == (
        "Dense retrieval uses embeddings. Hybrid search fuses sparse and dense rankings."
    )


@given(
    question=st.text(alphabet=st.sampled_from(list("ab cd.A\n")), max_size=20),
    texts=st.lists(st.text(alphabet=st.sampled_from(list("ab cd.A\n?")), max_size=60), max_size=4),
    max_chars=st.integers(1, 80),
)
def test_generators_respect_max_chars_and_are_deterministic(
    question: str, texts: list[str], max_chars: int
) -> None:
    contexts = ctx(*texts)
    for gen in (Top1Generator(max_chars), SentencesGenerator(max_chars=max_chars)):
        out = gen.generate(question, contexts)
        assert len(out) <= max_chars
        assert out == out.strip()
        assert out == gen.generate(question, contexts)
