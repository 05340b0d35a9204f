"""Answer metrics: hand-worked values, every missing reason, bounds."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragmark.metrics.answer import (
    combined_score,
    context_overlap,
    exact_match,
    groundedness,
    keyword_coverage,
    squad_normalise,
    token_f1,
)
from ragmark.types import Score

# --- keyword_coverage ----------------------------------------------------------------


def test_keyword_coverage_values() -> None:
    s = keyword_coverage("A retriever and a generator", ["retriever", "generator", "reranker"])
    assert s.value == 2 / 3
    assert s.details["found"] == ("retriever", "generator")
    assert s.details["missing"] == ("reranker",)
    assert keyword_coverage("BM25 Ranks", ["bm25", "RANKS"]).value == 1.0
    assert keyword_coverage("hybrid\n  search wins", ["Hybrid Search"]).value == 1.0
    assert keyword_coverage("rerankers", ["ranker"]).value == 1.0  # substring match
    assert keyword_coverage("nothing here", ["recall", "mrr"]).value == 0.0
    assert keyword_coverage("recall", ["recall", " ", "ndcg"]).value == 0.5  # blank ignored


def test_keyword_coverage_missing() -> None:
    assert keyword_coverage("", ["x"]) == Score.missing("empty answer")
    assert keyword_coverage(" \n\t", ["x"]) == Score.missing("empty answer")
    assert keyword_coverage("answer", []) == Score.missing("no expected keywords")
    assert keyword_coverage("answer", ["", "  "]) == Score.missing("no expected keywords")
    assert keyword_coverage("", []).reason == "empty answer"  # the answer is checked first


# --- context_overlap -----------------------------------------------------------------


def test_context_overlap_values() -> None:
    # tokens bm25, ranks, the, chunks; bm25 and ranks are in the context.
    assert context_overlap("BM25 ranks the chunks", "BM25 ranks documents").value == 0.5
    # Stop-words count: "the" is in the context here.
    assert context_overlap("the chunks", "the documents").value == 0.5
    # Multiplicity over the answer tokens: rank x3 found, x not found.
    assert context_overlap("rank rank rank x", "Rank").value == 0.75
    # A list of passages is joined.
    assert context_overlap("alpha beta gamma", ["alpha", "beta"]).value == 2 / 3
    assert context_overlap("Alpha, BETA!", "alpha beta").value == 1.0


def test_context_overlap_missing() -> None:
    assert context_overlap("", "ctx") == Score.missing("empty answer")
    assert context_overlap("answer", "") == Score.missing("no gold context")
    assert context_overlap("answer", []) == Score.missing("no gold context")
    assert context_overlap("answer", ["", " "]) == Score.missing("no gold context")
    assert context_overlap("!!! ...", "ctx") == Score.missing("answer has no word tokens")


# --- groundedness --------------------------------------------------------------------


def test_groundedness_values() -> None:
    s = groundedness("The reranker reorders passages", "a reranker reorders the candidates")
    assert s.value == 2 / 3
    assert s.details["ungrounded"] is False
    # Stop-words are removed from the answer only: "the" and "is" do not count.
    assert groundedness("The index is sparse", ["sparse index"]).value == 1.0
    # 1 of 11 content tokens found: 0.0909 < 0.10 -> ungrounded.
    answer = "apples bananas cherries dates eggs figs grapes hazelnuts ice juice kiwi"
    s = groundedness(answer, "apples only")
    assert s.value == 1 / 11
    assert s.details["ungrounded"] is True
    # Exactly at the threshold is grounded (the flag is value < threshold).
    s = groundedness(" ".join(answer.split()[:10]), "apples")
    assert s.value == 0.1 and s.details["ungrounded"] is False
    assert groundedness("apples bananas", "apples", threshold=0.6).details["ungrounded"] is True


def test_groundedness_missing_and_validation() -> None:
    assert groundedness("", "ctx") == Score.missing("empty answer")
    assert groundedness("   ", "ctx") == Score.missing("empty answer")
    assert groundedness("the of and it", "ctx") == Score.missing("answer has no content words")
    assert groundedness("reranker", "") == Score.missing("no retrieved context")
    assert groundedness("reranker", []) == Score.missing("no retrieved context")
    for bad in (-0.1, 1.5):
        with pytest.raises(ValueError, match="threshold"):
            groundedness("a", "b", threshold=bad)


# --- combined_score ------------------------------------------------------------------


def test_combined_score_values() -> None:
    assert combined_score(Score(1.0), Score(0.5)).value == 0.75
    assert combined_score(Score(1.0), Score(0.5), alpha=1.0).value == 1.0
    assert combined_score(Score(1.0), Score(0.5), alpha=0.0).value == 0.5
    assert combined_score(Score(0.5), Score(0.25), alpha=0.25).value == 0.3125


def test_combined_score_missing_and_validation() -> None:
    empty = Score.missing("empty answer")
    assert combined_score(empty, Score(0.5)) == Score.missing("coverage missing: empty answer")
    assert combined_score(Score(1.0), Score.missing("no gold context")) == Score.missing(
        "overlap missing: no gold context"
    )
    assert combined_score(empty, empty).reason == (
        "coverage missing: empty answer; overlap missing: empty answer"
    )
    for bad in (-0.01, 1.01):
        with pytest.raises(ValueError, match="alpha"):
            combined_score(Score(1.0), Score(1.0), alpha=bad)


# --- exact_match and token_f1 --------------------------------------------------------


def test_squad_normalise() -> None:
    assert squad_normalise("The  BM25-model, an index!") == "bm25model index"
    assert squad_normalise("A theme") == "theme"  # only whole-word articles go


def test_exact_match() -> None:
    assert exact_match("The Retriever.", "retriever").value == 1.0
    assert exact_match("an index!", "Index").value == 1.0
    assert exact_match("retrievers", "retriever").value == 0.0
    assert exact_match("", "x") == Score.missing("empty answer")
    assert exact_match("x", None) == Score.missing("no expected answer")
    assert exact_match("x", " ") == Score.missing("no expected answer")


def test_token_f1() -> None:
    # p = 2/3, r = 1 -> F1 = 2 * (2/3) / (5/3) = 0.8
    assert token_f1("dense passage retrieval", "dense retrieval").value == pytest.approx(
        0.8, abs=1e-15
    )
    assert token_f1("the cat sat", "a dog sat").value == 0.5  # cat sat / dog sat
    assert token_f1("x x y", "x y y").value == pytest.approx(2 / 3, abs=1e-15)  # counts clip
    assert token_f1("alpha", "beta").value == 0.0
    assert token_f1("Retriever!", "the retriever").value == 1.0
    # Only articles: no tokens on one side -> 0, on both sides -> 1 (SQuAD 2.0 rule).
    assert token_f1("The", "retriever").value == 0.0
    assert token_f1("the", "a").value == 1.0
    assert token_f1(" ", "x") == Score.missing("empty answer")
    assert token_f1("x", None) == Score.missing("no expected answer")


# --- bounds --------------------------------------------------------------------------

words = st.text(alphabet=st.sampled_from(list("abc ABC.,the\n")), max_size=40)


@given(answer=words, other=words, keywords=st.lists(words, max_size=4))
def test_all_metrics_in_unit_interval_or_missing(
    answer: str, other: str, keywords: list[str]
) -> None:
    scores = [
        keyword_coverage(answer, keywords),
        context_overlap(answer, other),
        groundedness(answer, other),
        exact_match(answer, other),
        token_f1(answer, other),
    ]
    scores.append(combined_score(scores[0], scores[1]))
    for s in scores:
        if s.value is None:
            assert s.reason
        else:
            assert 0.0 <= s.value <= 1.0 and s.reason is None
            assert isinstance(s.value, float)


@given(answer=words)
def test_answer_against_itself(answer: str) -> None:
    overlap = context_overlap(answer, answer)
    assert overlap.value in (None, 1.0)
    grounded = groundedness(answer, answer)
    assert grounded.value in (None, 1.0)
    if answer.strip():
        assert exact_match(answer, answer).value == 1.0
        assert token_f1(answer, answer).value == 1.0
