"""Judges of the user's own criteria (issue 63, item 4): ``[judges.NAME]`` with a
criterion is a metric like any other, judged through ``ragmark run`` against a scripted
server that returns log-probabilities. Hand-worked, as G-Eval weighs a verdict: a yes/no
criterion answered YES with probability 0.7 (NO 0.3) is 0.7 (hard 1); a 1-5 criterion
rated 4 with probability 0.5 and 5 with 0.5 is (4.5 - 1) / 4 = 0.875 (hard 0.75); its
steps, not given, are written once by the judge's model and recorded with the run."""

from __future__ import annotations

import json

import pytest
from judges_support import weighed_reply
from support.cli import run_cli
from support.fake_llm_server import chat_reply

WRITTEN = ["Read the answer.", "Look for numbers with their units.", "Decide."]
PLAIN = """
[judges.plain_language]
criterion = "The answer is written in plain words, without jargon."
steps = ["Read the answer.", "Find words a patient would not know."]

[judges.detail]
criterion = "The answer gives the numbers the question asks for."
scale = "1-5"
reads = ["answer", "question"]
"""


def _judge(server):
    def rule(body):
        system = body["messages"][0]["content"]
        if "Write the evaluation steps" in system:
            return chat_reply(json.dumps({"steps": WRITTEN}))
        if "plain words, without jargon" in system:
            return weighed_reply([("YES", [("YES", 0.6), ("Yes", 0.1), ("NO", 0.3)])])
        if "gives the numbers" in system:
            return weighed_reply([('{"rating": ', []), ("4", [("4", 0.5), ("5", 0.5)]),
                                  (', "reason": "has them"}', [])])
        return chat_reply("?")
    server.rule = rule


def _log(tmp_path, n=2):
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps({
        "id": f"q{i}", "question": f"How tall is tower {i}?", "answer": f"It is {300 + i} m.",
        "contexts": ["The tower is tall."]}) + "\n" for i in range(n)))
    return log


def _run(server, tmp_path, capsys, config_text, *more, expect=0):
    cfg = tmp_path / "judges.toml"
    cfg.write_text(config_text)
    out = tmp_path / "out.json"
    code, stdout, err = run_cli(["run", "--outputs", str(_log(tmp_path)), "--config", str(cfg),
                                 "--llm-base-url", server.url, "--llm-model", "m", "--output",
                                 str(out), "--include-details", "--no-history", "--quiet",
                                 *more], capsys)
    assert code == expect, err
    return (json.loads(out.read_text()) if out.exists() else None), stdout + err


def test_a_criterion_is_judged_and_weighed_by_its_probabilities(server, tmp_path, capsys):
    _judge(server)
    data, _ = _run(server, tmp_path, capsys, PLAIN, "--metrics", "plain_language,detail")
    q = data["queries"][0]["metrics"]
    assert q["plain_language"] == {"value": pytest.approx(0.7), "verdict": "yes",
                                   "hard_value": 1.0}
    assert q["detail"]["value"] == pytest.approx(0.875)
    assert q["detail"]["hard_value"] == 0.75 and q["detail"]["expected_rating"] == 4.5
    assert data["metrics"]["plain_language"] == pytest.approx(0.7)
    # the steps the model wrote: asked once for both questions, kept with the run
    asked = [r for r in server.requests if r.body and "Write the evaluation steps"
             in r.body["messages"][0]["content"]]
    assert len(asked) == 1
    assert data["llm"]["criterion_steps"] == {"detail": WRITTEN}
    judged = [r.body["messages"][0]["content"] for r in server.requests if r.body
              and "gives the numbers" in r.body["messages"][0]["content"]]
    assert len(judged) == 2 and all("2. Look for numbers with their units." in s
                                    for s in judged)
    # the definitions in the record of the run
    recorded = data["config"]["judges"]
    assert recorded["detail"]["scale"] == "1-5"
    assert recorded["detail"]["reads"] == ["question", "answer"]
    assert recorded["plain_language"]["steps"] == ["Read the answer.",
                                                    "Find words a patient would not know."]


def test_a_gate_on_a_criterion(server, tmp_path, capsys):
    _judge(server)
    _, said = _run(server, tmp_path, capsys, PLAIN, "--metrics", "plain_language",
                   "--fail-under", "plain_language=0.8", expect=1)
    assert "plain_language" in said and "0.7" in said


