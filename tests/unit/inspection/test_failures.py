"""find_failures on small hand-made results files: each kind of failure, each cause, and
what cannot be checked."""

from __future__ import annotations

import json

import pytest

from ragmark.analysis.failures import find_failures
from ragmark.analysis.inspection import load_results, target_ranks
from ragmark.errors import DataError


def item(rank, doc, grade=0, rule="id"):
    return {"rank": rank, "id": f"{doc}#0", "doc_id": doc, "score": 10.0 - rank,
            "grade": grade, "targets": [doc] if grade else [], "rule": rule if grade else None}


def query(qid, retrieved, metrics, targets=("a.txt",), contexts=("ctx one", "ctx two")):
    return {"id": qid, "question": f"question {qid}?",
            "ground_truth": {"kind": "ids", "targets": dict.fromkeys(targets, 1)},
            "retrieved": retrieved, "answer": f"answer {qid}", "contexts": list(contexts),
            "metrics": metrics}


def write(tmp_path, queries, **config):
    data = {"metrics": {}, "counts": {}, "notes": ["a note"],
            "config": {"name": "cfg", "top_k": 4, "top_n": 2, "unit": "document",
                       "grounded_threshold": 0.1, **config},
            "dataset": {}, "queries": queries}
    p = tmp_path / "r.json"
    p.write_text(json.dumps(data))
    return p


def test_retrieval_causes_ranking_against_nothing_retrieved(tmp_path):
    p = write(tmp_path, [
        query("deep", [item(1, "x"), item(2, "y"), item(3, "a.txt", 1)], {"mrr": 1 / 3}),
        query("none", [item(1, "x"), item(2, "y")], {"mrr": 0.0},
              targets=("a.txt", "b.txt", "c.txt", "d.txt")),
        query("ok", [item(1, "a.txt", 1)], {"mrr": 1.0}),
        query("no-truth", [item(1, "x")], {"mrr": {"value": None, "reason": "no target"}},
              targets=()),
    ])
    rep = find_failures(load_results(p), k=2)
    assert rep.checked["no_hit"] == 3  # the question without a target is not checked
    deep, none = rep.failures
    assert (deep.query, deep.fact, deep.cause) == ("deep", "first relevant item at rank 3",
                                                   "ranking")
    assert (none.query, none.cause) == ("none", "retrieval")
    assert none.fact == "nothing relevant in all 2 retrieved; missed a.txt, b.txt, c.txt ..."
    assert "chunk boundaries" in none.diagnosis and "reranker" in deep.diagnosis
    assert find_failures(load_results(p), k=3).count("no_hit") == 1


def test_answer_failures_blame_what_reached_the_generator(tmp_path):
    ungrounded = {"value": 0.05, "ungrounded": True}
    p = write(tmp_path, [
        query("gen", [item(1, "a.txt", 1)], {"groundedness": ungrounded}),
        query("rank", [item(1, "x"), item(2, "y"), item(3, "a.txt", 1)],
              {"groundedness": ungrounded}),
        query("ret", [item(1, "x")], {"groundedness": ungrounded}),
        query("fine", [item(1, "a.txt", 1)], {"groundedness": {"value": 0.5,
                                                                "ungrounded": False}}),
    ])
    rep = find_failures(load_results(p))
    got = [(f.query, f.kind, f.cause) for f in rep.failures if f.kind == "ungrounded"]
    assert got == [("gen", "ungrounded", "generation"), ("rank", "ungrounded", "ranking"),
                   ("ret", "ungrounded", "retrieval")]
    rank = next(f for f in rep.failures if f.query == "rank" and f.kind == "ungrounded")
    assert rank.diagnosis.startswith("the first relevant item (rank 3) was not among the 2 "
                                     "contexts given to the generator")
    assert rep.causes("ungrounded") == {"generation": 1, "ranking": 1, "retrieval": 1}
    assert rep.checked["ungrounded"] == 4


