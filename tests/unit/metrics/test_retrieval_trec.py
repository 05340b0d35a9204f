"""Retrieval metrics against trec_eval (pytrec_eval) to 1e-9, and hand-worked cases."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ragmark
from ragmark.errors import RagmarkWarning, UnknownComponentError
from ragmark.metrics.names import parse_metric

pytrec_eval = pytest.importorskip("pytrec_eval")


def evaluate_told(qrels, run, names, **kw):
    """``ragmark.evaluate`` on data with questions that have no relevant document: the
    warning that says they are left out is expected, checked here and not let through."""
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        out = ragmark.evaluate(qrels, run, names, **kw)
    for w in got:
        if issubclass(w.category, ResourceWarning):  # a file another library left open,
            continue  # collected meanwhile: not this call's
        assert issubclass(w.category, RagmarkWarning), w
        assert "have no relevant document in the qrels" in str(w.message), w
    return out

# ragmark name -> (trec_eval measure to request, key in pytrec_eval's output)
TREC = {
    "precision@1": ("P.1", "P_1"),
    "precision@3": ("P.3", "P_3"),
    "precision@10": ("P.10", "P_10"),
    "recall@3": ("recall.3", "recall_3"),
    "recall@10": ("recall.10", "recall_10"),
    "hit@1": ("success.1", "success_1"),
    "hit@5": ("success.5", "success_5"),
    "mrr": ("recip_rank", "recip_rank"),
    "ndcg@3": ("ndcg_cut.3", "ndcg_cut_3"),
    "ndcg@10": ("ndcg_cut.10", "ndcg_cut_10"),
    "ndcg": ("ndcg", "ndcg"),
    "map": ("map", "map"),
    "map@5": ("map_cut.5", "map_cut_5"),
    "r_precision": ("Rprec", "Rprec"),
}


def trec_eval(qrels, run, names=TREC):
    ev = pytrec_eval.RelevanceEvaluator(qrels, {m for m, _ in names.values()})
    return ev.evaluate(run)


def assert_agrees(qrels, run, names=TREC):
    ours = evaluate_told(qrels, run, list(names), per_query=True)
    theirs = trec_eval(qrels, run, names)
    # pytrec_eval reports the queries present in both; ours adds qrels-only ones (-c).
    for q, vals in theirs.items():
        if not any(g > 0 for g in qrels[q].values()):
            assert q not in ours
            continue
        for name, (_, key) in names.items():
            assert ours[q][name] == pytest.approx(vals[key], abs=1e-9), (q, name)
    return ours


def test_hand_worked_example():
    qrels = {"q": {"a": 2, "b": 1}}
    run = {"q": {"x": 4.0, "a": 3.0, "y": 2.0, "b": 1.0}}
    got = ragmark.evaluate(
        qrels, run, ["precision@2", "recall@2", "hit@1", "mrr", "map", "ndcg@4", "r_precision"]
    )
    assert got["precision@2"] == 0.5
    assert got["recall@2"] == 0.5
    assert got["hit@1"] == 0.0
    assert got["mrr"] == 0.5
    assert got["map"] == pytest.approx((1 / 2 + 2 / 4) / 2)
    ideal = 2 + 1 / math.log2(3)
    assert got["ndcg@4"] == pytest.approx((2 / math.log2(3) + 1 / math.log2(5)) / ideal)
    assert got["r_precision"] == 0.5
    assert_agrees(qrels, run)


def test_ties_break_by_docid_descending_in_float32():
    qrels = {"q": {"a": 1}}
    # equal in float64
    assert ragmark.evaluate(qrels, {"q": {"a": 0.5, "b": 0.5}}, ["mrr"])["mrr"] == 0.5
    assert ragmark.evaluate(qrels, {"q": {"a": 0.5, "0": 0.5}}, ["mrr"])["mrr"] == 1.0
    # different in float64, equal in float32: trec_eval sees a tie
    run = {"q": {"a": 0.1 + 1e-10, "b": 0.1}}
    assert ragmark.evaluate(qrels, run, ["mrr"])["mrr"] == 0.5
    assert_agrees(qrels, run)


def test_negative_and_zero_grades_are_not_relevant():
    qrels = {"q1": {"a": 2, "b": 0, "c": 1, "d": -1, "e": 3}, "q2": {"z": 1}}
    run = {
        "q1": {"a": 0.5, "b": 0.9, "c": 0.5, "d": 0.8, "x": 0.7, "e": 0.1},
        "q2": {"y": 1.0, "z": 0.3},
    }
    got = assert_agrees(qrels, run)
    assert got["q1"]["mrr"] == 0.25
    assert got["q1"]["map"] == pytest.approx((1 / 4 + 2 / 5 + 3 / 6) / 3)


def test_query_without_relevant_is_skipped_and_missing_query_scores_zero():
    qrels = {"q1": {"a": 1}, "q2": {"b": 0}, "q3": {"c": 1}}
    run = {"q1": {"a": 1.0}, "q2": {"b": 1.0}}
    per_q = evaluate_told(qrels, run, ["mrr"], per_query=True)
    assert per_q == {"q1": {"mrr": 1.0}, "q3": {"mrr": 0.0}}
    assert evaluate_told(qrels, run, ["mrr"]) == {"mrr": 0.5}


def test_inputs_are_not_modified():
    qrels = {"q": {"a": 1, "b": 0}}
    run = {"q": {"a": 0.3, "c": 0.3}}
    before = (repr(qrels), repr(run))
    ragmark.evaluate(qrels, run, ["ndcg@10", "map"])
    assert (repr(qrels), repr(run)) == before


def test_metric_names_parse_in_one_place():
    assert str(parse_metric("P@5")) == "precision@5"
    assert str(parse_metric("NDCG_cut_10")) == "ndcg@10"
    assert str(parse_metric("success@3")) == "hit@3"
    assert str(parse_metric("Rprec")) == "r_precision"
    assert str(parse_metric("token_f1")) == "token_f1"
    assert str(parse_metric("map_cut.5")) == "map@5"
    with pytest.raises(UnknownComponentError,
                       match="unknown metric 'ndgc@10'; known: recall@k, precision@k"):
        parse_metric("ndgc@10")
    with pytest.raises(UnknownComponentError, match="needs a cutoff"):
        parse_metric("recall")
    with pytest.raises(UnknownComponentError, match="takes no cutoff"):
        parse_metric("exact_match@3")
    assert str(parse_metric("Rprec@3")) == "r_precision@3"  # on the ranking cut at 3


doc_ids = st.sampled_from([f"d{i}" for i in range(12)])
scores = st.one_of(
    st.sampled_from([0.0, 0.5, 1.0, 0.1 + 1e-10, 0.1]),
    st.floats(-5, 5, allow_nan=False, width=32),
)
grades = st.integers(-1, 3)


@st.composite
def qrels_and_run(draw):
    qs = draw(st.lists(st.sampled_from(["q1", "q2", "q3", "q4"]), min_size=1, unique=True))
    qrels = {q: draw(st.dictionaries(doc_ids, grades, min_size=1, max_size=6)) for q in qs}
    run = {q: draw(st.dictionaries(doc_ids, scores, min_size=1, max_size=12)) for q in qs}
    return qrels, run


def random_cases(seed: int, n_queries: int):
    """Many small random queries in one qrels/run: ties (also float32-only ties),
    negative and zero grades, relevant documents missing from the run, empty-ish runs."""
    rng = np.random.default_rng(seed)
    pool = [f"d{i}" for i in range(15)]
    tie_values = np.array([0.0, 0.5, 1.0, 0.1, 0.1 + 1e-10, -2.0])
    qrels, run = {}, {}
    for i in range(n_queries):
        q = f"q{i}"
        judged = rng.choice(pool, int(rng.integers(1, 7)), replace=False)
        grades = rng.integers(-1, 4, len(judged))
        qrels[q] = {str(d): int(g) for d, g in zip(judged, grades, strict=True)}
        docs = rng.choice(pool, int(rng.integers(1, 15)), replace=False)
        if rng.random() < 0.5:
            vals = rng.choice(tie_values, len(docs))
        else:
            vals = rng.normal(size=len(docs)).astype(np.float32).astype(float)
        run[q] = {str(d): float(v) for d, v in zip(docs, vals, strict=True)}
    return qrels, run


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_agrees_with_trec_eval_on_random_runs(seed):
    qrels, run = random_cases(seed, 2000)
    assert_agrees(qrels, run)


@settings(max_examples=100, deadline=None)
@given(qrels_and_run())
def test_bounds_and_order_independence(data):
    qrels, run = data
    names = list(TREC)
    a = evaluate_told(qrels, run, names, per_query=True)
    shuffled = {q: dict(reversed(list(r.items()))) for q, r in reversed(list(run.items()))}
    b = evaluate_told(qrels, shuffled, names, per_query=True)
    assert a == b
    for vals in a.values():
        for v in vals.values():
            assert 0.0 <= v <= 1.0


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(doc_ids, st.integers(1, 3), min_size=1, max_size=8))
def test_perfect_ranking_scores_one(rel):
    # relevant documents first, by grade, then a non-relevant tail
    ordered = sorted(rel.items(), key=lambda x: -x[1])
    run = {d: 10.0 + g - i * 1e-3 for i, (d, g) in enumerate(ordered)}
    run["zz_nonrel"] = 0.0
    got = ragmark.evaluate({"q": rel}, {"q": run}, ["ndcg@10", "ndcg", "map", "mrr", "r_precision"])
    assert all(v == pytest.approx(1.0) for v in got.values()), got
    got = ragmark.evaluate({"q": rel}, {"q": run}, [f"recall@{len(rel)}", "hit@1"])
    assert all(v == 1.0 for v in got.values())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bpref_agrees_with_trec_eval(seed):
    qrels, run = random_cases(seed, 2000)
    assert_agrees(qrels, run, {"bpref": ("bpref", "bpref")})


def test_bpref_hand_worked():
    # R = 2 (a, b), N = 2 (x, y); ranking x a y b: a has 1 judged non-relevant above
    # (1 - 1/2), b has 2 (1 - 2/2); unjudged u is ignored
    qrels = {"q": {"a": 1, "b": 1, "x": 0, "y": 0}}
    run = {"q": {"u": 0.99, "x": 0.9, "a": 0.8, "y": 0.7, "b": 0.6}}
    assert ragmark.evaluate(qrels, run, ["bpref"])["bpref"] == pytest.approx(0.25)
    assert_agrees(qrels, run, {"bpref": ("bpref", "bpref")})


@pytest.mark.parametrize("seed", [0, 1])
def test_judged_at_k_is_precision_over_every_judged_document(seed):
    """judged@k against trec_eval's P@k on the qrels with every judged document (grade
    0 or more; a negative grade is no judgment) made relevant."""
    qrels, run = random_cases(seed, 1000)
    ours = evaluate_told(qrels, run, ["judged@5", "judged@10"], per_query=True)
    every = {q: {d: 1 for d, g in j.items() if g >= 0} for q, j in qrels.items()}
    theirs = trec_eval(every, run, {"judged@5": ("P.5", "P_5"), "judged@10": ("P.10", "P_10")})
    checked = 0
    for q, vals in ours.items():
        for name, key in (("judged@5", "P_5"), ("judged@10", "P_10")):
            assert vals[name] == pytest.approx(theirs[q][key], abs=1e-9), (q, name)
            checked += 1
    assert checked > 500
