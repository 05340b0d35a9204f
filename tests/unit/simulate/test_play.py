"""Simulated users (issue 64, items 1, 2, 3 and 6): scenarios checked at load, a scripted
simulated user against a system whose answers are fixed, hand-counted: a user who
reaches the goal at turn 2, one who gives up, one who breaks role (asked again; twice:
the conversation ends with the reason), turns running out, a journal resumed after a
kill without asking the system a turn twice, the conversation log that ``run --outputs``
reads."""

from __future__ import annotations

import asyncio
import json

import pytest
from support.fake_llm_server import chat_reply

from ragmark.case import Context, Output
from ragmark.data.leniency import Leniency
from ragmark.errors import ConfigError, DataError
from ragmark.llm import LLMClient, LLMSettings
from ragmark.simulate.journal import Journal
from ragmark.simulate.play import play_all
from ragmark.simulate.scenarios import DEFAULT_TURNS, load_scenarios
from ragmark.simulate.transcripts import chat_messages, conversation_line, summary
from ragmark.simulate.user import breaks_role

SCENARIOS = [
    {"id": "goal", "scenario": "Learn what BM25 ranks.",
     "expected_outcome": "The assistant says BM25 ranks documents.",
     "ground_truth_contexts": ["BM25 ranks documents by term weights."]},
    {"id": "quit", "scenario": "Learn the capital of Mars.",
     "expected_outcome": "The assistant names the capital.", "max_turns": 5},
    {"id": "actor", "scenario": "Learn what a reranker does.",
     "expected_outcome": "The assistant says a reranker reorders results.", "max_turns": 2},
    {"id": "long", "scenario": "Chat about chunking.",
     "expected_outcome": "Never satisfied.", "max_turns": 3},
]


def _user(body):
    """The scripted simulated user: what it writes depends on the scenario it is given
    and how far the conversation went (the ASSISTANT lines in it)."""
    text = body["messages"][-1]["content"]
    if text.startswith("That answer could not be used"):  # a re-ask
        first = next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user"
                     and not m["content"].startswith("That answer"))
        if "reranker" in first and "ASSISTANT:" in first:
            return chat_reply(json.dumps({"status": "continue",
                                          "message": "As an AI, I rerank."}))
        return chat_reply(json.dumps({"status": "continue", "message": "what is a reranker?"}))
    said = text.count("ASSISTANT:")
    if "BM25" in text:
        turn = ["what does bm25 do?", "ranks what exactly?"]
        if said >= 2:
            return chat_reply(json.dumps({"status": "goal_reached"}))
        return chat_reply(json.dumps({"status": "continue", "message": turn[said]}))
    if "Mars" in text:
        if said >= 1:
            return chat_reply(json.dumps({"status": "gave_up"}))
        return chat_reply(json.dumps({"status": "continue", "message": "capital of mars?"}))
    if "reranker" in text:
        if said == 0:  # breaks role first, then writes as the user
            return chat_reply(json.dumps({"status": "continue",
                                          "message": "How can I help you today?"}))
        return chat_reply(json.dumps({"status": "continue",
                                      "message": "How may I assist you further?"}))
    return chat_reply(json.dumps({"status": "continue", "message": f"more {said}?"}))


class Fixed:
    """A system whose answer to a question is fixed; it records what it was asked."""

    def __init__(self):
        self.asked: list[tuple[str, int]] = []
        self.talks: list[str | None] = []

    async def ask(self, question, history, conversation=None):
        self.asked.append((question, len(history or [])))
        self.talks.append(conversation)
        if "bm25" in question and not history:
            return Output(answer="BM25 is a ranking function.",
                          contexts=(Context("BM25 ranks documents by term weights.", "d1"),))
        if "ranks what" in question:
            return Output(answer="It ranks documents.", contexts=(Context("Other text.", "d2"),))
        if question == "more 1?":  # the system fails on this turn
            return Output.failed("HTTP 500 from the service", message="upstream down")
        return Output(answer="I do not know.", contexts=())


def _write(tmp_path, rows):
    path = tmp_path / "scenarios.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _play(server, tmp_path, system, journal_key="k", fresh=False):
    scenarios = load_scenarios(_write(tmp_path, SCENARIOS))
    journal = Journal(tmp_path / "journal.jsonl", journal_key, fresh=fresh)

    async def main():
        async with LLMClient(LLMSettings(base_url=server.url, model="sim", timeout=5.0,
                                         max_retries=0), use_cache=False) as client:
            return await play_all(scenarios, system, client, journal, concurrency=2)

    played, counts = asyncio.run(main())
    return scenarios, played, journal, counts


