"""Judges weighted by their own probabilities (issue 63, item 1), end to end through
``ragmark run`` and a scripted server that returns log-probabilities as OpenAI's chat
completions do (``choices[0].logprobs.content``, each token with its ``top_logprobs``).
Hand-worked: faithfulness with claims supported with probability 0.8 and 0.4 is 0.6
(hard 0.5); answer relevance rated 4 or 5 with probability one half each is
(4.5 - 1) / 4 = 0.875 (hard 0.75); context relevance with passages relevant with
probability 1 and 0.3 (YES 0.2 + Yes 0.1) is 0.65 (hard 0.5: the second said NO). An endpoint
without log-probabilities gives the hard values and the run says so once; one that
refuses them is asked again without."""

from __future__ import annotations

import json

import pytest
from judges_support import weighed_reply
from support.cli import run_cli
from support.fake_llm_server import Reply, chat_reply

JUDGES = ("faithfulness", "answer_relevance", "context_relevance")

VERIFY = [('{"verdicts":[{"claim":1,"supported":', []),
          ("true", [("true", 0.8), ("false", 0.2)]), ('},{"claim":2,"supported":', []),
          ("false", [("false", 0.6), ("true", 0.4)]), ("}]}", [])]
RATED = [('{"rating": ', []), ("4", [("4", 0.5), ("5", 0.5)]), (', "reason": "on topic"}', [])]
SURE = [("YES", [])]  # context relevance asks a passage a call (no order effect)
UNSURE = [("NO", [("NO", 0.7), ("YES", 0.2), ("Yes", 0.1)])]


def _judge(logprobs: bool, refuse: bool = False):
    def rule(body):
        if refuse and body.get("logprobs"):
            return Reply(status=400, body={"error": {
                "message": "logprobs is not supported by this model"}})
        system = body["messages"][0]["content"]
        given = logprobs and bool(body.get("logprobs"))
        if "Break the answer into its factual claims" in system:
            return chat_reply('{"claims": ["Goethe wrote Faust.", "He wrote it in 1900."]}')
        if "Rate how directly" in system:
            return weighed_reply(RATED, given)
        if "one passage retrieved for it" in system:
            second = "Faust is a play." in body["messages"][-1]["content"]
            return weighed_reply(UNSURE if second else SURE, given)
        return weighed_reply(VERIFY, given)
    return rule


def _run(server, tmp_path, capsys, name, *more):
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps({
        "id": "q1", "question": "Who wrote Faust?", "answer": "Goethe wrote Faust in 1900.",
        "contexts": ["Goethe wrote Faust.", "Faust is a play."]}) + "\n")
    out = tmp_path / f"{name}.json"
    code, _, err = run_cli(["run", "--outputs", str(log), "--judge-metrics",
                            "faithfulness,answer_relevance,context_relevance",
                            "--llm-base-url", server.url, "--llm-model", name, "--output",
                            str(out), "--include-details", "--no-history", "--quiet", *more],
                           capsys)
    assert code == 0, err
    data = json.loads(out.read_text())
    q = {m: s if isinstance(s, dict) else {"value": s}
         for m, s in data["queries"][0]["metrics"].items()}
    return {m: q[m]["value"] for m in q}, q, data.get("notes", [])


def test_verdicts_weighted_by_their_probabilities(server, tmp_path, capsys):
    server.rule = _judge(logprobs=True)
    values, q, notes = _run(server, tmp_path, capsys, "weighed")
    assert values["faithfulness"] == pytest.approx((0.8 + 0.4) / 2)
    assert values["answer_relevance"] == pytest.approx((4.5 - 1) / 4)
    assert values["context_relevance"] == pytest.approx((1.0 + 0.3) / 2)
    details = q["faithfulness"]
    assert details["chances"] == [0.8, 0.4] and details["hard_value"] == 0.5
    assert q["answer_relevance"]["hard_value"] == 0.75
    asked = [r.body for r in server.requests if r.body and r.body.get("messages")]
    claims = [b for b in asked if "factual claims" in b["messages"][0]["content"]]
    verdicts = [b for b in asked if b not in claims]
    assert claims and not any("logprobs" in b for b in claims)  # nothing to weigh there
    assert verdicts and all(b["logprobs"] is True and b["top_logprobs"] == 10
                            for b in verdicts)
    assert not any("log-probabilities" in n for n in notes)
    # a review exports the verdict the judge wrote (people label yes or no)
    from ragmark.analysis.review import sample_for_review

    rows = sample_for_review(tmp_path / "weighed.json", 1, metric="faithfulness").rows
    assert [r.judge for r in rows] == [0.5]


def test_an_endpoint_without_them_gives_the_hard_verdicts_and_says_so(server, tmp_path,
                                                                      capsys):
    server.rule = _judge(logprobs=False)
    values, q, notes = _run(server, tmp_path, capsys, "hard")
    assert {m: values[m] for m in JUDGES} == {
        "faithfulness": 0.5, "answer_relevance": 0.75, "context_relevance": 0.5}
    assert "chances" not in q["faithfulness"]
    said = [n for n in notes if "without log-probabilities" in n]
    assert len(said) == 1 and said[0].startswith("4 judge answers came without")


