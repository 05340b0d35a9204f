"""Issue 25 item 9: a judge that gives one value to (nearly) every item, or contradicts
an exact metric, is flagged in every output."""

from __future__ import annotations

import json
from pathlib import Path

from support.cli import run_cli
from support.fake_llm_server import chat_reply

from ragmark.judges.checks import degenerate_notes, one_value
from ragmark.types import Score

DEMO = Path(__file__).resolve().parents[3] / "src" / "ragmark" / "demo"


def test_one_value_for_nearly_every_item():
    assert one_value("answer_relevance", [0.25] * 10) == (
        "answer_relevance gave the same value (0.25) to 10 of 10 items: a judge that does "
        "not tell them apart measures nothing; check it against people's labels with "
        "ragmark judge-eval")
    assert one_value("x", [1.0] * 19 + [0.0]) is not None  # 95%
    assert one_value("x", [1.0] * 18 + [0.0] * 2) is None  # 90%
    assert one_value("x", [1.0] * 7) is None  # too few to say


def test_a_judge_that_contradicts_exact_match():
    qs = [{"exact_match": Score(1.0), "answer_correctness": Score(v)} for v in (0.0, 0.0, 1.0)]
    qs += [{"exact_match": Score(0.0), "answer_correctness": Score(0.0)}]
    assert degenerate_notes(qs, ["answer_correctness"]) == [
        "answer_correctness is at most 0.25 on 2 of the 3 questions whose exact_match is 1: "
        "the judge contradicts an exact metric there; check it with ragmark judge-eval"]


def test_a_run_whose_judge_rates_everything_alike_says_so(server, tmp_path, capsys):
    server.rule = lambda body: chat_reply(json.dumps({"rating": 2, "reason": "meh"}))
    out = tmp_path / "r.json"
    code, stdout, err = run_cli(["run", "--dataset", str(DEMO / "questions.json"), "--corpus",
                                 str(DEMO / "corpus"), "--metrics", "mrr,answer_relevance",
                                 "--llm-base-url", server.url, "--llm-model", "test-model",
                                 "--output", str(out), "--quiet"], capsys)
    assert code == 0, err
    note = ("answer_relevance gave the same value (0.25) to 8 of 8 questions: a judge that "
            "does not tell them apart measures nothing")
    assert any(n.startswith(note) for n in json.loads(out.read_text())["notes"])
    assert note in " ".join(stdout.split())


def test_judge_eval_warns_when_every_verdict_is_the_same(server, tmp_path, capsys):
    server.rule = lambda body: chat_reply(json.dumps({"rating": 1, "reason": "no"}))
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"question": "q?", "context": "c", "answer": f"a{i}",
                                         "label": "yes" if i % 2 else "no"}) + "\n"
                             for i in range(10)))
    code, stdout, err = run_cli(["judge-eval", str(items), "--metric", "answer_relevance",
                                 "--llm-base-url", server.url, "--llm-model", "test-model",
                                 "--output", str(tmp_path / "r.json"), "--quiet"], capsys)
    assert code == 0, err
    r = json.loads((tmp_path / "r.json").read_text())
    assert r["warnings"][1].startswith("the judge called all 10 items unsupported: its "
                                       "agreement with the labels (kappa) is 0")
    assert "warning: the judge called all 10 items unsupported" in stdout


def test_label_notes_a_judge_that_says_yes_to_every_passage(server, tmp_path, capsys):
    server.rule = lambda body: chat_reply("YES")
    code, stdout, err = run_cli(["label", "--dataset", str(DEMO / "questions.json"),
                                 "--corpus", str(DEMO / "corpus"), "--top-k", "3",
                                 "--llm-base-url", server.url, "--llm-model", "test-model",
                                 "--output", str(tmp_path / "lab"), "--quiet"], capsys)
    assert code == 0, err
    (note,) = json.loads((tmp_path / "lab.json").read_text())["notes"]
    assert note.startswith("the relevance judge gave the same value (1) to ")
    assert "distinct passages: a judge that does not tell them apart" in note
    assert f"Note: {note}" in (tmp_path / "lab.md").read_text()