def test_each_way_a_conversation_ends(server, tmp_path):
    server.rule = _user
    system = Fixed()
    scenarios, played, journal, counts = _play(server, tmp_path, system)
    by = {p.scenario: p for p in played}
    # goal reached at turn 2: two questions asked, each with the turns before it
    assert by["goal"].outcome == "goal_reached" and len(by["goal"].turns) == 2
    assert [(t["question"], t["answer"]) for t in by["goal"].turns] == [
        ("what does bm25 do?", "BM25 is a ranking function."),
        ("ranks what exactly?", "It ranks documents.")]
    assert ("ranks what exactly?", 1) in system.asked
    assert sorted(set(system.talks)) == ["actor", "goal", "long", "quit"]  # its scenario
    # gives up after one unhelpful answer
    assert (by["quit"].outcome, len(by["quit"].turns)) == ("gave_up", 1)
    # breaks role on its first call, is asked again and writes as the user; on its
    # second, breaks role twice: the conversation ends with the reason
    actor = by["actor"]
    assert actor.turns[0]["question"] == "what is a reranker?"
    assert actor.turns[0]["role_breaks"] == [
        "the message speaks as the assistant ('how can i help')"]
    assert actor.outcome == "simulator_failed" and "as the assistant" in actor.reason
    # the turns run out
    assert (by["long"].outcome, len(by["long"].turns)) == ("max_turns", 3)
    s = summary(played)
    assert s["outcomes"] == {"goal_reached": 1, "gave_up": 1, "simulator_failed": 1,
                             "max_turns": 1}
    assert s["goal_reached"] == 0.25 and s["turns_to_goal"] == 2.0
    lo, hi = s["goal_reached_interval"]
    assert lo == pytest.approx(0.0456, abs=1e-3) and hi == pytest.approx(0.6994, abs=1e-3)
    # simulator calls: goal 2 turns + its ending, quit 1 + ending, actor 1, long 3 = 9;
    # one of them broke role (actor's first, asked again)
    assert (s["turns"], s["role_breaks"]) == (7, 1)
    assert s["role_adherence"] == pytest.approx(8 / 9)
    assert counts.reasked == 2 and counts.failed == 1
    # the system failed once (long's second turn, "more 1?"): counted with its reason
    assert (s["failed_turns"], s["failures"]) == (1, {"HTTP 500 from the service": 1})
    assert s["first_failure"] == "HTTP 500 from the service: upstream down"
    assert by["long"].turns[1]["error_detail"] == "upstream down"


def test_the_transcripts_are_a_conversation_log_ragmark_reads(server, tmp_path, capsys):
    from support.cli import run_cli

    server.rule = _user
    scenarios, played, _, _ = _play(server, tmp_path, Fixed())
    lines = [conversation_line(s, p) for s, p in zip(scenarios, played, strict=True)]
    log = tmp_path / "transcripts.jsonl"
    log.write_text("".join(json.dumps(x) + "\n" for x in lines if x is not None))
    assert chat_messages(played[0])[:2] == [
        {"role": "user", "content": "what does bm25 do?"},
        {"role": "assistant", "content": "BM25 is a ranking function."}]
    out = tmp_path / "r.json"
    failed = played[3].turns[1]
    assert (failed["answer"], failed["error"]) == (None, "HTTP 500 from the service")
    assert lines[3]["turns"][1] == {"question": "more 1?", "error": "HTTP 500 from the service"}
    assert [m["role"] for m in chat_messages(played[3])] == [
        "user", "assistant", "user", "user", "assistant"]  # no answer for the failed turn
    code, _, err = run_cli(["run", "--outputs", str(log), "--metrics", "recall@1,mrr,refusal",
                            "--output", str(out), "--quiet", "--no-history",
                            "--allow-missing", "--include-details"], capsys)
    assert code == 0, err
    data = json.loads(out.read_text())
    per = {q["id"]: q["metrics"] for q in data["queries"]}
    # every turn a question; the scenario's passage is each of its turns' ground truth
    assert len(per) == 7
    assert per["goal#1"]["recall@1"] == 1.0
    assert per["goal#2"]["recall@1"] == 0.0
    assert per["quit#1"]["recall@1"]["value"] is None  # no ground truth: missing
    # a turn the system failed is missing with the failure, not an empty answer's refusal
    assert per["long#1"]["refusal"] == 1.0 and per["long#3"]["refusal"] == 1.0
    assert per["long#2"]["refusal"]["value"] is None
    assert per["long#2"]["refusal"]["reason"] == "HTTP 500 from the service"


