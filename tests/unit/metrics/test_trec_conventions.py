"""Issue 25 items 2 and 3: ``ragmark.evaluate`` says how many queries its mean leaves out
and offers trec_eval's convention; a NaN score ranks last, as pytrec_eval ranks it, with
a warning that counts them. pytrec_eval is the oracle."""

from __future__ import annotations

import math
import random

import pytest
import pytrec_eval

import ragmark
from ragmark.errors import ConfigError, RagmarkWarning

PAIRS = [("map", "map"), ("precision@5", "P_5"), ("ndcg@10", "ndcg_cut_10"),
         ("recall@10", "recall_10"), ("mrr", "recip_rank"), ("r_precision", "Rprec"),
         ("bpref", "bpref"), ("ndcg", "ndcg")]


def test_a_nan_score_ranks_last_as_pytrec_eval_ranks_it():
    qrels = {"q1": {"a": 1, "b": 1, "c": 0}}
    run = {"q1": {"a": math.nan, "b": 0.5, "c": 0.9}}
    with pytest.warns(RagmarkWarning, match=r"1 run score is NaN \(the first: query 'q1', "
                      r"document 'a'\): ranked last"):
        got = ragmark.evaluate(qrels, run, ["map", "precision@1"])
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"map", "P_1"}).evaluate(run)["q1"]
    assert got == {"map": pytest.approx(ref["map"], abs=1e-12), "precision@1": ref["P_1"]}
    assert got["map"] == pytest.approx((1 / 2 + 2 / 3) / 2)  # c, b, a: hand-worked
    assert got["precision@1"] == 0.0


def _qrels_with_unanswerable(seed: int):
    rng = random.Random(seed)
    docs = [f"d{i}" for i in range(30)]
    qrels, run = {}, {}
    for q in range(40):
        judged = rng.sample(docs, 8)
        none = q % 5 == 0  # every fifth query: judged documents, none relevant
        qrels[f"q{q}"] = {d: 0 if none or i >= 2 else rng.choice([1, 2])
                          for i, d in enumerate(judged)}
        run[f"q{q}"] = {d: round(rng.random(), 2) for d in rng.sample(docs, 15)}
    return qrels, run


@pytest.mark.parametrize("seed", range(3))
def test_trec_eval_mean_counts_queries_without_a_relevant_document_as_zero(seed):
    qrels, run = _qrels_with_unanswerable(seed)
    names = [n for n, _ in PAIRS]
    per = pytrec_eval.RelevanceEvaluator(qrels, {k for _, k in PAIRS}).evaluate(run)
    got = ragmark.evaluate(qrels, run, names, mean="trec_eval")
    for name, key in PAIRS:
        ref = sum(v[key] for v in per.values()) / len(per)
        assert got[name] == pytest.approx(ref, abs=1e-9), name
    answered = [q for q, j in qrels.items() if any(g > 0 for g in j.values())]
    with pytest.warns(RagmarkWarning, match="8 of 40 queries have no relevant document in "
                      "the qrels and are left out of the means"):
        default = ragmark.evaluate(qrels, run, names)
    for name, key in PAIRS:
        ref = sum(per[q][key] for q in answered) / len(answered)
        assert default[name] == pytest.approx(ref, abs=1e-9), name
    per_query = ragmark.evaluate(qrels, run, ["map"], per_query=True, mean="trec_eval")
    assert set(per_query) == set(qrels) and per_query["q0"] == {"map": 0.0}


def test_no_warning_when_every_query_has_a_relevant_document(recwarn):
    ragmark.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["map"])
    assert not [w for w in recwarn if issubclass(w.category, RagmarkWarning)]
    with pytest.raises(ConfigError, match="mean must be one of relevant, trec_eval"):
        ragmark.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["map"], mean="all")
