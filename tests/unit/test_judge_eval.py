"""`ragmark judge-eval`: the statistics equal scikit-learn's, the bootstrap intervals
cover by simulation, and the command end to end against the scripted server (JSONL and
review CSV inputs, the label map, failures kept out of the statistics, repeats)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.metrics import (
    balanced_accuracy_score,
    cohen_kappa_score,
    confusion_matrix,
    precision_recall_fscore_support,
)
from support.cli import run_cli
from support.fake_llm_server import chat_reply

from ragmark.analysis.review import join_contexts
from ragmark.judge_eval.items import label_map, split_contexts
from ragmark.stats.agreement import evaluate, statistics


@pytest.mark.parametrize("seed", range(5))
def test_statistics_equal_scikit_learn(seed):
    rng = np.random.default_rng(seed)
    truth = rng.random(60) < 0.4
    pred = np.where(rng.random(60) < 0.75, truth, ~truth)
    got = evaluate(truth, pred, n_resamples=200)
    p, r, f, _ = precision_recall_fscore_support(truth, pred, pos_label=True,
                                                 average="binary", zero_division=np.nan)
    assert got["balanced_accuracy"]["value"] == pytest.approx(
        balanced_accuracy_score(truth, pred), abs=1e-12)
    assert got["precision"]["value"] == pytest.approx(p, abs=1e-12)
    assert got["recall"]["value"] == pytest.approx(r, abs=1e-12)
    assert got["f1"]["value"] == pytest.approx(f, abs=1e-12)
    assert got["kappa"]["value"] == pytest.approx(cohen_kappa_score(truth, pred), abs=1e-12)
    (tn, fp), (fn, tp) = confusion_matrix(truth, pred, labels=[False, True])
    assert got["confusion"] == {
        "labels unsupported": {"judge unsupported": tp, "judge supported": fn},
        "labels supported": {"judge unsupported": fp, "judge supported": tn}}
    for k in ("balanced_accuracy", "precision", "recall", "f1", "kappa"):
        assert got[k]["ci_low"] <= got[k]["value"] <= got[k]["ci_high"]


def test_undefined_statistics_say_why():
    got = evaluate([False, False, True], [False, False, False], n_resamples=100)
    assert got["precision"] == {"value": None,
                                "reason": "the judge called no item unsupported"}
    assert got["recall"]["value"] == 0.0
    one_class = statistics(np.array([False, False]), np.array([False, True]))
    assert np.isnan(one_class["kappa"]) or one_class["kappa"] == 0.0


def test_bootstrap_intervals_cover_the_population_value():
    """A judge with sensitivity 0.8 and specificity 0.7 on items that are unsupported with
    probability 0.3: the true balanced accuracy is 0.75."""
    rng = np.random.default_rng(11)
    covered, draws = 0, 300
    for i in range(draws):
        truth = rng.random(200) < 0.3
        pred = np.where(truth, rng.random(200) < 0.8, rng.random(200) < 0.3)
        ba = evaluate(truth, pred, n_resamples=500, seed=i)["balanced_accuracy"]
        covered += ba["ci_low"] <= 0.75 <= ba["ci_high"]
    assert 0.91 <= covered / draws <= 0.98


def test_label_map_and_contexts():
    m = label_map("1=unsupported,0=supported,maybe=unsupported")
    assert m["1"] is True and m["0"] is False and m["maybe"] is True and m["yes"] is False
    assert m["hallucinated"] is True
    assert split_contexts(join_contexts(["first one", "second\nline"])) == (
        "first one", "second line")


def rating_rule(body):
    """answer_relevance: rating 1 for answers that say 'wrong', 'garbage' for 'broken',
    else 5."""
    users = [m["content"] for m in body["messages"] if m["role"] == "user"]
    item = users[-2] if "could not be used" in users[-1] else users[-1]
    if "broken" in item:
        return chat_reply("I'd rather not.")
    return chat_reply(json.dumps({"rating": 1 if "wrong" in item else 5, "reason": "r"}))


ITEMS = [  # (answer, label: 1 = hallucinated in this set)
    ("Paris is the capital.", 0), ("The capital is wrong here.", 1), ("Lyon, wrong.", 1),
    ("It is Paris.", 1), ("Paris.", 0), ("A broken answer.", 0), ("wrong again", 0),
]


def write_items(path):
    path.write_text("\n".join(json.dumps({"id": f"i{i}", "question": "Capital of France?",
                                          "context": "Paris is the capital of France.",
                                          "answer": a, "label": lab})
                              for i, (a, lab) in enumerate(ITEMS)) + "\n")


def test_judge_eval_end_to_end(server, tmp_path, capsys):
    server.rule = rating_rule
    items = tmp_path / "items.jsonl"
    write_items(items)
    out = tmp_path / "report.json"
    code, stdout, err = run_cli(["judge-eval", str(items), "--metric", "answer_relevance",
                                 "--label-map", "1=unsupported,0=supported", "--llm-base-url",
                                 server.url, "--llm-model", "test-model", "--output", str(out),
                                 "--quiet"], capsys)
    assert code == 0, err
    r = json.loads(out.read_text())
    # judged: 6 (the broken one has no verdict); judge says unsupported for the 3 'wrong'
    assert (r["items"], r["judged"]) == (7, 6)
    assert r["failure_rate"] == pytest.approx(1 / 7)
    assert r["confusion"] == {"labels unsupported": {"judge unsupported": 2,
                                                     "judge supported": 1},
                              "labels supported": {"judge unsupported": 1,
                                                   "judge supported": 2}}
    assert r["precision"]["value"] == pytest.approx(2 / 3)
    assert r["balanced_accuracy"]["value"] == pytest.approx((2 / 3 + 2 / 3) / 2)
    assert r["threshold"] == 0.5 and r["llm"]["judge_failures"] == 1
    assert "failure rate 14.3% (1 items without a verdict" in stdout
    assert "balanced_accuracy 0.667 [" in stdout

    # repeats at a temperature: this server is deterministic, so nothing flips
    code, stdout, _ = run_cli(["judge-eval", str(items), "--metric", "answer_relevance",
                               "--label-map", "1=unsupported,0=supported", "--repeats", "2",
                               "--temperature", "0.7", "--llm-base-url", server.url,
                               "--llm-model", "test-model", "--quiet"], capsys)
    assert code == 0
    assert "self-consistency over 2 repeats: 0.0% of 6 items flip their verdict" in stdout
    temps = {r.body.get("temperature") for r in server.requests[-14:]}
    seeds = {r.body.get("seed") for r in server.requests[-14:]}
    assert temps == {0.7} and seeds == {0, 1}


def test_several_peoples_labels_give_their_agreement_beside_the_judges(server, tmp_path,
                                                                      capsys):
    """Issue 35: two people labelled four items (ragmark annotate --overlap): the judge is
    measured against the majority (an even split left out), and the report gives the
    people's agreement (the ceiling) beside the judge's with them. Hand-worked values:
    people: o_FF 2, o_FT = o_TF 1, o_TT 4, n_F 3, n_T 5, n 8, alpha = 1 - 7 * 2 / 30 =
    16/30; kappa = (3/4 - 1/2) / (1 - 1/2) = 1/2. With the judge as a third coder (F, T,
    T on i0-i2; i3, left out, is not judged): o_FF 3, o_FT = o_TF 1, o_TT 6, n_F 4,
    n_T 7, n 11, alpha = 1 - 10 * 2 / 56 = 36/56."""
    server.rule = rating_rule
    items = tmp_path / "labels.jsonl"
    bob = [0, 1, 1, 0]  # bob disagrees with ann on item 3
    rows = [{"id": f"i{i}", "question": "Capital of France?", "context": "Paris is the "
             "capital of France.", "answer": a, "label": lab, "annotator": "ann"}
            for i, (a, lab) in enumerate(ITEMS)]
    rows += [{**rows[i], "label": b, "annotator": "bob"} for i, b in enumerate(bob)]
    items.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "r.json"
    code, stdout, err = run_cli(["judge-eval", str(items), "--metric", "answer_relevance",
                                 "--label-map", "1=unsupported,0=supported", "--llm-base-url",
                                 server.url, "--llm-model", "test-model", "--output", str(out)],
                                capsys)
    assert code == 0, err
    r = json.loads(out.read_text())
    assert r["items"] == 6 and r["people"]["split"] == 1  # i3 split evenly: left out
    p, j = r["people"], r["judge_with_people"]
    assert p["annotators"] == ["ann", "bob"] and p["items"] == 4
    assert p["alpha"]["value"] == pytest.approx(16 / 30, abs=1e-12)
    assert p["kappa"]["value"] == pytest.approx(0.5, abs=1e-12)
    assert j["items"] == 4 and j["alpha"]["value"] == pytest.approx(36 / 56, abs=1e-12)
    assert set(j["kappa"]) == {"ann", "bob"}
    text = " ".join(stdout.split())
    assert "people (ann, bob) on the 4 items two or more labelled: alpha 0.533 [" in text
    assert "the ceiling a judge can reach on these labels; 1 items left out" in text
    assert "the judge with them: alpha 0.643 [" in text


def test_dry_run_counts_the_calls_of_every_repeat_and_calls_nothing(server, tmp_path,
                                                                    capsys):
    """Issue 34: judge-eval takes --dry-run as the other commands that call a model do:
    the calls not in the cache over every repeat (each its own seed), nothing called or
    written; after a real run of one repeat, its calls are counted as cached."""
    server.rule = rating_rule
    items, out = tmp_path / "items.jsonl", tmp_path / "report.json"
    write_items(items)
    args = ["judge-eval", str(items), "--metric", "answer_relevance", "--llm-base-url",
            server.url, "--llm-model", "test-model", "--output", str(out)]
    code, stdout, err = run_cli([*args, "--repeats", "2", "--dry-run"], capsys)
    assert code == 0, err
    text = " ".join(stdout.split())
    assert "dry run: answer_relevance of 7 items x 2 repeats x 1 judges" in text
    assert "dry run: 14 judge calls (at most 28 with re-asks) to test-model at " in text
    assert ", 0 more served from the cache" in text and "Nothing was called" in text
    assert server.requests == [] and not out.exists()
    assert run_cli([*args, "--quiet"], capsys)[0] == 0  # repeat 0 (seed 0) is cached now
    asked = len(server.requests)
    code, stdout, _ = run_cli([*args, "--repeats", "2", "--dry-run"], capsys)
    assert code == 0 and len(server.requests) == asked
    assert "dry run: 7 judge calls (at most 14 with re-asks) to test-model at " in " ".join(
        stdout.split())
    assert f", {asked} more served from the cache" in " ".join(stdout.split())  # re-ask too


def test_a_review_csv_and_bad_inputs(server, tmp_path, capsys):
    server.rule = rating_rule
    csv_path = tmp_path / "review.csv"
    csv_path.write_text(
        "id,question,answer,contexts,expected_answer,metric,judge,human\n"
        "q1,Capital?,Paris.,[1] Paris is the capital.,,answer_relevance,1,yes\n"
        "q2,Capital?,wrong,[1] Paris is the capital.,,answer_relevance,0,no\n"
        "q3,Capital?,Paris!,[1] Paris is the capital.,,answer_relevance,1,\n", "utf-8")
    code, stdout, err = run_cli(["judge-eval", str(csv_path), "--llm-base-url", server.url,
                                 "--llm-model", "test-model", "--quiet"], capsys)
    assert code == 0, err
    assert "metric answer_relevance" in stdout and "2 of 2 items judged" in stdout
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"answer": "a", "context": "c", "label": "perhaps"}\n', "utf-8")
    code, _, err = run_cli(["judge-eval", str(bad), "--llm-base-url", server.url,
                            "--llm-model", "test-model"], capsys)
    assert code == 2 and "line 1" in err and "label 'perhaps'" in err
    assert "--label-map" in err


def test_two_judges_side_by_side(server, tmp_path, capsys):
    """'strict-model' calls an answer unsupported only when it says 'wrong'; 'lenient'
    never does: their agreement and McNemar's test on the same items."""
    def rule(body):
        if body["model"] == "lenient":
            return chat_reply(json.dumps({"rating": 5, "reason": "r"}))
        return rating_rule(body)

    server.rule = rule
    items = tmp_path / "items.jsonl"
    write_items(items)
    out = tmp_path / "two.json"
    code, stdout, err = run_cli(["judge-eval", str(items), "--metric", "answer_relevance",
                                 "--label-map", "1=unsupported,0=supported",
                                 "--judge-model", "strict-model", "--judge-model", "lenient",
                                 "--llm-base-url", server.url, "--output", str(out),
                                 "--quiet"], capsys)
    assert code == 0, err
    r = json.loads(out.read_text())
    assert set(r["judges"]) == {"strict-model", "lenient"}
    assert r["judges"]["lenient"]["confusion"]["labels unsupported"]["judge supported"] == 3
    (pair,) = r["pairs"]
    # both judged the 6 usable items; they disagree on the 3 'wrong' answers
    assert pair["items"] == 6 and pair["raw_agreement"] == pytest.approx(0.5)
    # strict is right where lenient is wrong on 2 (truly unsupported 'wrong' answers),
    # lenient where strict is wrong on 1 ('wrong again', labelled supported)
    assert (pair["paired"]["only_first_right"], pair["paired"]["only_second_right"]) == (2, 1)
    assert pair["paired"]["p_value"] == pytest.approx(1.0)
    assert "strict-model vs lenient on 6 items both judged: agree on 50.0%" in stdout


def test_one_verdict_for_every_item_is_warned_of_however_few():
    """Issue 48, item 14: four items all called supported gave no warning (the guide
    says judge-eval warns when every verdict is the same: kappa is 0 by construction)."""
    from ragmark.judge_eval.measure import _one_verdict

    said = _one_verdict([False, False, False, False])
    assert said is not None and said.startswith("the judge called all 4 items supported")
    assert _one_verdict([False, True, False, False]) is None
    assert _one_verdict([True]) is None  # one item says nothing