def test_a_killed_simulation_resumes_without_asking_a_turn_twice(server, tmp_path):
    server.rule = _user
    first = Fixed()
    _play(server, tmp_path, first)
    path = tmp_path / "journal.jsonl"
    lines = path.read_text().splitlines()
    # killed after the goal scenario's first turn, mid-way through writing a line
    kept = [ln for ln in lines if json.loads(ln).get("scenario") != "goal"
            or json.loads(ln).get("turn") == 1]
    path.write_text("\n".join(kept) + '\n{"scenario": "goal", "tu')
    again = Fixed()
    _, played, journal, _ = _play(server, tmp_path, again)
    assert journal.dropped == 1
    assert again.asked == [("ranks what exactly?", 1)]  # only the unfinished turn
    by = {p.scenario: p for p in played}
    assert by["goal"].outcome == "goal_reached" and len(by["goal"].turns) == 2
    # a journal of another simulation is refused, or started over with fresh
    with pytest.raises(ConfigError, match="another simulation"):
        _play(server, tmp_path, Fixed(), journal_key="other")
    third = Fixed()
    _play(server, tmp_path, third, journal_key="other", fresh=True)
    assert len(third.asked) == 7


def test_scenarios_are_checked_at_load(tmp_path):
    good = load_scenarios(_write(tmp_path, [{"id": 7, "scenario": "s",
                                             "expected_outcome": "o"}]))
    assert (good[0].id, good[0].max_turns, good[0].facts) == ("7", DEFAULT_TURNS, ())
    for row, field, words in [
        ({"scenario": "s", "expected_outcome": "o"}, "id", "missing"),
        ({"id": "a", "expected_outcome": "o"}, "scenario", "missing"),
        ({"id": "a", "scenario": "s", "expected_outcome": ""}, "expected_outcome", "non-empty"),
        ({"id": "a", "scenario": "s", "expected_outcome": "o", "max_turns": 0}, "max_turns",
         "1 to 30"),
        ({"id": "a", "scenario": "s", "expected_outcome": "o", "facts": "x"}, "facts", "list"),
    ]:
        with pytest.raises(DataError) as e:
            load_scenarios(_write(tmp_path, [row]))
        assert e.value.field == field and e.value.line == 1 and words in str(e.value)
    with pytest.raises(DataError, match='duplicate scenario id "a" \\(first at line 1\\)'):
        load_scenarios(_write(tmp_path, [{"id": "a", "scenario": "s", "expected_outcome": "o"}
                                         ] * 2))
    lenient = Leniency()
    load_scenarios(_write(tmp_path, [{"id": "a", "scenario": "s", "expected_outcome": "o",
                                      "max_turn": 3}]), lenient)
    assert 'max_turn (did you mean "max_turns"?)' in " ".join(lenient.messages())
    with pytest.raises(DataError, match="--strict"):
        load_scenarios(_write(tmp_path, [{"id": "a", "scenario": "s", "expected_outcome": "o",
                                          "max_turn": 3}]), Leniency(strict=True))


def test_what_breaks_the_role():
    assert breaks_role("what is bm25?", "BM25 is a ranking function.") is None
    assert "speaker tag" in breaks_role("Assistant: it ranks documents", None)
    assert "as the assistant" in breaks_role("Sure! How can I help you?", None)
    assert "as the assistant" in breaks_role(  # the 1.5B model as the user, on SciFact
        "I'm sorry, but I can't assist with that. I'd be happy to help if you can give "
        "me more details", None)
    long = "BM25 is a ranking function used by search engines to rank documents."
    assert "repeats" in breaks_role(long.upper(), long)
    assert breaks_role("ok", "ok") is None  # too short to call a copy
    # the 1.5B model's first message was the outcome itself (SciFact scenarios): asked
    # again; a question holding the same words is a question
    outcome = "The assistant says Fra-1 regulates IL-6 expression in macrophages."
    assert breaks_role("Fra-1 regulates IL-6 expression in macrophages.", None, outcome) == (
        "the message states the expected outcome instead of asking for it")
    assert breaks_role("does fra-1 regulate il-6 expression in macrophages?", None,
                       outcome) is None
    assert breaks_role("tell me about fra-1", None, outcome) is None


def test_a_message_copied_from_the_instructions_example_is_asked_again():
    """The 1.5B model, as the user of a biology scenario, wrote the prompt's example
    ("ok but what year was it finished?") three turns running."""
    from ragmark.simulate.user import RoleCheck, UserInput, UserTurn, example_messages

    item = UserInput(scenario="Learn what BM25 ranks.", expected_outcome="It ranks documents.",
                     user="-", facts=[], conversation="USER: hi\n\nASSISTANT: hello")
    assert "ok but what year was it finished" in example_messages()
    check = RoleCheck(last_answer="hello", outcome="It ranks documents.")
    again = check(item, UserTurn(status="continue", message="OK but what year was it finished?"))
    assert again is not None and again.startswith("you copied the example's message")
    assert check.breaks == ["the message copies the instructions' example"]
    assert check(item, UserTurn(status="continue", message="what does bm25 rank?")) is None
    assert check.breaks == ["the message copies the instructions' example"]
