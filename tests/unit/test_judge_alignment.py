"""`judge-eval --align` (issue 35): a judge given examples people labelled and their
notes as rules, measured by cross-validation (no item in its own prompt), saved, and
used by `run` through `[judges.METRIC] alignment = "FILE"`: recorded in the results,
part of the cache key. The scripted judge learns from the examples exactly when they are
in its prompt: it calls an answer naming Lyon irrelevant only when people's examples
there say NO to one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import run_cli
from support.fake_llm_server import chat_reply

from ragmark.judges.guidance import Example, Guidance, choose_examples, read_guidance

DEMO = Path(__file__).resolve().parents[1].parent / "src" / "ragmark" / "demo"
NOTE = "an answer naming Lyon is wrong: the capital is Paris"


def system_of(body):
    return next(m["content"] for m in body["messages"] if m["role"] == "system")


def learner(body):
    """answer_relevance: 5, except 1 for an answer naming Lyon when the prompt holds an
    example people answered NO that names Lyon."""
    users = [m["content"] for m in body["messages"] if m["role"] == "user"]
    system = system_of(body)
    taught = "Their answer: NO" in system and "Lyon" in system.split("Case 1", 1)[-1]
    bad = taught and "Lyon" in users[-1]
    return chat_reply(json.dumps({"rating": 1 if bad else 5, "reason": "r"}))


def write_items(path: Path) -> None:
    rows = [{"id": f"l{i}", "question": "What is the capital of France?",
             "context": "Paris is the capital of France.", "answer": f"Lyon, {i}.",
             "label": 1, "note": NOTE if i == 0 else ""} for i in range(6)]
    rows += [{"id": f"p{i}", "question": "What is the capital of France?",
              "context": "Paris is the capital of France.", "answer": f"Paris, {i}.",
              "label": 0} for i in range(6)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def align_and_save(items, saved, out, server, capsys):
    """`judge-eval ITEMS --align --save-alignment SAVED --output OUT` of the answer
    relevance judge at the test server (labels 1 = unsupported): code, stdout, stderr."""
    return run_cli(["judge-eval", str(items), "--metric", "answer_relevance", "--label-map",
                    "1=unsupported,0=supported", "--align", "--save-alignment", str(saved),
                    "--llm-base-url", server.url, "--llm-model", "test-model", "--output",
                    str(out)], capsys)


def test_examples_are_balanced_and_the_judges_mistakes_come_first():
    pool = [Example("q", f"a{i}", ("c",), i % 2 == 0) for i in range(8)]
    wrong = [False, False, False, True, True, False, False, True]
    got = choose_examples(pool, wrong, 2)
    assert [e.answer for e in got] == ["a4", "a0", "a3", "a7"]  # yes: a4 wrong; no: both


def test_align_measures_the_gain_on_held_out_items_saves_and_a_run_uses_it(
        server, tmp_path, capsys):
    server.rule = learner
    items, saved = tmp_path / "items.jsonl", tmp_path / "judges" / "relevance.toml"
    write_items(items)
    out = tmp_path / "je.json"
    code, stdout, err = align_and_save(items, saved, out, server, capsys)
    assert code == 0, err
    # one endpoint check for the unaligned judge, one for every fold together (not 1 + 5)
    assert [g.path for g in server.gets].count("/v1/models") == 2
    a = json.loads(out.read_text())["alignment"]
    # unaligned: every answer relevant (BA 0.5, kappa 0); aligned on held-out folds: the
    # Lyon answers irrelevant (BA 1, kappa 1); every resample with both labels: gain 0.5
    assert (a["folds"], a["items"], a["left_out"]) == (5, 12, 0)
    ba, kappa = a["balanced_accuracy"], a["kappa"]
    assert (ba["unaligned"], ba["aligned"], ba["gain"]) == (0.5, 1.0, 0.5)
    assert (ba["ci_low"], ba["ci_high"]) == (0.5, 0.5)
    assert (kappa["unaligned"], kappa["aligned"]) == (0.0, 1.0)
    assert a["verdict"] == "alignment helped: balanced accuracy 0.500 -> 1.000 on held-out items"
    # no fold's prompt held its own items: each aligned call's examples are other items
    for r in server.requests:
        system, user = system_of(r.body), r.body["messages"][-1]["content"]
        if "Case 1" in system:
            answer = user.split('<data name="answer">\n', 1)[1].split("\n</data>")[0]
            assert answer not in system.split("Case 1", 1)[1], answer
    text = " ".join(stdout.split())
    assert "aligned judge, cross-validated (5 folds; each fold judged with up to 4 examples" \
        in text and "balanced accuracy 0.500 -> 1.000, gain +0.500 [+0.500, +0.500]" in text
    g = read_guidance(saved, "answer_relevance")
    assert g.hash == a["hash"] and a["saved"] == str(saved)
    assert [e.label for e in g.examples] == [True, True, False, False]
    assert g.rubric == (NOTE,) and all("Lyon" in e.answer for e in g.examples[2:])
    assert f'[judges.answer_relevance] alignment = "{saved}"' in text

    cfg = tmp_path / "aligned.toml"
    cfg.write_text(f'name = "aligned"\n[judges.answer_relevance]\nalignment = "{saved}"\n')
    run = ["run", "--dataset", str(DEMO / "questions.json"), "--corpus",
           str(DEMO / "corpus"), "--judge-metrics", "answer_relevance", "--llm-base-url",
           server.url, "--llm-model", "test-model", "--quiet", "--no-history"]
    before = len(server.requests)
    code, _, err = run_cli([*run, "--output", str(tmp_path / "plain.json")], capsys)
    assert code == 0, err
    plain = len(server.requests) - before
    code, _, err = run_cli([*run, "--config", str(cfg), "--output",
                            str(tmp_path / "aligned.json")], capsys)
    assert code == 0, err
    asked = server.requests[before + plain:]
    assert len(asked) == plain  # other messages, so not one answer from the cache
    assert all("Their rules:\n- " + NOTE in system_of(r.body) for r in asked)
    assert not any("Their rules" in system_of(r.body) for r in server.requests[
        before:before + plain])
    got = json.loads((tmp_path / "aligned.json").read_text())["config"]["judges"]
    assert got == {"answer_relevance": {"alignment": str(saved), "hash": g.hash,
                                        "examples": 4, "rules": 1}}
    assert "judges" not in json.loads((tmp_path / "plain.json").read_text())["config"]


def test_a_changed_or_wrong_alignment_is_refused_before_any_work(server, tmp_path, capsys):
    saved = tmp_path / "a.toml"
    g = Guidance("answer_relevance", "does the answer address the question?",
                 (Example("q", "a", ("c",), True),), ("a rule",))
    saved.write_text(g.to_toml())
    assert read_guidance(saved) == g
    cfg = tmp_path / "c.toml"
    run = ["run", "--dataset", str(DEMO / "questions.json"), "--corpus",
           str(DEMO / "corpus"), "--config", str(cfg), "--quiet", "--no-history",
           "--output", str(tmp_path / "r.json")]
    cfg.write_text(f'[judges.faithfulness]\nalignment = "{saved}"\n')
    code, _, err = run_cli(run, capsys)
    assert code == 2 and f"alignment {saved} is of answer_relevance, not of faithfulness" in err
    cfg.write_text(f'[judges.answer_relevance]\nalignment = "{saved}"\n')
    saved.write_text(g.to_toml().replace("a rule", "another rule"))
    code, _, err = run_cli(run, capsys)
    assert code == 2 and "its content does not match its hash" in err
    cfg.write_text(f'[judges.mrr]\nalignment = "{saved}"\n')
    code, _, err = run_cli(run, capsys)
    assert code == 2 and "'mrr' is not a judge metric" in err
    code, _, err = run_cli(["judge-eval", str(saved), "--save-alignment", "x.toml",
                            "--llm-base-url", server.url, "--llm-model", "m"], capsys)
    assert code == 2 and "--save-alignment saves what --align chose" in err
    assert not (tmp_path / "r.json").exists()


@pytest.mark.parametrize("n", [3])
def test_too_few_items_of_a_label_say_so(server, tmp_path, capsys, n):
    server.rule = learner
    items = tmp_path / "few.jsonl"
    items.write_text("".join(json.dumps({"id": f"i{i}", "context": "c", "answer": f"a{i}",
                                         "label": int(i == 0)}) + "\n" for i in range(n)))
    code, stdout, err = run_cli(["judge-eval", str(items), "--metric", "answer_relevance",
                                 "--align", "--llm-base-url", server.url, "--llm-model",
                                 "test-model"], capsys)
    assert code == 0, err
    assert ("alignment not measured: alignment needs at least 2 items of each label "
            "(2 folds)") in " ".join(stdout.split())


def write_long_items(path: Path) -> None:
    """The items of :func:`write_items` with whole-abstract contexts (5,000 characters:
    four examples of them are over a 2,048-token window by themselves)."""
    filler = " ".join(["Paris has been the capital of France since the Middle Ages."] * 82)
    rows = [json.loads(x) for x in _items_text().splitlines()]
    for r in rows:
        r["context"] = "Paris is the capital of France. " + filler
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _items_text() -> str:
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "i.jsonl"
        write_items(p)
        return p.read_text()


def test_an_alignment_is_fitted_to_the_window_and_used_by_a_run(server, tmp_path, capsys):
    """Issue 48, item 8: the saved examples carry whole contexts; in a 2,048-token window
    every aligned call was refused (5,414 tokens asked), and the file saved anyway. The
    guidance is fitted like the rest of a call: its examples shortened, counted."""
    server.rule = learner
    server.n_ctx = 2048
    items, saved = tmp_path / "items.jsonl", tmp_path / "relevance.toml"
    write_long_items(items)
    out = tmp_path / "je.json"
    code, stdout, err = align_and_save(items, saved, out, server, capsys)
    assert code == 0, err
    a = json.loads(out.read_text())["alignment"]
    assert (a["items"], a["balanced_accuracy"]["aligned"]) == (12, 1.0)
    assert "aligned_failed" not in a
    assert a["fitted"]["alignment_cut_to_fit"] >= 12 and a["fitted"][
        "alignment_examples_shortened"] >= 12
    assert "the alignment was shortened to fit the model's context window in" in " ".join(
        stdout.split())
    # a call over the window was only one a client made before the server named the
    # window (each fold's client learns it from its first refusal): each was refused and
    # asked again fitted, so every item has its aligned verdict
    over = [r for r in server.requests if sum(len(m["content"]) for m in r.body[
        "messages"]) / 4 + r.body.get("max_tokens", 0) > 2048]
    assert len(over) == server.refused
    assert a["saved"] == str(saved) and len(read_guidance(saved).examples) == 4
    # a run with it on the same server: every question judged
    cfg = tmp_path / "aligned.toml"
    cfg.write_text(f'name = "aligned"\n[judges.answer_relevance]\nalignment = "{saved}"\n')
    code, _, err = run_cli(["run", "--dataset", str(DEMO / "questions.json"), "--corpus",
                            str(DEMO / "corpus"), "--judge-metrics", "answer_relevance",
                            "--llm-base-url", server.url, "--llm-model", "test-model",
                            "--quiet", "--no-history", "--config", str(cfg), "--output",
                            str(tmp_path / "run.json")], capsys)
    assert code == 0, err
    run = json.loads((tmp_path / "run.json").read_text())
    assert all(v["answer_relevance"] is not None for v in run["per_query"].values())
    assert any(n.startswith("the alignment's examples were shortened to fit the model's "
                            "context window in ") for n in run["notes"])


@pytest.mark.parametrize("window", range(1900, 2100, 7))
def test_fitted_guidance_leaves_room_for_the_answer_at_every_window(window):
    """The guidance was given every token the window left beside a short item, and the
    text it joins the instruction with tipped the call one token over: the fit then
    refused a call that only needed its examples a few characters shorter (issue 51,
    found when the judges' system message got shorter)."""
    from ragmark.judges.answers import ANSWER_RELEVANCE_PROMPT, AnswerRelevanceInput
    from ragmark.judges.fit import floor_of
    from ragmark.judges.guided import CURRENT, fitted
    from ragmark.judges.outcome import JudgeCounts
    from ragmark.llm.window import prompt_tokens

    long = "Paris has been the capital of France since the Middle Ages. " * 80
    g = Guidance("answer_relevance", "Is the answer relevant?", tuple(
        Example("What is the capital of France?", f"Lyon, {i}.", (long,), i % 2 == 0)
        for i in range(4)))
    item = AnswerRelevanceInput(question="What is the capital of France?", answer="Lyon.")
    counts = JudgeCounts()
    token = CURRENT.set(g)
    try:
        got = fitted(ANSWER_RELEVANCE_PROMPT, item, 256, window, counts)
    finally:
        CURRENT.reset(token)
    assert "Case 1" in got.render(item)[0]["content"]  # the examples are there, shortened
    assert counts.examples_shortened == 4
    assert prompt_tokens(got.render(item)) + floor_of(ANSWER_RELEVANCE_PROMPT.output, 256) <= window


def test_an_alignment_no_call_could_use_is_reported_and_not_saved(server, tmp_path, capsys):
    """The aligned calls refused (an HTTP 400 the window cannot explain): the reason is
    said, and nothing is saved or suggested."""
    from support.fake_llm_server import Reply

    def refuse_aligned(body):
        if "Case 1" in system_of(body):
            return Reply(400, {"error": {"message": "prompt rejected by the gateway"}})
        return learner(body)

    server.rule = refuse_aligned
    items, saved = tmp_path / "items.jsonl", tmp_path / "relevance.toml"
    write_items(items)
    code, stdout, err = align_and_save(items, saved, tmp_path / "je.json", server,
                                         capsys)
    assert code == 0, err
    text = " ".join(stdout.split())
    assert "alignment not measured: 0 item(s) have both verdicts; the gain needs 2: the " \
           "aligned judge gave no verdict on 12 of 12 items" in text
    assert "prompt rejected by the gateway" in text
    assert f"alignment not saved: {saved} was not written" in text
    assert not saved.exists() and "alignment = " not in text
