"""`ragmark judge-eval --metric pairwise:CRITERION` (issue 36): a pairwise judge measured
against people's preferences between two answers. Hand-worked on the scripted server: a
judge that prefers a real answer to "No idea." and calls two real answers a tie; two
people, one pair they split (left out). Accuracy on the pairs people did not call a
tie 6/7; Cohen's kappa over A, B, tie 30/38; no position bias; the people's alpha equal
to the krippendorff package's."""

from __future__ import annotations

import json
import re

import pytest
from support.cli import run_cli
from support.fake_llm_server import chat_reply

NO = "No idea."


def fair(body):
    user = body["messages"][-1]["content"]
    a = dict(re.findall(r'<data name="(\w+_answer)">\n(.*?)\n</data>', user, re.S))
    first, second = a["first_answer"] != NO, a["second_answer"] != NO
    better = "tie" if first == second else ("first" if first else "second")
    return chat_reply(json.dumps({"better": better, "reason": "r"}))


def pair(i, a, b, preferred, annotator="ann"):
    return {"id": f"p{i}", "question": f"Question {i}?", "answer_a": a, "answer_b": b,
            "contexts": [f"Context {i}."], "preferred": preferred, "annotator": annotator}


def preferences(tmp_path):
    rows = [pair(i, f"Answer {i}.", NO, "A") for i in range(4)]
    rows += [pair(4, NO, "Answer 4.", "B"), pair(5, NO, "Answer 5.", "model_b")]
    rows += [pair(6, "Answer 6.", "Another 6.", "tie"),
             pair(7, "Answer 7.", "Another 7.", "tie (bothbad)"),
             pair(8, "Answer 8.", "Another 8.", "a")]  # people A, the judge a tie
    rows += [pair(0, "Answer 0.", NO, "A", "bob"), pair(4, NO, "Answer 4.", "B", "bob"),
             pair(7, "Answer 7.", "Another 7.", "A", "bob")]  # p7: split, left out
    p = tmp_path / "prefs.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return p


def test_the_judge_is_measured_against_peoples_preferences(tmp_path, server, capsys):
    server.rule = fair
    out = tmp_path / "r.json"
    code, stdout, err = run_cli(["judge-eval", str(preferences(tmp_path)), "--metric",
                                 "pairwise:overall", "--llm-base-url", server.url,
                                 "--llm-model", "m", "--output", str(out), "--quiet",
                                 "--resamples", "500"], capsys)
    assert code == 0, err
    r = json.loads(out.read_text())
    assert r["pairs"] == 8 and r["split"] == 1
    assert r["people"] == {"A": 5, "B": 2, "tie": 1}
    assert r["judge"] == {"A": 4, "B": 2, "tie": 2}
    assert r["accuracy"]["value"] == pytest.approx(6 / 7) and r["accuracy"]["n"] == 7
    assert r["kappa"]["value"] == pytest.approx(30 / 38)  # po 7/8, pe 26/64
    assert r["kappa"]["ci_low"] <= 30 / 38 <= r["kappa"]["ci_high"]
    assert r["position_bias"]["rate"] == 0.0
    assert len(server.requests) == 16  # 8 pairs x both orders
    kd = pytest.importorskip("krippendorff")
    want = kd.alpha(reliability_data=[[1.0, 0.0, 0.5], [1.0, 0.0, 1.0]],
                    level_of_measurement="nominal")
    a = r["people_agreement"]
    assert a["annotators"] == ["ann", "bob"] and a["pairs"] == 3
    assert a["alpha"]["value"] == pytest.approx(want)
    text = " ".join(stdout.split())
    assert "people preferred A 5, B 2, tie 1; the judge A 4, B 2, tie 2" in text
    assert "accuracy on the 7 pairs people did not call a tie 0.857 [" in text
    assert "kappa over A, B, tie (8 pairs) 0.789 [" in text


def test_bad_preferences_and_flags_exit_2(tmp_path, server, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(pair(0, "a", "b", "first")) + "\n")
    code, _, err = run_cli(["judge-eval", str(bad), "--metric", "pairwise:overall",
                            "--llm-base-url", server.url, "--llm-model", "m"], capsys)
    assert code == 2 and "bad.jsonl" in err and "line 1" in err and "preferred" in err
    assert "expected A, B or tie, got 'first'" in err
    code, _, err = run_cli(["judge-eval", str(preferences(tmp_path)), "--metric",
                            "pairwise:nicest", "--llm-base-url", server.url,
                            "--llm-model", "m"], capsys)
    assert code == 2 and "the pairwise criteria are overall" in err
    code, _, err = run_cli(["judge-eval", str(preferences(tmp_path)), "--metric",
                            "pairwise:overall", "--align", "--llm-base-url", server.url,
                            "--llm-model", "m"], capsys)
    assert code == 2 and "--align does not apply to preferences" in err
    code, stdout, err = run_cli(["judge-eval", str(preferences(tmp_path)), "--metric",
                                 "pairwise:overall", "--dry-run", "--llm-base-url",
                                 server.url, "--llm-model", "m"], capsys)
    assert code == 0, err
    assert "dry run: 16 judge calls" in " ".join(stdout.split())
    assert server.requests == []
