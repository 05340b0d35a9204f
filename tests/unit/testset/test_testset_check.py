"""``ragmark testset check`` (issue 65, item 1) on a set with planted faults, hand-counted:
five questions over five one-sentence documents —

- q2 repeats q1 in other words ("How does BM25 rank the documents?"): one pair, by
  both rules (the same content words, Jaccard 1; MiniLM's cosine above 0.9); 1 of 5
  questions repeats an earlier one: 0.2;
- q3 points at its source ("What does the passage say a reranker does?"): 0.2;
- q4 gives its answer away ("... finished, in 1889?" / "1889"): 0.2;
- q5's answer ("It stores vectors in a database.") has none of its content words in its
  passage: 1 of the 5 with passages, 0.2;
- no question is about e.txt (photosynthesis): 4 of 5 documents covered; cut into 5
  clusters (one a document), 4 of 5 clusters, e.txt's the one without;
- types factual 4, reasoning 1; lengths 4 to 8 words, median 6."""

from __future__ import annotations

import json

import pytest
from support.cli import run_cli

from ragmark.testset.audit import (
    Pair,
    answer_support,
    coverage,
    documents_about,
    duplicate_pairs,
    kmeans,
    leaks_answer,
    repeating,
)
from ragmark.text import normalise
from ragmark.types import Document, GroundTruth, Sample

DOCS = {"a": "BM25 ranks documents by term frequency and inverse document frequency.",
        "b": "A reranker reorders candidate passages with a cross-encoder.",
        "c": "Chunking splits long documents into passages before indexing.",
        "d": "The Eiffel Tower was finished in 1889 in Paris.",
        "e": "Photosynthesis converts light into chemical energy in plants."}
ITEMS = [
    ("q1", "How does BM25 rank documents?",
     "By term frequency and inverse document frequency.", "a", "factual"),
    ("q2", "How does BM25 rank the documents?",
     "By term frequency and inverse document frequency.", "a", "factual"),
    ("q3", "What does the passage say a reranker does?",
     "It reorders them with a cross-encoder.", "b", "factual"),
    ("q4", "When was the Eiffel Tower finished, in 1889?", "1889", "d", "factual"),
    ("q5", "What does chunking do?", "It stores vectors in a database.", "c", "reasoning"),
]


@pytest.fixture
def planted(tmp_path):
    (tmp_path / "corpus").mkdir()
    for name, text in DOCS.items():
        (tmp_path / "corpus" / f"{name}.txt").write_text(text)
    (tmp_path / "set.json").write_text(json.dumps([
        {"id": i, "question": q, "expected_answer": a, "ground_truth_contexts": [DOCS[d]],
         "type": t} for i, q, a, d, t in ITEMS]))
    return tmp_path


def _samples():
    return [Sample(i, q, GroundTruth(passages=(DOCS[d],)), expected_answer=a)
            for i, q, a, d, _ in ITEMS]


def test_the_rules_hand_worked():
    samples = _samples()
    pairs = duplicate_pairs(samples, None)  # the word rule alone
    assert pairs == [Pair("q1", "q2", None, 1.0)] and pairs[0].rule == "words"
    assert repeating(pairs) == ["q2"]
    assert [s.id for s in samples if leaks_answer(s)] == ["q4"]
    assert not leaks_answer(Sample("y", "Is BM25 lexical?", expected_answer="Yes"))
    assert [answer_support(s) for s in samples] == [1.0, 1.0, 1.0, 1.0, 0.0]
    assert answer_support(Sample("n", "q?", expected_answer="x y")) is None  # no passage
    # cosine rule: two rows at cos 0.95 pair even when their words differ
    vecs = [[1.0, 0.0], [0.95, (1 - 0.95 ** 2) ** 0.5]]
    import numpy as np

    two = [Sample("x", "alpha beta?"), Sample("z", "gamma delta?")]
    (p,) = duplicate_pairs(two, np.array(vecs))
    assert (p.a, p.b, p.rule, round(p.cosine, 2)) == ("x", "z", "embedding", 0.95)


def test_coverage_by_documents_and_clusters():
    docs = [Document(k, v) for k, v in DOCS.items()]
    got = coverage(_samples(), docs, [0, 1, 2, 3, 4])
    assert (got["documents_covered"], got["uncovered_documents"]) == (4, pytest.approx(0.2))
    assert (got["clusters_covered"], got["clusters"]) == (4, 5)
    assert got["largest_uncovered"] == [{"cluster": 4, "documents": 1, "examples": [
        "e: Photosynthesis converts light into chemical energy in plants."]}]
    qrels = [Sample("k", "q?", GroundTruth(doc_grades={"e": 1, "a": 0}))]
    assert coverage(qrels, docs, None)["documents_covered"] == 1  # grade 0: not about it


