"""Abstention (issue 23, item 2): questions marked unanswerable (``"answerable": false``,
SQuAD 2.0's ``"is_impossible": true``), refusals detected by the default phrases, an
empty answer and ``--refusal-pattern``; abstention recall and precision, over-refusal and
answered accuracy, hand-worked; the answer metrics of an unanswerable question missing
"unanswerable by design", never 0 and never NaN."""

from __future__ import annotations

import json

import pytest
from support.cli import run_cli

from ragmark.metrics.abstention import UNANSWERABLE

P1 = "BM25 ranks documents by term frequency and inverse document frequency."
P2 = "A reranker reorders the candidate passages with a stronger cross-encoder model."

# two answerable questions and two unanswerable ones (both ways of marking them)
ITEMS = [
    {"id": "a1", "question": "What does BM25 rank documents by?",
     "expected_answer": "term frequency and inverse document frequency"},
    {"id": "u1", "question": "Who invented the transformer in 1850?", "is_impossible": True},
    {"id": "a2", "question": "What does a reranker reorder?",
     "expected_answer": "the candidate passages"},
    {"id": "u2", "question": "What is the capital of Atlantis?", "answerable": False},
]


ALL = "abstention_recall,abstention_precision,over_refusal,answered_accuracy"


def _log(tmp_path, answers: dict[str, str], name: str):
    path = tmp_path / f"{name}.jsonl"
    path.write_text("\n".join(json.dumps({**it, "answer": answers[it["id"]],
                                          "contexts": [P1, P2]}) for it in ITEMS) + "\n",
                    encoding="utf-8")
    return path


def _run(tmp_path, capsys, log, *extra: str) -> dict:
    out = tmp_path / f"{log.stem}.out.json"
    code, _, err = run_cli(["run", "--outputs", str(log), "--output", str(out),
                            "--no-history", "--quiet", *extra], capsys)
    assert code == 0, err
    return json.loads(out.read_text())


def test_an_always_answering_system_abstains_never(tmp_path, capsys):
    """Every question answered: abstention recall 0/2 = 0; no refusal, so abstention
    precision has no value (missing, with why); over-refusal 0/2; answered accuracy:
    a1 exact (1), a2 not (0) -> 0.5."""
    log = _log(tmp_path, {"a1": "Term frequency and inverse document frequency.",
                          "u1": "Vaswani invented it.", "a2": "Documents.",
                          "u2": "Poseidonia."}, "answers")
    data = _run(tmp_path, capsys, log)
    m, c = data["metrics"], data["counts"]
    assert m["abstention_recall"] == 0.0 and c["abstention_recall"]["n"] == 2
    assert "abstention_precision" not in m  # not a default: never refusing leaves it empty
    code, _, err = run_cli(["run", "--outputs", str(log), "--metrics",
                            "abstention_precision", "--no-history", "--quiet"], capsys)
    assert code == 1 and ("abstention_precision got no value for any of 4 questions: "
                          "answered (abstention precision counts the refusals)") in err
    assert m["over_refusal"] == 0.0 and c["over_refusal"]["n"] == 2
    assert m["answered_accuracy"] == 0.5
    # the answer metrics of the unanswerable ones: missing, by design
    assert c["token_f1"]["n"] == 2
    assert c["token_f1"]["reasons"] == {UNANSWERABLE: 2}
    assert data["per_query"]["u1"]["token_f1"] is None


def test_a_system_refusing_exactly_the_unanswerable_ones(tmp_path, capsys):
    """Refusals on u1 (a default phrase) and u2 (empty): recall 2/2, precision 2/2,
    over-refusal 0/2."""
    log = _log(tmp_path, {"a1": "term frequency and inverse document frequency",
                          "u1": "I don't know.", "a2": "the candidate passages",
                          "u2": ""}, "refuses")
    data = _run(tmp_path, capsys, log, "--metrics", ALL)
    m = data["metrics"]
    assert (m["abstention_recall"], m["abstention_precision"], m["over_refusal"],
            m["answered_accuracy"]) == (1.0, 1.0, 0.0, 1.0)


def test_refusal_patterns_and_over_refusal(tmp_path, capsys):
    """"Not in my sources." is no default phrase: with --refusal-pattern it is a refusal.
    Refusing a2 (answerable) and u1: recall 1/2, precision 1/2, over-refusal 1/2."""
    log = _log(tmp_path, {"a1": "term frequency and inverse document frequency",
                          "u1": "Not in my sources.", "a2": "Not in my sources.",
                          "u2": "Poseidonia."}, "own")
    plain = _run(tmp_path, capsys, log)["metrics"]
    assert plain["abstention_recall"] == 0.0 and plain["over_refusal"] == 0.0
    data = _run(tmp_path, capsys, log, "--refusal-pattern", r"not in my\s+sources",
                "--metrics", ALL + ",refusal")
    m = data["metrics"]
    assert data["config"]["refusal_patterns"] == [r"not in my\s+sources"]  # in its hash
    assert (m["abstention_recall"], m["abstention_precision"], m["over_refusal"]) == (
        0.5, 0.5, 0.5)
    assert m["refusal"] == 0.5  # the production measure follows the same patterns
    code, _, err = run_cli(["run", "--outputs", str(log), "--refusal-pattern", "([",
                            "--no-history"], capsys)
    assert code == 2 and "not a regular expression" in err


