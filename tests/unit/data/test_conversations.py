"""Conversations (issue 23, item 1, first step): a conversation set or a log of
conversations, each turn a question with its own ground truth and contexts; metrics per
turn, then per turn position and per conversation (mean, last turn, first failing turn),
hand-worked."""

from __future__ import annotations

import json

import pytest
from support.cli import run_cli

P1 = "BM25 ranks documents by term frequency and inverse document frequency."
P2 = "A reranker reorders the candidate passages with a stronger cross-encoder model."
P3 = "Dense retrievers embed queries and passages into the same vector space."

LOG = [
    {"conversation_id": "c1", "turns": [
        {"question": "What does BM25 rank?", "ground_truth_contexts": [P1],
         "answer": "documents", "contexts": [P1]},
        {"question": "And what reorders them afterwards?", "ground_truth_contexts": [P2],
         "answer": "a reranker", "contexts": [P3, P2]}]},
    {"conversation_id": "c2", "turns": [
        {"question": "What reorders candidate passages?", "ground_truth_contexts": [P2],
         "answer": "dense retrievers", "contexts": [P3]}]},
]


def test_a_log_of_conversations_is_scored_per_turn_and_per_conversation(tmp_path, capsys):
    """recall@1 / MRR per turn: c1#1 1 / 1 (P1 first), c1#2 0 / 0.5 (P2 second), c2#1
    0 / 0. By turn: turn 1 (c1, c2) recall@1 1/2, MRR 1/2; turn 2 (c1) 0 and 0.5. Per
    conversation: c1 recall@1 mean 0.5, last 0, first failing turn 2; MRR mean 0.75,
    last 0.5, never under 0.5; c2 all 0, failing at turn 1. Over the conversations:
    recall@1 mean of means 0.25, last turns 0, 2 failing, first failing turn 1.5 on
    average; MRR 0.375, 0.25, 1 failing at turn 1."""
    log = tmp_path / "chats.jsonl"
    log.write_text("\n".join(json.dumps(c) for c in LOG) + "\n", encoding="utf-8")
    out = tmp_path / "r.json"
    code, stdout, err = run_cli(["run", "--outputs", str(log), "--metrics", "recall@1,mrr",
                                 "--output", str(out), "--include-details", "--no-history"],
                                capsys)
    assert code == 0, err
    data = json.loads(out.read_text())
    assert data["per_query"] == {"c1#1": {"recall@1": 1.0, "mrr": 1.0},
                                 "c1#2": {"recall@1": 0.0, "mrr": 0.5},
                                 "c2#1": {"recall@1": 0.0, "mrr": 0.0}}
    conv = data["conversations"]
    assert conv["conversations"] == 2
    by_turn = {t["turn"]: t for t in conv["by_turn"]}
    assert by_turn[1]["questions"] == 2 and by_turn[2]["questions"] == 1
    assert by_turn[1]["metrics"]["recall@1"] == {"mean": 0.5, "n": 2}
    assert by_turn[2]["metrics"]["mrr"] == {"mean": 0.5, "n": 1}
    rows = {r["conversation_id"]: r["metrics"] for r in conv["by_conversation"]}
    assert rows["c1"]["recall@1"] == {"mean": 0.5, "last": 0.0, "first_failing_turn": 2}
    assert rows["c1"]["mrr"] == {"mean": 0.75, "last": 0.5, "first_failing_turn": None}
    assert rows["c2"]["mrr"] == {"mean": 0.0, "last": 0.0, "first_failing_turn": 1}
    assert conv["overall"]["recall@1"] == {
        "mean_of_conversations": 0.25, "n": 2, "last_turn": 0.0, "n_last": 2,
        "failing_conversations": 2, "mean_first_failing_turn": 1.5}
    assert conv["overall"]["mrr"]["mean_of_conversations"] == pytest.approx(0.375)
    assert conv["overall"]["mrr"]["failing_conversations"] == 1
    assert "2 conversations, by turn" in stdout
    # each turn knows the conversation it is in and what was said before it
    (second,) = [q for q in data["queries"] if q["id"] == "c1#2"]
    assert second["question"] == "And what reorders them afterwards?"
    from ragmark.data.outputs import load_outputs

    sample = {s.id: s for s in load_outputs(log).dataset.samples}["c1#2"]
    assert sample.extra["conversation_id"] == "c1" and sample.extra["turn"] == 2
    assert sample.extra["history"] == [{"question": "What does BM25 rank?",
                                        "answer": "documents"}]


def test_a_conversation_set_runs_on_ragmark_s_own_pipeline(tmp_path, capsys):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i, text in enumerate([P1, P2, P3], start=1):
        (corpus / f"p{i}.txt").write_text(text, encoding="utf-8")
    conv = [{"conversation_id": c["conversation_id"], "turns": [
        {k: v for k, v in t.items() if k not in ("answer", "contexts")} for t in c["turns"]]}
        for c in LOG]
    conv[0]["turns"].append({"question": "Thanks!"})  # a turn with nothing to retrieve
    ds = tmp_path / "chats.jsonl"
    ds.write_text("\n".join(json.dumps(c) for c in conv) + "\n", encoding="utf-8")
    out = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--dataset", str(ds), "--corpus", str(corpus),
                            "--metrics", "recall@3", "--output", str(out), "--no-history",
                            "--quiet"], capsys)
    assert code == 0, err
    data = json.loads(out.read_text())
    assert list(data["per_query"]) == ["c1#1", "c1#2", "c1#3", "c2#1"]
    assert data["per_query"]["c1#3"]["recall@3"] is None  # no ground truth for "Thanks!"
    assert data["conversations"]["by_turn"][2]["questions"] == 1


@pytest.mark.parametrize(("conv", "message"), [
    ({"conversation_id": "c1", "turns": []}, "non-empty list of turns"),
    ({"conversation_id": "c1", "turns": ["hi"]}, "turns[0]"),
    ({"conversation_id": "c1", "turns": [{"id": "x", "question": "q?", "answer": "a",
                                          "contexts": []}]}, "takes no 'id'"),
])
def test_bad_conversations_are_errors_naming_the_place(tmp_path, capsys, conv, message):
    log = tmp_path / "bad.jsonl"
    log.write_text(json.dumps(conv) + "\n", encoding="utf-8")
    code, _, err = run_cli(["run", "--outputs", str(log), "--no-history"], capsys)
    assert code == 2 and message in err and "line 1" in err and "Traceback" not in err


def test_a_repeated_conversation_id_is_an_error(tmp_path, capsys):
    log = tmp_path / "twice.jsonl"
    log.write_text("\n".join(json.dumps(c) for c in [LOG[0], LOG[0]]) + "\n",
                   encoding="utf-8")
    code, _, err = run_cli(["run", "--outputs", str(log), "--no-history"], capsys)
    assert code == 2 and "duplicate conversation id" in err and "line 2" in err
