"""The conversation-level judges of ``ragmark simulate`` against a scripted server with
log-probabilities. Hand-worked: goal completion answered YES with P 0.7 is 0.7 (hard 1);
knowledge retention over three turns whose second answer forgets with P 0.9 (YES) and
third keeps for sure (NO) is 1 - (0.9 + 0) / 2 = 0.55 (hard 1 - 1/2 = 0.5); one turn has
nothing to remember (missing, never 1); end to end, the means with their intervals, the
judged goal beside the simulated user's verdict, the values in the transcripts."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from support.cli import run_cli

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "judges"))
from judges_support import weighed_reply  # noqa: E402
from test_play import _user  # noqa: E402

from ragmark.judges.conversation import (  # noqa: E402
    GOAL_PROMPT,
    RETENTION_PROMPT,
    goal_completion,
    knowledge_retention,
)
from ragmark.llm import LLMClient, LLMSettings  # noqa: E402

GOAL = GOAL_PROMPT.instruction[:30]
RETAIN = RETENTION_PROMPT.instruction[:30]


def _judges(body):
    system = body["messages"][0]["content"]
    last = body["messages"][-1]["content"]
    if system.startswith(GOAL):  # reached where the assistant said what BM25 ranks
        reached = "t ranks documents" in last  # "It ranks ...", not the outcome's text
        return weighed_reply([("YES", [("YES", 0.7), ("NO", 0.3)])] if reached
                             else [("NO", [("NO", 0.8), ("YES", 0.2)])])
    if system.startswith(RETAIN):
        forgets = "Which city" in last or "I do not know" in last
        return weighed_reply([("YES", [("YES", 0.9), ("NO", 0.1)])] if forgets
                             else [("NO", [])])
    return _user(body)


def _ask(server, coro_of):
    async def main():
        async with LLMClient(LLMSettings(base_url=server.url, model="judge", timeout=5.0,
                                         max_retries=0), use_cache=False) as client:
            return await coro_of(client)
    return asyncio.run(main())


def test_goal_completion_and_knowledge_retention_hand_worked(server):
    server.rule = _judges
    turns = [("I fly from Lisbon on Friday.", "Noted."),
             ("Which terminal?", "Which city are you flying from?"),
             ("Lisbon, I said.", "Terminal 1, for Lisbon; it ranks documents.")]
    goal = _ask(server, lambda c: goal_completion(c, "Find the terminal.",
                                                  "The assistant names the terminal.", turns))
    assert goal.value == pytest.approx(0.7)
    assert dict(goal.details) == {"reached": True, "hard_value": 1.0}
    kept = _ask(server, lambda c: knowledge_retention(c, turns))
    assert kept.value == pytest.approx(1 - (0.9 + 0.0) / 2)
    assert kept.details["forgot_chances"] == [0.9, 0.0]
    assert kept.details["forgot"] == [2] and kept.details["hard_value"] == 0.5
    # the second call read the user's messages before the answer, not the answers
    asked = [r.body["messages"][-1]["content"] for r in server.requests
             if r.body and r.body["messages"][0]["content"].startswith(RETAIN)]
    assert any("I fly from Lisbon on Friday.\nWhich terminal?" in a and "Noted." not in a
               for a in asked)
    one = _ask(server, lambda c: knowledge_retention(c, turns[:1]))
    assert (one.value, one.reason) == (None, "no answer after the first turn: nothing to "
                                             "remember")
    failed = _ask(server, lambda c: knowledge_retention(c, [turns[0], ("and?", None)]))
    assert (failed.value, failed.reason) == (None, "no answer after the first turn")
    none = _ask(server, lambda c: goal_completion(c, "s", "o", []))
    assert (none.value, none.reason) == (None, "no turn was played")
    none = _ask(server, lambda c: knowledge_retention(c, []))
    assert (none.value, none.reason) == (None, "no turn was played")


def test_simulate_reports_the_conversation_scores(server, tmp_path, capsys):
    from test_simulate_cli import SYSTEM

    server.rule = _judges
    (tmp_path / "svc").mkdir()
    (tmp_path / "svc" / "conv_scores_sys.py").write_text(SYSTEM)
    cfg = tmp_path / "system.toml"
    cfg.write_text('name = "mine"\n[pipeline]\nkind = "python"\n'
                   'target = "conv_scores_sys:answer"\npython_path = ["svc"]\n')
    from test_play import SCENARIOS
    scenarios = tmp_path / "scenarios.jsonl"
    scenarios.write_text("".join(json.dumps(s) + "\n" for s in SCENARIOS[:2]))
    out = tmp_path / "t.jsonl"
    try:
        code, said, err = run_cli(["simulate", str(scenarios), "--config", str(cfg),
                                   "--transcripts", str(out), "--llm-base-url", server.url,
                                   "--llm-model", "judge"], capsys)
    finally:
        sys.modules.pop("conv_scores_sys", None)
    assert code == 0, err
    # goal: 2 turns, reached by the simulator's verdict; judged 0.7 (hard yes).
    # quit: 1 turn ("capital of mars?" / "I do not know."), gave up; judged 0.2 (hard no)
    # -> mean 0.45 over 2, and the judge agrees with the simulated user on both.
    # retention: goal's second answer "It ranks documents." keeps (NO, sure): 1.0;
    # quit has one turn: missing.
    log = [json.loads(x) for x in out.read_text().splitlines()]
    assert log[0]["conversation_metrics"]["goal_completion"] == {
        "value": 0.7, "reached": True, "hard_value": 1.0}
    assert log[1]["conversation_metrics"]["goal_completion"]["value"] == pytest.approx(0.2)
    assert log[0]["conversation_metrics"]["knowledge_retention"]["value"] == 1.0
    assert log[1]["conversation_metrics"]["knowledge_retention"] == {
        "value": None, "reason": "no answer after the first turn: nothing to remember"}
    text = said + err
    assert "goal completion (judged against the expected outcome): 0.45 [95% CI " in text
    assert "over 2 of 2 conversations, judged by judge" in text
    assert ("knowledge retention (answers that keep what the user said): 1.00 [95% CI "
            "0.21-1.00] over 1 of 2 conversations (1 missing: no answer after the first "
            "turn: nothing to remember (1))") in text
    assert ("the judge and the simulated user agree on whether the goal was reached in 2 "
            "of 2 conversations") in text


FORGETFUL = """
def answer(question, history=None):
    return {"answer": "I do not know.", "contexts": []}