def test_a_run_of_a_set_with_unanswerable_questions(tmp_path, capsys):
    """ragmark's own pipeline on a context set with SQuAD 2.0-style items: the
    unanswerable ones need no ground-truth passage; their retrieval and answer metrics
    are missing by design; the extractive generator answers nothing when nothing is
    retrieved, which counts as a refusal."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.txt").write_text(P1, encoding="utf-8")
    (corpus / "b.txt").write_text(P2, encoding="utf-8")
    items = [{**it, "ground_truth_contexts": [P1 if it["id"] == "a1" else P2]}
             if it["id"].startswith("a") else
             {**it, **({"ground_truth_contexts": []} if it["id"] == "u1" else {})}
             for it in ITEMS]
    ds = tmp_path / "set.json"
    ds.write_text(json.dumps(items), encoding="utf-8")
    out = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--dataset", str(ds), "--corpus", str(corpus),
                            "--output", str(out), "--include-details", "--no-history",
                            "--quiet"], capsys)
    assert code == 0, err
    data = json.loads(out.read_text())
    assert data["counts"]["recall@3"]["reasons"] == {UNANSWERABLE: 2}
    assert data["counts"]["abstention_recall"]["n"] == 2
    assert data["metrics"]["abstention_recall"] == 1.0
    truth = {q["id"]: q["ground_truth"] for q in data["queries"]}
    assert truth["u1"]["answerable"] is False and "answerable" not in truth["a1"]


@pytest.mark.parametrize(("item", "message"), [
    ({"question": "q?", "answer": "a", "contexts": [], "answerable": "no"},
     "expected true or false"),
    ({"question": "q?", "answer": "a", "contexts": [], "answerable": False,
      "is_impossible": False}, "disagree"),
])
def test_a_bad_flag_is_an_error_naming_the_field(tmp_path, capsys, item, message):
    log = tmp_path / "bad.jsonl"
    log.write_text(json.dumps(item) + "\n", encoding="utf-8")
    code, _, err = run_cli(["run", "--outputs", str(log), "--no-history"], capsys)
    assert code == 2 and message in err and "line 1" in err


def test_the_refusal_judge_decides_instead_of_the_phrases(tmp_path, capsys, server):
    """Answers: a1 'I don't know the details, but term frequency and inverse document
    frequency.' (the phrases call it a refusal; it answers), u1 'The documents are silent
    on that.' (no phrase matches; it declines), a2 'the candidate passages', u2 ''. The
    judge (scripted: YES when the answer says 'silent') declines u1 and answers a1.
    Phrases: abstention recall 1/2 (u2 empty), over-refusal 1/2 (a1). Judge: recall 2/2,
    over-refusal 0/2, answered accuracy 1/2 (a1 is not exactly the expected answer, a2
    is); the empty answer is a refusal without a call: 3 calls."""
    from support.fake_llm_server import chat_reply

    def judge(body):
        user = [m["content"] for m in body["messages"] if m["role"] == "user"][-1]
        return chat_reply("YES" if "silent" in user else "NO")

    server.rule = judge
    log = _log(tmp_path, {
        "a1": "I don't know the details, but term frequency and inverse document "
              "frequency.", "u1": "The documents are silent on that.",
        "a2": "the candidate passages", "u2": ""}, "judged")
    phrases = _run(tmp_path, capsys, log)["metrics"]
    assert phrases["abstention_recall"] == 0.5 and phrases["over_refusal"] == 0.5
    data = _run(tmp_path, capsys, log, "--refusal-judge", "--llm-base-url", server.url,
                "--llm-model", "test-model", "--metrics", ALL + ",refusal")
    m = data["metrics"]
    assert m["abstention_recall"] == 1.0 and m["over_refusal"] == 0.0
    assert m["abstention_precision"] == 1.0 and m["answered_accuracy"] == 0.5
    assert data["per_query"]["u1"]["refusal"] == 1.0 and data["per_query"]["a1"]["refusal"] == 0.0
    assert data["config"]["refusal_judge"] is True
    assert data["llm"]["refusal"]["calls"] == 3
    assert len(server.requests) == 3
    # without an endpoint the phrases decide, and the run says so
    out = _run(tmp_path, capsys, _log(tmp_path, {"a1": "x", "u1": "y", "a2": "z", "u2": ""},
                                      "alone"), "--refusal-judge")
    assert any("refusal judge skipped: no LLM endpoint configured" in n for n in out["notes"])


def test_an_unanswerable_logged_output_may_give_an_empty_truth(tmp_path, capsys):
    """``"ground_truth_contexts": []`` on an unanswerable question, as the guide allows and
    --dataset takes (issue 33, item 17); an answerable one with it is still refused."""
    log = tmp_path / "log.jsonl"
    rows = [{**it, "answer": "I don't know.", "contexts": [P1, P2],
             "ground_truth_contexts": [] if it["id"].startswith("u") else [P1]}
            for it in ITEMS]
    log.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    data = _run(tmp_path, capsys, log, "--metrics", "recall@2,abstention_recall")
    assert data["metrics"]["abstention_recall"] == 1.0
    assert data["per_query"]["a1"]["recall@2"] == 1.0
    assert data["counts"]["recall@2"]["reasons"] == {UNANSWERABLE: 2}
    rows[0]["ground_truth_contexts"] = []
    log.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    code, _, err = run_cli(["run", "--outputs", str(log), "--no-history", "--quiet"], capsys)
    assert code == 2 and "line 1, field 'ground_truth_contexts'" in err