def test_a_passage_that_is_its_document_with_a_title_before_it_is_about_that_document():
    """SPEC section 3's rule, both ways: RAGAS's generator writes the whole document with
    its title as the reference context; a passage under 20 characters matches nothing."""
    docs = [Document(k, v) for k, v in DOCS.items()]
    titled = Sample("r", "q?", GroundTruth(passages=("Photosynthesis\n" + DOCS["e"],)))
    assert coverage([titled], docs, None)["documents_covered"] == 1
    assert documents_about(titled, {d.id: normalise(d.text) for d in docs}) == {"e"}
    short = Sample("s", "q?", GroundTruth(passages=("light into",)))
    assert coverage([short], docs, None)["documents_covered"] == 0


def test_kmeans_separates_two_plain_groups():
    import numpy as np

    rows = np.array([[1, 0], [0.99, 0.14], [0, 1], [0.14, 0.99]], dtype=np.float64)
    labels = kmeans(rows / np.linalg.norm(rows, axis=1, keepdims=True), 2, seed=3)
    assert labels[0] == labels[1] != labels[2] == labels[3]


def test_check_a_planted_set_as_a_user(planted, capsys):
    code, out, err = run_cli(["testset", "check", str(planted / "set.json"), "--corpus",
                              str(planted / "corpus"), "--clusters", "5", "--json",
                              "--output", str(planted / "check.md"), "--fail-on",
                              "leaked>0.5"], capsys)
    assert code == 0, err
    got = json.loads(out)
    assert (got["duplicates"]["count"], got["duplicates"]["share"]) == (1, 0.2)
    (pair,) = got["duplicates"]["pairs"]
    assert (pair["a"], pair["b"], pair["rule"]) == ("q1", "q2", "both")
    assert pair["cosine"] > 0.9
    # 1 of 5: Wilson's 95% interval [0.0362, 0.6245]
    assert got["leaked"] == {"share": 0.2, "count": 1, "interval": [0.0362, 0.6245],
                             "ids": ["q4"]}
    assert got["unsupported"] == {"share": 0.2, "count": 1, "interval": [0.0362, 0.6245],
                                  "of": 5, "items": [{"id": "q5", "support": 0.0}]}
    assert got["points_at_source"] == {"share": 0.2, "count": 1,
                                       "interval": [0.0362, 0.6245],
                                       "items": [{"id": "q3", "words": "the passage say"}]}
    cov = got["coverage"]
    assert (cov["documents_covered"], cov["clusters_covered"], cov["clusters"]) == (4, 4, 5)
    assert [c["examples"] for c in cov["largest_uncovered"]] == [
        ["e.txt: Photosynthesis converts light into chemical energy in plants."]]
    assert got["spread"]["types"] == {"factual": 4, "reasoning": 1}
    assert got["spread"]["length_words"] == {"min": 4, "median": 6.0, "max": 8}
    assert got["gates"] == [{"gate": "leaked>0.5", "ok": True, "why": "leaked = 0.2000"}]
    md = (planted / "check.md").read_text()
    assert "\\*" not in md and "q1 'How does BM25 rank documents?'" in md
    assert "| near-duplicates (questions that repeat an earlier one) | 1 | 20.0% |" in md
    assert '| questions that point at their source ("the passage") | 1 | 20.0% |' in md
    assert "| clusters no question is about | 1 | 20.0% |" in md
    assert "q3 'What does the passage say a reranker does?': says 'the passage say'" in md


def test_a_gate_fails_and_bad_input_stops_before_work(planted, capsys):
    args = ["testset", "check", str(planted / "set.json"), "--words-only"]
    code, out, err = run_cli([*args, "--fail-on", "duplicates>0.02"], capsys)
    assert code == 1
    assert ("near-duplicates (words): 1 question repeats an earlier one (20.0%, 95% CI "
            "3.6%-62.5%)") in out
    assert "coverage: not measured (give --corpus)" in out
    assert "gate failed: duplicates>0.02: duplicates = 0.2000" in err
    code, _, err = run_cli([*args, "--fail-on", "duplicates"], capsys)
    assert code == 2 and "expected NAME>V" in err
    code, _, err = run_cli([*args, "--fail-on", "uncovered_clusters>0.5"], capsys)
    assert code == 2 and "give --corpus" in err
    code, _, err = run_cli(["testset", "check", str(planted / "nope.json")], capsys)
    assert code == 2 and "nope.json" in err
    # the generator still needs its options
    code, _, err = run_cli(["testset", "--corpus", str(planted / "corpus")], capsys)
    assert code == 2 and "Missing option '--size'" in err


def test_the_check_written_as_json_is_a_page_and_not_a_run(planted, capsys):
    from ragmark.errors import DataError
    from ragmark.results import read_results

    out = planted / "check.json"
    code, _, err = run_cli(["testset", "check", str(planted / "set.json"), "--words-only",
                            "--output", str(out), "--quiet"], capsys)
    assert code == 0, err
    assert json.loads(out.read_text())["envelope"]["kind"] == "testset_check"
    with pytest.raises(DataError, match="the check of a test set"):
        read_results(out)
    code, _, err = run_cli(["report", str(out), "--output", str(planted / "c.html")], capsys)
    assert code == 0, err
    page = (planted / "c.html").read_text()
    # the pair, the leaked, the one pointing at its source, the unsupported
    assert page.count('<tr class="item">') == 4
