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
