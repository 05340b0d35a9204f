"""The data's language is told to the judges once, by whoever judges a case (issue 62
item 6): the run sets it per case and every prompt a judge sends carries it exactly once
(and what a judge writes — claims, entities — is asked in it); without a language no
prompt changes, so the call cache's keys stay as they were."""

from __future__ import annotations

import json

from support.cli import run_cli

from ragmark.judges.faithfulness import CLAIMS_PROMPT
from ragmark.judges.language import LANGUAGE, in_language, speaking

JUDGES = ("faithfulness,answer_relevance,context_relevance,answer_correctness,"
          "context_recall,context_entity_recall,context_precision,claim_faithfulness")
NOTE = "The texts are in German: judge them as they are"


def _log(tmp_path):
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps({
        "id": "q1", "question": "Wer schrieb Faust?", "answer": "Goethe schrieb Faust.",
        "contexts": ["Johann Wolfgang von Goethe schrieb den Faust."],
        "expected_answer": "Goethe."}) + "\n")
    return log


def _systems(server):
    return [r.body["messages"][0]["content"] for r in server.requests
            if r.body and r.body.get("messages")]


def test_every_judge_call_of_a_run_is_told_the_language_once(server, tmp_path, capsys):
    base = ["run", "--outputs", str(_log(tmp_path)), "--judge-metrics", JUDGES,
            "--llm-base-url", server.url, "--llm-model", "test-model", "--no-history",
            "--quiet", "--allow-missing"]
    code, _, err = run_cli([*base, "--language", "de", "--output",
                            str(tmp_path / "de.json")], capsys)
    assert code in (0, 1), err
    told = _systems(server)
    assert len(told) >= 8 and all(s.count(NOTE) == 1 for s in told), told
    assert any("Write the claims in German" in s for s in told)
    assert any("Write the entities in German" in s for s in told)
    asked = len(server.requests)
    code, _, err = run_cli([*base, "--output", str(tmp_path / "plain.json")], capsys)
    assert code in (0, 1), err
    assert not any("The texts are in" in s for s in _systems(server)[asked:])


def test_the_note_is_the_one_the_prompts_always_had():
    """The same text as before the language moved to one place: cache keys unchanged."""
    told = in_language(CLAIMS_PROMPT, "de").instruction
    assert told == CLAIMS_PROMPT.instruction + (
        " The texts are in German: judge them as they are, in German (being in German is "
        "no defect). Write the claims in German, whatever the language of the examples.")
    assert in_language(CLAIMS_PROMPT, None) is CLAIMS_PROMPT
    with speaking("fr"):
        assert LANGUAGE.get() == "fr"
    assert LANGUAGE.get() is None


def test_a_compares_pairwise_judge_and_the_label_runs_are_told_it(server, tmp_path, capsys,
                                                                  monkeypatch):
    """Work over several configs is told their data's language when they state one: the
    pairwise judge of ``compare --language de`` and ``label`` over configs whose files
    say ``language = "de"``; configs that state none tell nothing."""
    from support.fake_llm_server import chat_reply
    from support.pairwise_data import longer, make_setup

    for var in ("RAGMARK_LLM_BASE_URL", "RAGMARK_LLM_MODEL"):
        monkeypatch.delenv(var, raising=False)
    ds, cfgs = make_setup(tmp_path)
    server.rule = longer()
    llm = ["--llm-base-url", server.url, "--llm-model", "judge", "--no-history", "--quiet"]
    code, _, err = run_cli(["compare", "--dataset", str(ds), "--configs", *cfgs[:2],
                            "--metrics", "mrr", "--pairwise", "overall", "--language", "de",
                            "--output", str(tmp_path / "c"), *llm], capsys)
    assert code == 0, err
    told = _systems(server)
    assert len(told) == 6 * 2 and all(s.count(NOTE) == 1 for s in told), told
    german = tmp_path / "de.toml"
    german.write_text('name = "de"\nlanguage = "de"\n[generator]\nname = "top1"\n')
    asked = len(server.requests)
    server.rule = lambda body: chat_reply("YES")
    code, _, err = run_cli(["label", "--dataset", str(ds), "--configs", str(german),
                            "--top-k", "2", "--output", str(tmp_path / "l"), *llm], capsys)
    assert code == 0, err
    told = _systems(server)[asked:]  # a passage each question's top 2 share is asked once
    assert len(told) >= 6 and all(s.count(NOTE) == 1 for s in told), told
    asked = len(server.requests)
    code, _, err = run_cli(["label", "--dataset", str(ds), "--configs", cfgs[0], "--top-k",
                            "2", "--output", str(tmp_path / "l2"), *llm], capsys)
    assert code == 0, err
    assert len(_systems(server)) > asked
    assert not any("The texts are in" in s for s in _systems(server)[asked:])


def test_the_language_reaches_a_judge_run_from_inside_an_event_loop():
    """``run_sync`` inside a running loop (a notebook) works on a thread of its own; the
    caller's language goes with it."""
    import asyncio

    from ragmark.aio import run_sync

    async def inner():
        return LANGUAGE.get()

    async def notebook():
        with speaking("de"):
            return run_sync(inner())

    assert asyncio.run(notebook()) == "de"