"""


def test_two_systems_compared_by_scenario_with_a_gate(server, tmp_path, capsys):
    """mine: goal 0.7 / retention 1.0 / reached; quit 0.2 / - / gave up.
    forgetful ("I do not know." always; the scripted user still says reached after two
    turns): goal 0.2 / retention 1 - 0.9 = 0.1 / reached; quit 0.2 / - / gave up.
    Paired: goal_completion (-0.5 + 0) / 2 = -0.25 over 2; retention -0.9 over 1 (quit
    left out: missing on both sides); goal_reached 0 over 2. Exact permutation p = 1
    for each (all sign flips give the same |mean|)."""
    from test_play import SCENARIOS
    from test_simulate_cli import SYSTEM

    server.rule = _judges
    (tmp_path / "svc").mkdir()
    (tmp_path / "svc" / "cmp_mine.py").write_text(SYSTEM)
    (tmp_path / "svc" / "cmp_forgetful.py").write_text(FORGETFUL)
    configs = []
    for name in ("mine", "forgetful"):
        cfg = tmp_path / f"{name}.toml"
        cfg.write_text(f'name = "{name}"\n[pipeline]\nkind = "python"\n'
                       f'target = "cmp_{name}:answer"\npython_path = ["svc"]\n')
        configs += ["--config", str(cfg)]
    scenarios = tmp_path / "scenarios.jsonl"
    scenarios.write_text("".join(json.dumps(s) + "\n" for s in SCENARIOS[:2]))
    report = tmp_path / "sim.json"
    try:
        code, said, err = run_cli(["simulate", str(scenarios), *configs, "--transcripts",
                                   str(tmp_path / "t.jsonl"), "--output", str(report),
                                   "--fail-under", "forgetful:goal_completion=0.5",
                                   "--fail-under", "knowledge_retention=0.5",
                                   "--history", str(tmp_path / "history.sqlite"),
                                   "--llm-base-url", server.url, "--llm-model", "judge"],
                                  capsys)
    finally:
        sys.modules.pop("cmp_mine", None)
        sys.modules.pop("cmp_forgetful", None)
    assert code == 1
    assert err == ("gate failed: forgetful: goal_completion = 0.2000 < 0.5 (--fail-under; "
                   "over 2 conversations)\ngate failed: forgetful: knowledge_retention = "
                   "0.1000 < 0.5 (--fail-under; over 1 conversation)\n")
    data = json.loads(report.read_text())
    assert [c["system"] for c in data["configs"]] == ["mine", "forgetful"]
    assert [c["transcripts"] for c in data["configs"]] == [
        str(tmp_path / "t.mine.jsonl"), str(tmp_path / "t.forgetful.jsonl")]
    rows = {r["metric"]: r for r in data["comparison"]}
    assert rows["goal_completion"]["difference"] == pytest.approx(-0.25)
    assert (rows["goal_completion"]["pairs"], rows["goal_completion"]["p"]) == (2, 1.0)
    assert rows["knowledge_retention"]["difference"] == pytest.approx(-0.9)
    assert (rows["knowledge_retention"]["pairs"], rows["knowledge_retention"][
        "left_out"]) == (1, 1)
    assert rows["goal_reached"]["difference"] == 0.0 and rows["goal_reached"]["pairs"] == 2
    assert all(r["p_holm"] == 1.0 for r in data["comparison"])
    assert [g["ok"] for g in data["gates"]] == [True, False, False]
    assert "gate held: mine: knowledge_retention = 1.0000 >= 0.5" in said
    assert ("  forgetful goal_completion: -0.250 [-0.500, +0.000], p = 1 over 2 "
            "scenarios") in said
    assert ("  forgetful knowledge_retention: -0.900 [-0.900, -0.900], p = 1 over 1 "
            "scenario (1 left out: a value missing on one side)") in said
    # recorded in the run history as a simulation: its metrics, each scenario's values
    from ragmark.history.store import list_runs
    runs = list_runs(tmp_path / "history.sqlite")
    assert [r.kind for r in runs] == ["simulation"] and runs[0].verdict == "failed"
    code, shown, err = run_cli(["history", "--history", str(tmp_path / "history.sqlite")],
                               capsys)
    assert code == 0 and "simulat" in shown and "scenari" in shown, shown
    code, shown, err = run_cli(["history", "trend", "--history",
                                str(tmp_path / "history.sqlite"), "--metric",
                                "simulate:knowledge_retention", "--config-name",
                                "forgetful"], capsys)
    assert code == 0, err
    assert "0.1" in shown
    forgot = [json.loads(x) for x in (tmp_path / "t.forgetful.jsonl").read_text().splitlines()]
    assert forgot[0]["conversation_metrics"]["knowledge_retention"]["value"] == \
        pytest.approx(0.1)
    # the second config's journal is of another simulation: refused before the first
    # config plays anything (its journal gone, it would have asked again)
    (tmp_path / "t.mine.jsonl.journal").unlink()
    (tmp_path / "t.forgetful.jsonl.journal").write_text('{"ragmark_simulation": "other"}\n')
    before = len(server.requests)
    try:
        code, said, err = run_cli(["simulate", str(scenarios), *configs, "--transcripts",
                                   str(tmp_path / "t.jsonl"), "--no-history",
                                   "--llm-base-url", server.url, "--llm-model", "judge"],
                                  capsys)
    finally:
        sys.modules.pop("cmp_mine", None)
        sys.modules.pop("cmp_forgetful", None)
    assert code == 2 and "t.forgetful.jsonl.journal was written by another simulation" in err
    assert len(server.requests) == before
    assert not (tmp_path / "t.mine.jsonl.journal").read_text().count('"turn"')


def test_one_conversation_value_has_no_interval_but_a_proportion_has_wilsons():
    from ragmark.simulate.play import Played
    from ragmark.simulate.scores import score_summary
    from ragmark.types import Score

    played = [Played("a", (), "goal_reached")]
    one = score_summary(played, [{"goal_completion": Score(1.0, details={"reached": True}),
                                  "knowledge_retention": Score(0.5067)}])
    assert one["knowledge_retention"]["interval"] is None  # not [0.5067, 0.5067]
    low, high = one["goal_completion"]["interval"]  # 1 of 1: Wilson, never [1, 1]
    assert (round(low, 3), high) == (0.207, 1.0)
