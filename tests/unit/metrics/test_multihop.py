"""Multi-hop retrieval from a pipeline or a log (issue 23, item 4): a result that gives
``hops`` (its retrieval steps, each with its contexts) instead of ``contexts`` is ranked
as the steps merged in order, and each step is judged on its own ranking, hand-worked."""

from __future__ import annotations

import json

import pytest
from support.cli import run_cli

import ragmark

P1 = "BM25 ranks documents by term frequency and inverse document frequency."
P2 = "A reranker reorders the candidate passages with a stronger cross-encoder model."
P3 = "Dense retrievers embed queries and passages into the same vector space."
P4 = "Hybrid search fuses the rankings of a sparse and a dense retriever."

QUESTION = "How are candidates found and then reordered?"
HOPS = [{"name": "first pass", "contexts": [P3, P1, P4]},
        {"name": "follow-up", "contexts": [{"text": P2, "id": "x2"}, P1]}]


def test_a_logged_line_with_hops_is_judged_per_hop(tmp_path, capsys):
    """Relevant: P1, P2. Hop 1 [P3, P1, P4]: recall 1/2, hit 1, MRR 1/2, first to find
    P1. Hop 2 [P2, P1]: recall 2/2, hit 1, MRR 1, first to find P2. Merged [P3, P1, P4,
    P2, P1]: recall@3 1/2, recall@5 1, MRR 1/2."""
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps({"id": "q", "question": QUESTION, "answer": "By BM25, then "
                               "a reranker.", "hops": HOPS,
                               "ground_truth_contexts": [P1, P2]}) + "\n", encoding="utf-8")
    out = tmp_path / "r.json"
    code, stdout, err = run_cli(["run", "--outputs", str(log), "--metrics",
                                 "recall@3,recall@5,mrr", "--output", str(out),
                                 "--include-details", "--no-history"], capsys)
    assert code == 0, err
    data = json.loads(out.read_text())
    assert data["per_query"]["q"] == {"recall@3": 0.5, "recall@5": 1.0, "mrr": 0.5}
    (q,) = data["queries"]
    assert [(h["name"], h["size"], h["recall"], h["hit"], h["mrr"]) for h in q["hops"]] == [
        ("first pass", 3, 0.5, 1.0, 0.5), ("follow-up", 2, 1.0, 1.0, 1.0)]
    assert [len(h["found"]) for h in q["hops"]] == [1, 1]
    assert "Retrieval by hop" in stdout


def test_an_in_memory_pipeline_returning_hops(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i, text in enumerate([P1, P2, P3, P4], start=1):
        (corpus / f"p{i}.txt").write_text(text, encoding="utf-8")
    ds = tmp_path / "set.json"
    ds.write_text(json.dumps([{"question": QUESTION, "ground_truth_contexts": [P1, P2]}]),
                  encoding="utf-8")

    def pipeline(question: str) -> dict:
        return {"answer": "BM25 finds them; a reranker reorders them.", "hops": HOPS}

    report = ragmark.evaluate_pipeline(pipeline, ds, corpus=corpus, history=False,
                                       metrics=["recall@5", "mrr"])
    (q,) = report.queries
    assert [(h.name, h.recall, h.mrr) for h in q.hops] == [("first pass", 0.5, 0.5),
                                                          ("follow-up", 1.0, 1.0)]
    assert report.hops[1].found == 1 and report.hops[1].found_any == 2
    assert report.value("recall@5") == 1.0


@pytest.mark.parametrize(("line", "message"), [
    ({"question": "q?", "answer": "a", "hops": HOPS, "contexts": [P1]}, "not both"),
    ({"question": "q?", "answer": "a", "hops": [{"name": "x"}]}, "hops[0]"),
    ({"question": "q?", "answer": "a", "hops": []}, "non-empty list of steps"),
])
def test_bad_hops_are_errors_naming_the_field(tmp_path, capsys, line, message):
    log = tmp_path / "bad.jsonl"
    log.write_text(json.dumps(line) + "\n", encoding="utf-8")
    code, _, err = run_cli(["run", "--outputs", str(log), "--no-history"], capsys)
    assert code == 2 and message in err and "line 1" in err
