"""judge-eval sees the score, not only the label (issue 20 item 4): ROC AUC against the
labels (equal to scikit-learn's), balanced accuracy at each threshold, and a threshold
chosen by cross-validation that is never tuned on the items it is measured on."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.metrics import balanced_accuracy_score, roc_auc_score
from support.cli import run_cli

from ragmark.judge_eval.scores import (
    best_threshold,
    by_threshold,
    cross_validated,
    folds_of,
    score_report,
)
from ragmark.stats.auc import auc


def test_auc_hand_worked():
    # supported items score 1.0 and 0.5, unsupported 0.0 and 0.5: of the 4 pairs, 3 are
    # ordered right and 1 is a tie -> (3 + 0.5) / 4
    truth = np.array([True, False, True, False])
    assert float(auc(np.array([0.0, 1.0, 0.5, 0.5]), ~truth)) == 0.875


@pytest.mark.parametrize("seed", range(6))
def test_auc_equals_scikit_learn_with_ties(seed):
    rng = np.random.default_rng(seed)
    truth = rng.random(50) < 0.4
    score = np.round(np.clip(np.where(truth, 0.4, 0.7) + rng.normal(0, 0.3, 50), 0, 1), 1)
    ours = float(auc(score, ~truth))
    assert ours == pytest.approx(roc_auc_score(~truth, score), abs=1e-12)
    # the block form (bootstrap rows) gives the same value row by row
    rows = rng.integers(0, 50, size=(4, 50))
    block = auc(score[rows], ~truth[rows])
    for r, got in zip(rows, block, strict=True):
        if truth[r].all() or (~truth[r]).all():
            assert np.isnan(got)
        else:
            assert got == pytest.approx(roc_auc_score(~truth[r], score[r]), abs=1e-12)


def test_balanced_accuracy_at_each_threshold():
    truth = np.array([True, True, False, False, True])
    score = np.array([0.0, 0.5, 0.5, 1.0, 1.0])
    rows = by_threshold(truth, score)
    assert [r["threshold"] for r in rows] == [0.5, 1.0]
    for r in rows:
        assert r["balanced_accuracy"] == pytest.approx(
            balanced_accuracy_score(truth, score < r["threshold"]), abs=1e-12)
    # below 0.5: one of 3 unsupported caught, both supported right -> (1/3 + 1) / 2
    assert rows[0]["balanced_accuracy"] == pytest.approx(2 / 3)
    assert rows[0]["called_unsupported"] == 1
    assert best_threshold(truth, score) == 0.5


def test_cross_validation_never_tunes_on_the_fold_it_judges():
    rng = np.random.default_rng(4)
    truth = rng.random(40) < 0.5
    score = np.round(rng.random(40), 2)
    got = cross_validated(truth, score, folds=5, seed=3, n_resamples=200)
    folds = folds_of(truth, 5, 3)
    assert sorted(np.concatenate(folds).tolist()) == list(range(40))
    pred = np.zeros(40, dtype=bool)
    for test, t in zip(folds, got["fold_thresholds"], strict=True):
        train = np.setdiff1d(np.arange(40), test)
        assert t == best_threshold(truth[train], score[train])
        pred[test] = score[test] < t
        # stratified: each fold has both classes
        assert truth[test].any() and (~truth[test]).any()
    assert got["balanced_accuracy"]["value"] == pytest.approx(
        balanced_accuracy_score(truth, pred), abs=1e-12)
    assert got["threshold"] == best_threshold(truth, score)


def test_on_noise_the_tuned_threshold_looks_good_and_the_cross_validated_one_does_not():
    inside, held = [], []
    for seed in range(30):
        rng = np.random.default_rng(100 + seed)
        truth = rng.random(40) < 0.5
        score = rng.random(40)
        best = best_threshold(truth, score)
        inside.append(balanced_accuracy_score(truth, score < best))
        held.append(cross_validated(truth, score, seed=seed, n_resamples=100)
                    ["balanced_accuracy"]["value"])
    # tuned and reported on the same items: optimistic; cross-validated: chance
    assert np.mean(inside) > 0.56 and abs(np.mean(held) - 0.5) < 0.04
    assert np.mean(inside) - np.mean(held) > 0.06


def test_one_class_or_one_score_say_why():
    got = score_report([True, True, True], [0.1, 0.5, 0.9], n_resamples=100)
    assert got["roc_auc"] == {"value": None, "reason": "the labels hold only one class"}
    assert got["cross_validated"]["value"] is None
    # issue 61 item 32: balanced accuracy is undefined on one class: None with the
    # reason (it was NaN, and the JSON writer ended in a traceback)
    assert got["by_threshold"] == [
        {"threshold": 0.5, "balanced_accuracy": None, "called_unsupported": 1,
         "reason": "the labels hold only one class"},
        {"threshold": 0.9, "balanced_accuracy": None, "called_unsupported": 2,
         "reason": "the labels hold only one class"}]
    same = score_report([True, False, True, False], [1.0] * 4, n_resamples=100)
    assert same["roc_auc"]["value"] == 0.5 and same["by_threshold"] == []


def test_the_command_reports_the_score_and_the_rule(server, tmp_path, capsys):
    from test_judge_eval import rating_rule, write_items

    server.rule = rating_rule
    items = tmp_path / "items.jsonl"
    write_items(items)
    out = tmp_path / "report.json"
    args = ["judge-eval", str(items), "--metric", "answer_relevance", "--label-map",
            "1=unsupported,0=supported", "--llm-base-url", server.url, "--llm-model",
            "test-model", "--quiet"]
    code, stdout, err = run_cli([*args, "--output", str(out)], capsys)
    assert code == 0, err
    r = json.loads(out.read_text())
    assert r["rule"] == ("unsupported when answer_relevance < 0.5 (the default for "
                         "answer_relevance; --threshold sets another)")
    # 6 judged: supported items score 1, 1, 0; unsupported 0, 0, 1 -> of 9 pairs 4 right
    # and 4 ties -> (4 + 2) / 9
    s = r["scores"]
    assert s["items"] == 6 and s["distinct_scores"] == 2
    assert s["roc_auc"]["value"] == pytest.approx(6 / 9)
    assert s["roc_auc"]["ci_low"] <= 6 / 9 <= s["roc_auc"]["ci_high"]
    assert [x["threshold"] for x in s["by_threshold"]] == [1.0]
    assert "score: ROC AUC 0.667 [" in stdout
    assert "rule: unsupported when answer_relevance < 0.5" in stdout
    assert "cross-validated threshold (" in stdout
    code, stdout, _ = run_cli([*args, "--threshold", "0.9"], capsys)
    assert "rule: unsupported when answer_relevance < 0.9 (--threshold)" in stdout


def test_a_review_csv_exported_from_label_is_measured(server, tmp_path, capsys):
    """Issue 25 item 10: judge-eval refused the review CSV of a label file ('--metric must
    be one of ..., got relevance_label') though no --metric was passed."""
    import csv

    from support.fake_llm_server import chat_reply

    from ragmark.analysis.review import COLUMNS

    def rule(body):
        user = body["messages"][-1]["content"]
        return chat_reply("YES" if "Paris" in user.split("passage")[-1] else "NO")

    server.rule = rule
    rows = [("q1@1", "Paris is the capital of France.", "yes"),
            ("q1@2", "Lyon has a large old town.", "no"),
            ("q2@1", "Paris lies on the Seine.", "yes"),
            ("q2@2", "Bananas are yellow.", "no")]
    path = tmp_path / "labels.csv"
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(COLUMNS)
        for rid, passage, human in rows:
            w.writerow([rid, "What is the capital of France?", "", f"[1] {passage}", "",
                        "relevance_label", "1", human])
    out = tmp_path / "r.json"
    code, stdout, err = run_cli(["judge-eval", str(path), "--llm-base-url", server.url,
                                 "--llm-model", "test-model", "--output", str(out), "--quiet"],
                                capsys)
    assert code == 0, err
    r = json.loads(out.read_text())
    assert r["metric"] == "relevance_label" and (r["items"], r["judged"]) == (4, 4)
    assert r["balanced_accuracy"]["value"] == 1.0 and r["scores"]["roc_auc"]["value"] == 1.0


def test_labels_of_one_class_are_measured_without_a_traceback(server, tmp_path, capsys):
    """Issue 61 item 32: three labels exported by annotate, all "supported", ended in
    'ValueError: Out of range float values are not JSON compliant: nan'; nothing was
    written. Each undefined statistic is missing with its reason, in the JSON and the
    console."""
    from test_judge_eval import rating_rule

    server.rule = rating_rule
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({
        "id": f"i{i}", "question": "Capital of France?", "context": "Paris is the capital.",
        "answer": a, "label": 0}) + "\n" for i, a in enumerate(
            ["Paris.", "It is wrong.", "Paris it is."])))
    out = tmp_path / "r.json"
    code, stdout, err = run_cli(["judge-eval", str(items), "--metric", "answer_relevance",
                                 "--label-map", "1=unsupported,0=supported",
                                 "--llm-base-url", server.url, "--llm-model", "test-model",
                                 "--output", str(out), "--quiet"], capsys)
    assert code == 0, err
    assert "Traceback" not in err and "nan" not in out.read_text().lower()
    report = json.loads(out.read_text())
    # issue 61 item 26: each item's value beside its label, as written
    assert [(x["id"], x["label"], x["value"]) for x in report["per_item"]] == [
        ("i0", "supported", 1.0), ("i1", "supported", 0.0), ("i2", "supported", 1.0)]
    s = report["scores"]
    assert s["roc_auc"] == {"value": None, "reason": "the labels hold only one class"}
    assert [x["balanced_accuracy"] for x in s["by_threshold"]] == [None]
    said = " ".join(stdout.split())
    assert "balanced accuracy by threshold: none (the labels hold only one class)" in said