def test_a_criterion_missing_what_it_reads_is_missing_with_the_reason(server, tmp_path,
                                                                      capsys):
    _judge(server)
    data, _ = _run(server, tmp_path, capsys, PLAIN.replace(
        'reads = ["answer", "question"]', 'reads = ["answer", "expected_answer"]'),
        "--metrics", "detail", expect=1)  # a value missing everywhere fails the run
    got = data["queries"][0]["metrics"]["detail"]
    assert got["value"] is None and "no expected_answer" in got["reason"]


@pytest.mark.parametrize(("table", "said"), [
    ('[judges.tone]\ncriterion = "Polite."\nscale = "1-10"\n', "N from 3 to 9"),
    ('[judges.tone]\ncriterion = "  "\n', "criterion is empty"),
    ('[judges.tone]\ncriterion = "Polite."\nreads = ["answer", "mood"]\n', "one or more of"),
    ('[judges.tone]\nscale = "1-5"\n', "no criterion"),
    ('[judges.faithfulness]\ncriterion = "Polite."\n', "already a metric"),
    ('[judges.ndcg]\ncriterion = "Polite."\n', "already a metric"),
    ('[judges.Tone-2]\ncriterion = "Polite."\n', "lower-case letters"),
])
def test_a_wrong_definition_stops_before_any_work(server, tmp_path, capsys, table, said):
    _, text = _run(server, tmp_path, capsys, table, "--metrics", "faithfulness", expect=2)
    assert said in text and "Traceback" not in text
    assert not server.requests


def test_a_config_with_a_pipeline_is_still_refused_with_a_log(server, tmp_path, capsys):
    _, text = _run(server, tmp_path, capsys, 'top_k = 5\n' + PLAIN, expect=2)
    assert "sets only how it is judged" in text


COMPLETE = '\n[judges.complete]\ncriterion = "The answer is complete."\nsteps = ["Read it."]\n'


def _complete(body):
    """Long answers are complete with probability 0.9, short ones 0.2."""
    answer = body["messages"][-1]["content"].split('<data name="answer">\n')[1]
    sure = 0.9 if len(answer.split("\n</data>")[0]) > 40 else 0.2
    word = "YES" if sure > 0.5 else "NO"
    return weighed_reply([(word, [("YES", sure), ("NO", 1 - sure)])])


def test_a_compare_judges_every_config_by_one_criterion_and_gates_on_it(server, tmp_path,
                                                                        capsys):
    from support.pairwise_data import make_setup

    ds, cfgs = make_setup(tmp_path)
    for c in cfgs:
        with open(c, "a") as f:
            f.write(COMPLETE)
    server.rule = _complete
    out = tmp_path / "c"
    code, _, err = run_cli(["compare", "--dataset", str(ds), "--configs", cfgs[0], cfgs[2],
                            "--metrics", "complete", "--llm-base-url", server.url,
                            "--llm-model", "judge", "--output", str(out), "--no-history",
                            "--quiet", "--resamples", "300", "--fail-under",
                            "short:complete=0.5"], capsys)
    assert code == 1, err
    assert "short" in err and "complete" in err
    data = json.loads(out.with_suffix(".json").read_text())
    means = {c: r["metrics"]["complete"] for c, r in data["configs"].items()}
    assert means == {"long": pytest.approx(0.9), "short": pytest.approx(0.2)}
    # a config that defines it otherwise is refused before any work
    with open(cfgs[2], "a") as f:
        f.write('scale = "1-5"\n')
    asked = len(server.requests)
    code, _, err = run_cli(["compare", "--dataset", str(ds), "--configs", cfgs[0], cfgs[2],
                            "--metrics", "complete", "--llm-base-url", server.url,
                            "--llm-model", "judge", "--output", str(out), "--no-history",
                            "--quiet"], capsys)
    assert code == 2 and "defined differently in configs 'long' and 'short'" in err
    assert len(server.requests) == asked


def _forget(name):
    from ragmark.metrics.names import METRICS

    METRICS.forget(name)  # as a new process would start


def test_people_are_asked_the_criterion_the_run_recorded(server, tmp_path, capsys):
    from ragmark.annotate.queue import ask_of, draw

    _judge(server)
    _run(server, tmp_path, capsys, PLAIN, "--metrics", "plain_language,detail")
    for name in ("plain_language", "detail"):
        _forget(name)
    drawn = draw(tmp_path / "out.json", "plain_language", None, 0)
    assert len(drawn.items) == 2 and drawn.strata == {"judge yes": 2}
    assert ask_of("plain_language") == ("The answer is written in plain words, without "
                                        "jargon.")
    draw(tmp_path / "out.json", "detail", None, 0)  # a rating is labelled on a scale
    assert ask_of("detail") == "The answer gives the numbers the question asks for."


