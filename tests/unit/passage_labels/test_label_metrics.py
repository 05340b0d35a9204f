"""Per-k metrics of LLM relevance labels on hand-made labels, worked by hand."""

from __future__ import annotations

import pytest
from sklearn.metrics import cohen_kappa_score

from ragmark.passage_labels.metrics import METRICS, Agreement, per_k_metrics
from ragmark.types import Score

Y, N, F = Score(1.0), Score(0.0), Score.missing("judge failed")


def values(out, metric, top_k):
    return [out[f"{metric}@{k}"].value for k in range(1, top_k + 1)]


def test_every_metric_at_every_k_on_a_worked_example():
    # labels N Y N Y Y; relevant in the labelled top 5: 3
    out = per_k_metrics([N, Y, N, Y, Y], 5)
    assert list(out)[:5] == [f"judged_precision@{k}" for k in range(1, 6)]
    assert len(out) == 5 * len(METRICS)
    assert values(out, "judged_precision", 5) == pytest.approx([0, 1 / 2, 1 / 3, 2 / 4, 3 / 5])
    assert values(out, "relative_recall", 5) == pytest.approx([0, 1 / 3, 1 / 3, 2 / 3, 1])
    assert values(out, "accuracy", 5) == values(out, "judged_precision", 5)  # seed 003: TP / k
    assert values(out, "num_relevant", 5) == [0, 1, 1, 2, 3]
    assert values(out, "answer_presence", 5) == [0, 1, 1, 1, 1]
    assert all(out[f"agreement@{k}"].reason ==
               "the dataset has no ground truth for this query" for k in range(1, 6))


def test_agreement_with_the_ground_truth_at_every_k():
    # judge:  Y  Y  N  N ; truth: relevant, not, relevant, not
    out = per_k_metrics([Y, Y, N, N], 4, [True, False, True, False])
    assert values(out, "agreement", 4) == pytest.approx([1, 1 / 2, 1 / 3, 2 / 4])


def test_a_failed_label_is_left_out_of_its_queries_values():
    # N Y (failed) Y: at k=3 the labelled ranks are 1, 2 -> precision 1/2; at k=4, 2/3
    out = per_k_metrics([N, Y, F, Y], 4, [False, True, True, True])
    assert values(out, "judged_precision", 4) == pytest.approx([0, 1 / 2, 1 / 2, 2 / 3])
    assert values(out, "relative_recall", 4) == pytest.approx([0, 1 / 2, 1 / 2, 1])
    assert values(out, "num_relevant", 4) == [0, 1, 1, 2]
    assert values(out, "agreement", 4) == pytest.approx([1, 1, 1, 1])


def test_only_failed_labels_in_the_top_k_make_every_value_missing_never_zero():
    out = per_k_metrics([F, N, Y], 3)
    for m in METRICS:
        assert out[f"{m}@1"].value is None
        assert out[f"{m}@1"].reason == "every label in the top 1 failed"
    assert values(out, "judged_precision", 3)[1:] == pytest.approx([0, 1 / 2])
    assert values(out, "answer_presence", 3)[1:] == [0, 1]


def test_no_relevant_passage_leaves_recall_missing_and_presence_zero():
    out = per_k_metrics([N, N], 2)
    assert out["relative_recall@2"] == Score.missing(
        "no passage judged relevant in the labelled top 2")
    assert values(out, "answer_presence", 2) == [0, 0]
    assert values(out, "judged_precision", 2) == [0, 0]


def test_ranks_without_a_passage_count_as_not_relevant():
    # the retriever returned 2 passages for a top 4: precision divides by k (trec_eval)
    out = per_k_metrics([Y, N], 4, [True, True])
    assert values(out, "judged_precision", 4) == pytest.approx([1, 1 / 2, 1 / 3, 1 / 4])
    assert values(out, "relative_recall", 4) == [1, 1, 1, 1]
    assert values(out, "answer_presence", 4) == [1, 1, 1, 1]
    assert values(out, "agreement", 4) == pytest.approx([1, 1 / 2, 1 / 2, 1 / 2])
    empty = per_k_metrics([], 2)
    assert values(empty, "judged_precision", 2) == [0, 0]
    assert values(empty, "answer_presence", 2) == [0, 0]
    assert empty["relative_recall@1"].value is None


def test_bad_arguments_are_errors():
    with pytest.raises(ValueError, match="3 labels for a top 2"):
        per_k_metrics([Y, Y, Y], 2)
    with pytest.raises(ValueError, match="1 ground-truth values for 2 labels"):
        per_k_metrics([Y, N], 2, [True])
    with pytest.raises(ValueError, match="top_k must be at least 1"):
        per_k_metrics([], 0)


def test_agreement_counts_rate_and_kappa():
    pairs = [(True, True)] * 3 + [(True, False)] * 2 + [(False, True)] * 2 + [
        (False, False)] * 2
    a = Agreement.of(pairs)
    assert (a.tp, a.fp, a.fn, a.tn, a.n) == (3, 2, 2, 2, 9)
    assert a.rate == pytest.approx(5 / 9)
    # chance agreement (5*5 + 4*4) / 81 = 41/81: kappa = (45 - 41) / (81 - 41) = 0.1
    assert a.kappa == pytest.approx(0.1)
    judge, truth = zip(*pairs, strict=True)
    assert a.kappa == pytest.approx(cohen_kappa_score(judge, truth))
    assert a.to_json() == {"n": 9, "agreement": a.rate, "kappa": a.kappa, "tp": 3, "fp": 2,
                           "fn": 2, "tn": 2}


def test_kappa_is_undefined_when_both_raters_use_one_class():
    a = Agreement.of([(True, True)] * 4)
    assert a.rate == 1.0 and a.kappa is None
    assert Agreement.of([]).rate is None and Agreement.of([]).kappa is None
