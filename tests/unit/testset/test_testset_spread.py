"""The generator keeps its promises (issue 65, item 2): passages drawn over the
corpus's clusters in turn, and a question whose embedding repeats a kept one's (cosine
at least 0.9) rejected as a near-duplicate even when its words differ."""

from __future__ import annotations

import numpy as np

from ragmark.chunking import WholeChunker
from ragmark.testset.generate import Candidate, _State, check_candidate
from ragmark.testset.prompts import Generated
from ragmark.testset.sampling import Passage, Sampler
from ragmark.types import Corpus, Document

TEXT = "A passage long enough to write a question from, about topic {n}, " * 3


def test_the_first_passages_cover_every_cluster_before_any_twice():
    """Six documents in clusters 0 0 0 0 1 2: without clusters, seed 1's order takes
    two of cluster 0 among its first three (d2, d0, d4); with them, the first three
    documents drawn are one of each cluster, and every document is still drawn once."""
    docs = tuple(Document(f"d{n}", TEXT.format(n=n)) for n in range(6))
    labels = [0, 0, 0, 0, 1, 2]
    plain = Sampler(Corpus(docs, "x"), WholeChunker(), 1, 4000).order("factual")
    assert sorted(labels[d] for d in plain[:3]) == [0, 0, 1]
    sampler = Sampler(Corpus(docs, "x"), WholeChunker(), 1, 4000, labels)
    order = sampler.order("factual")
    assert sorted(labels[d] for d in order[:3]) == [0, 1, 2]
    assert sorted(order) == list(range(6))
    drawn = [sampler.draw("factual") for _ in range(6)]
    assert [p[0].doc for p in drawn if p] == order


def _generated(question):
    return Generated(question=question, answer="It ranks documents by term weights.",
                     quotes=["BM25 ranks documents by term weights in a collection."],
                     type="factual", difficulty="easy")


def test_a_question_whose_embedding_repeats_a_kept_one_is_rejected():
    vectors = {"What does BM25 rank?": np.array([1.0, 0.0]),
               "Which things are ordered by BM25?": np.array([0.95, 0.3122]),
               "Why is the sky blue?": np.array([0.0, 1.0])}
    state = _State(quota={"factual": 5}, embed=lambda q: vectors[q])
    source = (Passage("d1", 0, 0, "BM25 ranks documents by term weights in a collection."),)
    for n, q in enumerate(vectors, start=1):
        check_candidate(state, Candidate(n, 1, "factual", source), _generated(q))
    assert [k["question"] for k in state.kept] == ["What does BM25 rank?",
                                                   "Why is the sky blue?"]
    (why,) = state.rejected
    assert why["reason"] == "duplicate_question"
    assert why["detail"] == ("'Which things are ordered by BM25?' repeats 'What does BM25 "
                             "rank?' (cosine 0.95)")


def test_the_generator_prints_the_check_of_what_it_wrote(corpus, tmp_path, capsys, server):
    """By default the corpus's documents are embedded and clustered, passages drawn over
    the clusters, and the set written is checked as `testset check` would: the counts
    in the report and on the console; the documents covered are those the kept
    questions were written from."""
    import json

    from support.cli import run_cli
    from testset_support import writer

    server.rule = writer()
    out = tmp_path / "t.json"
    code, stdout, err = run_cli(["testset", "--corpus", str(corpus), "--output", str(out),
                                 "--llm-base-url", server.url, "--llm-model", "test-model",
                                 "--size", "6", "--types", "factual,reasoning", "--quiet"],
                                capsys)
    assert code == 0, err
    items = json.loads(out.read_text())
    questions = [i["question"] for i in items]
    assert len(questions) == len(set(questions))  # no question written twice
    report = json.loads((tmp_path / "t.report.json").read_text())
    check = report["check"]
    assert check["duplicates"] == {"count": 0, "share": 0.0}
    cov = check["coverage"]
    assert cov["clusters"] >= 2 and 1 <= cov["clusters_covered"] <= cov["clusters"]
    assert cov["documents_covered"] == len({s for i in items for s in i["source_ids"]})
    assert (f"Checked: near-duplicates 0 (0.0%), answers given away "
            f"{check['leaked']['count']}") in stdout
    assert f"{cov['clusters_covered']} of {cov['clusters']} clusters" in stdout