def test_judge_eval_measures_a_criterion_of_a_config(server, tmp_path, capsys):
    def rule(body):  # yes to the even answers (0.7), no to the odd ones (P(yes) 0.2)
        odd = body["messages"][-1]["content"].removesuffix("\n</data>").endswith(("1", "3"))
        return weighed_reply([("NO", [("NO", 0.8), ("YES", 0.2)])] if odd else
                             [("YES", [("YES", 0.7), ("NO", 0.3)])])
    server.rule = rule
    cfg = tmp_path / "judges.toml"
    cfg.write_text(PLAIN)
    _forget("plain_language")
    items = tmp_path / "labels.jsonl"
    items.write_text("".join(json.dumps({"question": "q?", "answer": f"answer {i}",
                                         "label": i % 2 == 0}) + "\n"  # no contexts read
                             for i in range(4)))
    out = tmp_path / "eval.json"
    code, _, err = run_cli(["judge-eval", str(items), "--metric", "plain_language",
                            "--config", str(cfg), "--llm-base-url", server.url,
                            "--llm-model", "m", "--output", str(out), "--quiet"], capsys)
    assert code == 0, err
    report = json.loads(out.read_text())
    assert report["metric"] == "plain_language" and report["items"] == 4
    assert report["balanced_accuracy"]["value"] == 1.0
    assert report["scores"]["roc_auc"]["value"] == 1.0
    _forget("plain_language")
    code, _, err = run_cli(["judge-eval", str(items), "--metric", "plain_language",
                            "--llm-base-url", server.url, "--llm-model", "m", "--quiet"],
                           capsys)
    assert code == 2 and "plain_language" in err  # without its config: unknown


def test_a_dry_run_counts_the_steps_call_once_and_a_call_a_question(server, tmp_path, capsys):
    _judge(server)
    cfg = tmp_path / "judges.toml"
    cfg.write_text(PLAIN)
    code, out, err = run_cli(["run", "--outputs", str(_log(tmp_path, 3)), "--config", str(cfg),
                              "--judge-metrics", "detail", "--dry-run", "--llm-base-url",
                              server.url, "--llm-model", "m", "--no-history"], capsys)
    assert code == 0, err
    assert "4 judge calls" in out + err  # the steps once, then a call for each of 3 questions
    assert not [r for r in server.requests if r.body]  # nothing asked


def test_ragmark_metrics_lists_a_configs_criterion_with_control_characters_shown(tmp_path,
                                                                                  capsys):
    cfg = tmp_path / "judges.toml"
    cfg.write_text('[judges.tone]\ncriterion = "Polite\\u001b[31m and kind."\nscale = "1-4"\n')
    code, out, err = run_cli(["metrics", "--config", str(cfg)], capsys)
    assert code == 0, err
    assert "tone" in out and "Polite␛[31m and kind." in out and "\x1b" not in out
    assert "(its probability-weighted rating 1-4 - 1) / 3" in out


def test_metrics_naming_judges_only_computes_those_judges(server, tmp_path, capsys):
    """``--metrics`` that names judges only computes them, not the defaults beside: a log
    whose system retrieved nothing scored by answer relevance alone gets that one metric
    and exit 0 (the defaults, groundedness first, would have had no value and failed the
    run)."""
    from support.cli import run_cli

    server.rule = lambda body: weighed_reply([('{"rating": ', []), ("4", [("4", 1.0)]),
                                              (', "reason": "on topic"}', [])])
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps({"id": q, "question": f"Question {q}?",
                                       "answer": "An answer.", "contexts": []}) + "\n"
                          for q in ("q0", "q1")))
    out = tmp_path / "out.json"
    code, _, err = run_cli(["run", "--outputs", str(log), "--metrics", "answer_relevance",
                            "--llm-base-url", server.url, "--llm-model", "m", "--output",
                            str(out), "--quiet", "--no-history"], capsys)
    assert code == 0, err
    data = json.loads(out.read_text())
    assert set(data["metrics"]) == {"answer_relevance"}
    assert data["metrics"]["answer_relevance"] == pytest.approx(0.75)  # rating 4 of 1-5
    # --judge-metrics still adds the judge to the defaults (those the log allows)
    code, _, err = run_cli(["run", "--outputs", str(log), "--judge-metrics",
                            "answer_relevance", "--llm-base-url", server.url, "--llm-model",
                            "m", "--output", str(out), "--quiet", "--no-history"], capsys)
    assert "answer_relevance" in json.loads(out.read_text())["metrics"]
