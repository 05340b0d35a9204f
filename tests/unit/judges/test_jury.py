"""A jury (issue 63, item 6): ``--judge-llm a --judge-llm b`` asks every judge of both
models. Hand-worked, a yes/no criterion on three questions, P(yes) by juror: a 0.9,
0.8, 0.2; b 0.7, 0.3 (NO), and on q2 no usable answer. Values: q0 0.8 (hard 1),
q1 0.55 (hard votes 1 and 0: 0.5), q2 0.2 (a alone; b's reason kept). Krippendorff's
alpha on the values (interval; q2 has one value and does not count): disagreement within
the questions 2 * (0.2^2 + 0.5^2) = 0.58, between all four values 2 * 0.83 = 1.66, so
alpha = 1 - 3 * 0.58 / 1.66 = -0.0482; on the verdicts (nominal: 1,1 and 1,0):
1 - 3 * 2 / (2 * 3 * 1) = 0. Juror means: a 0.6333, b 0.5."""

from __future__ import annotations

import pytest
from judges_support import COMPLETE, run_complete, weighed_reply
from support.fake_llm_server import chat_reply

CRITERION = COMPLETE
P_YES = {("a", "q0"): 0.9, ("a", "q1"): 0.8, ("a", "q2"): 0.2, ("b", "q0"): 0.7,
         ("b", "q1"): 0.3}


def _rule(body):
    text = " ".join(m["content"] for m in body["messages"])  # a re-ask too
    q = next(q for q in ("q0", "q1", "q2") if f"Question {q}" in text)
    p = P_YES.get((body["model"], q))
    if p is None:
        return chat_reply("perhaps")
    return weighed_reply([("YES" if p >= 0.5 else "NO", [("YES", p), ("NO", 1 - p)])])


def _run(server, tmp_path, capsys, *more, expect=0):
    return run_complete(server, tmp_path, capsys, *more, expect=expect)


def test_a_jury_combines_its_jurors_and_measures_their_agreement(server, tmp_path, capsys):
    server.rule = _rule
    data, said = _run(server, tmp_path, capsys, "--judge-llm", "a", "--judge-llm", "b")
    assert {r.body["model"] for r in server.requests if r.body} == {"a", "b"}
    q = {r["id"]: r["metrics"]["complete"] for r in data["queries"]}
    assert q["q0"]["value"] == pytest.approx(0.8) and q["q0"]["hard_value"] == 1.0
    assert q["q1"]["value"] == pytest.approx(0.55) and q["q1"]["hard_value"] == 0.5
    assert q["q1"]["jurors"] == {"a": pytest.approx(0.8), "b": pytest.approx(0.3)}
    assert q["q2"]["value"] == pytest.approx(0.2) and q["q2"]["jurors"]["b"] is None
    assert "unusable judge output" in q["q2"]["jurors_missing"]["b"]
    jury = data["llm"]["jury"]["complete"]
    assert jury["alpha_values"]["value"] == pytest.approx(1 - 3 * 0.58 / 1.66)
    assert jury["alpha_values"]["units"] == 2
    assert jury["alpha_verdicts"]["value"] == pytest.approx(0.0)
    assert jury["means"] == {"a": pytest.approx(0.63333, abs=1e-5), "b": pytest.approx(0.5)}
    assert set(data["llm"]["jurors"]) == {"a", "b"}
    assert "jury of 2 on complete (3 questions): Krippendorff's alpha -0.05" in said


def test_a_jury_of_one_or_of_the_same_model_twice_is_refused(server, tmp_path, capsys):
    server.rule = _rule
    _, said = _run(server, tmp_path, capsys, "--judge-llm", "a", expect=2)
    assert "two jurors or more" in said
    _, said = _run(server, tmp_path, capsys, "--judge-llm", "a", "--judge-llm", "a", expect=2)
    assert "given twice" in said
    _, said = _run(server, tmp_path, capsys, "--judge-llm", "a@", "--judge-llm", "b", expect=2)
    assert "MODEL or MODEL@BASE_URL" in said
    assert not [r for r in server.requests if r.body]


def test_a_jury_dry_run_counts_every_juror(server, tmp_path, capsys):
    server.rule = _rule
    _, said = _run(server, tmp_path, capsys, "--judge-llm", "a", "--judge-llm", "b",
                   "--dry-run")
    assert "6 judge calls" in said