def test_an_endpoint_that_refuses_them_is_asked_again_without(server, tmp_path, capsys):
    server.rule = _judge(logprobs=True, refuse=True)
    values, _, notes = _run(server, tmp_path, capsys, "refuses", "--llm-concurrency", "1")
    assert {m: values[m] for m in JUDGES} == {
        "faithfulness": 0.5, "answer_relevance": 0.75, "context_relevance": 0.5}
    refused = [r for r in server.requests if r.body and r.body.get("logprobs")]
    assert len(refused) == 1  # one call at a time: the first refused, none asked again
    assert any("it refused them: HTTP 400" in n for n in notes)


def test_judge_eval_ranks_passages_by_the_judges_probabilities():
    """Against the qrels, the per-passage ROC AUC reads each passage's probability. Four
    passages, relevant by the qrels: 1 and 3. The judge says relevant to 1, 2 and 3
    (hard: 1, 1, 1, 0): 2 of the 4 relevant/irrelevant pairs ordered right and 2 tied,
    AUC (2 + 2 / 2) / 4 = 0.75; with its probabilities 0.9, 0.6, 0.8, 0.1 all 4 pairs
    are ordered right: 1.0."""
    from ragmark.judge_eval.qrels import QrelsItem, against_qrels, chances
    from ragmark.types import Score

    items = [QrelsItem("q1", "Q?", ("a", "b", "c", "d"), (True, False, True, False))]
    weighed = Score(0.6, details={"irrelevant": [4], "chances": [0.9, 0.6, 0.8, 0.1]})
    hard = Score(0.75, details={"irrelevant": [4]})
    assert chances("context_relevance", weighed, 4) == [0.9, 0.6, 0.8, 0.1]
    assert chances("context_relevance", hard, 4) == [1.0, 1.0, 1.0, 0.0]
    soft = against_qrels(items, {"context_relevance": [weighed]}, resamples=200)
    flat = against_qrels(items, {"context_relevance": [hard]}, resamples=200)
    assert soft["context_relevance"]["passages"]["roc_auc"] == pytest.approx(1.0)
    assert flat["context_relevance"]["passages"]["roc_auc"] == pytest.approx(0.75)
    # accuracy stays the hard verdicts' (3 of 4 right)
    assert soft["context_relevance"]["passages"]["accuracy"] == pytest.approx(0.75)


def test_judge_eval_thresholds_the_verdicts_written_and_ranks_by_probability(
        server, tmp_path, capsys):
    """Faithfulness's verdict is yes only when every claim is supported (threshold 1.0):
    read from the verdicts the judge wrote, not from the weighted value (0.9 there would
    be "unsupported"); the scores' ROC AUC reads the weighted values. Two items labelled
    supported, both claims written true (P 0.9 and 1.0, value 0.95); one labelled
    unsupported, written true and false (P 0.8 and 0.4, value 0.6)."""
    sure_ish = [('{"verdicts":[{"claim":1,"supported":', []),
                ("true", [("true", 0.9), ("false", 0.1)]),
                ('},{"claim":2,"supported":true}]}', [])]

    def rule(body):
        system = body["messages"][0]["content"]
        user = body["messages"][-1]["content"]
        if "Break the answer into its factual claims" in system:  # two claims an answer
            answer = user.split('<data name="answer">\n')[1].split("\n</data>")[0]
            return chat_reply(json.dumps({"claims": [f"{answer} (1)", f"{answer} (2)"]}))
        return weighed_reply(VERIFY if "invented" in user else sure_ish, True)

    server.rule = rule
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({
        "id": f"i{i}", "question": "Q?", "context": "Some passage.", "answer": answer,
        "label": label}) + "\n" for i, (answer, label) in enumerate(
        [("Fine answer.", "supported"), ("Also fine.", "supported"),
         ("An invented answer.", "unsupported")])))
    out = tmp_path / "r.json"
    code, _, err = run_cli(["judge-eval", str(items), "--metric", "faithfulness",
                            "--llm-base-url", server.url, "--llm-model", "m", "--output",
                            str(out), "--quiet"], capsys)
    assert code == 0, err
    r = json.loads(out.read_text())
    assert r["threshold"] == 1.0
    assert [x["value"] for x in r["per_item"]] == pytest.approx([0.95, 0.95, 0.6])
    assert [x["hard_value"] for x in r["per_item"]] == [1.0, 1.0, 0.5]
    assert r["confusion"] == {"labels unsupported": {"judge unsupported": 1,
                                                     "judge supported": 0},
                              "labels supported": {"judge unsupported": 0,
                                                   "judge supported": 2}}
    assert r["scores"]["roc_auc"]["value"] == pytest.approx(1.0)


def test_a_passage_verdict_written_as_json_is_weighed_too(server, tmp_path, capsys):
    """A server that holds every answer to JSON: the passage's verdict is read at the
    bool (P(true) 0.3 for the second passage, as in the word case): 0.65."""
    def rule(body):
        if "one passage retrieved for it" not in body["messages"][0]["content"]:
            return _judge(logprobs=True)(body)
        if "Faust is a play." in body["messages"][-1]["content"]:
            return weighed_reply([('{"relevant": ', []), ("false", [("false", 0.7), ("true", 0.3)]),
                           ("}", [])], True)
        return weighed_reply([('{"relevant": true}', [])], True)

    server.rule = rule
    values, q, _ = _run(server, tmp_path, capsys, "as-json")
    assert values["context_relevance"] == pytest.approx(0.65)
    assert q["context_relevance"]["chances"] == [1.0, 0.3]