def test_faithfulness_threshold_is_strict_and_judge_failures_need_raw(tmp_path):
    p = write(tmp_path, [
        query("half", [item(1, "a.txt", 1)], {"faithfulness": {
            "value": 0.5, "claims": ["c1", "c2"], "unsupported": ["c2"]}}),
        query("low", [item(1, "a.txt", 1)], {"faithfulness": 0.25}),
        query("broken", [item(1, "a.txt", 1)], {"faithfulness": {
            "value": None, "reason": "faithfulness.verify: judge call failed: HTTP 500",
            "raw": None}}),
        query("skipped", [item(1, "a.txt", 1)], {"faithfulness": {
            "value": None, "reason": "no LLM endpoint configured"}}),
    ])
    rep = find_failures(load_results(p))
    assert [(f.query, f.kind) for f in rep.failures] == [("low", "low_faithfulness"),
                                                         ("broken", "judge_failure")]
    assert rep.failures[0].fact == "faithfulness 0.250"
    assert rep.failures[1].fact == "faithfulness.verify: judge call failed: HTTP 500"
    assert rep.checked["low_faithfulness"] == 2 and rep.checked["judge_failure"] == 4
    rep = find_failures(load_results(p), faithfulness_below=0.6)
    half = rep.failures[0]
    assert half.fact == "faithfulness 0.500: 1 of 2 claims unsupported by the retrieved context"


def test_what_the_file_cannot_tell_is_not_checked(tmp_path):
    p = write(tmp_path, [query("q", [item(1, "a.txt", 1)], {"mrr": 1.0})])
    rep = find_failures(load_results(p))
    from ragmark.analysis.agent_failures import AGENT_KINDS, NO_TRAJECTORY

    assert set(rep.unchecked) == {"ungrounded", "low_faithfulness", "judge_failure",
                                  "claim_blame", "unknown_ids", "pairwise_loss", *AGENT_KINDS}
    # an agent's kinds only in a file with a trajectory
    assert {rep.unchecked[k] for k in AGENT_KINDS} == {NO_TRAJECTORY}
    assert not set(AGENT_KINDS) & set(rep.kinds())
    assert "unknown_ids" not in rep.kinds()  # reported only where the run's note says so
    assert "pairwise_loss" not in rep.kinds()  # only in a file with pairwise verdicts
    assert rep.failures == [] and rep.checked["no_hit"] == 1


def test_compare_per_query_values_without_mrr(tmp_path):
    data = {"configs": {"a": {"per_query": {
        "q1": {"hit@5": 0.0, "groundedness": 0.05},
        "q2": {"hit@5": 1.0, "groundedness": 0.5},
        "q3": {"hit@5": None, "groundedness": None},
    }, "config": {"name": "a", "top_k": 10, "top_n": 5}}}, "run": {"baseline": "a"}}
    p = tmp_path / "c.json"
    p.write_text(json.dumps(data))
    res = load_results(p)
    rep = find_failures(res, k=5)
    assert [(f.query, f.kind, f.cause) for f in rep.failures] == [
        ("q1", "no_hit", "retrieval"), ("q1", "ungrounded", "retrieval")]
    assert rep.checked["no_hit"] == 2  # q3 has no relevant target
    rep = find_failures(res, k=3)
    assert "no hit@3, recall@3 or mrr" in rep.unchecked["no_hit"]


def test_no_target_anywhere_is_reported_as_not_checked(tmp_path):
    p = write(tmp_path, [query("q", [item(1, "x")], {"groundedness": 0.5}, targets=())])
    rep = find_failures(load_results(p))
    assert rep.unchecked["no_hit"] == "no question has a relevant target in its ground truth"


def test_target_ranks_and_malformed_metrics(tmp_path):
    p = write(tmp_path, [query("q", [item(1, "x"), item(2, "b.txt", 1)], {"mrr": 0.5},
                               targets=("a.txt", "b.txt"))])
    assert target_ranks(load_results(p).queries[0]) == {"a.txt": None, "b.txt": 2}
    p = write(tmp_path, [query("q", [], {"mrr": "high"})])
    with pytest.raises(DataError) as e:
        load_results(p)
    assert str(e.value) == (f"{p}, item queries[0], field 'metrics.mrr': expected a number, "
                            "null or an object with 'value', got \"high\"")
