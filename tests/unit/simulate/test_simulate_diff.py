"""``ragmark diff`` on two simulations (issue 64, item 5): their reports (``simulate
--output``) or their records in the run history, paired by scenario, with the
conversations that ended otherwise listed. Hand-worked with a scripted user who gives
up when the assistant says it does not know:

- mine: goal reached in 2 turns (judged 0.7), quit given up (0.2);
- forgetful ("I do not know." always): goal given up after 1 turn (judged 0.2, the
  answer never says what BM25 ranks), quit given up (0.2).

B - A: simulate:goal_completion (-0.5 + 0) / 2 = -0.25 over 2; simulate:goal_reached
(-1 + 0) / 2 = -0.5 over 2; knowledge retention has no pair (mine's quit, and both of
forgetful's conversations, have one turn: nothing to remember). One ending changed:
goal, goal reached -> gave up."""

from __future__ import annotations

import json
import sys

import pytest
from support.cli import run_cli
from support.fake_llm_server import chat_reply
from test_conversation_scores import FORGETFUL, _judges
from test_play import SCENARIOS
from test_simulate_cli import SYSTEM

from ragmark.errors import DataError
from ragmark.results import read_results


def _impatient(body):
    """The scripted user, who gives up as soon as the assistant says it does not know."""
    text = body["messages"][-1]["content"]
    if "BM25" in text and "ASSISTANT: I do not know." in text:
        return chat_reply(json.dumps({"status": "gave_up"}))
    return _judges(body)


@pytest.fixture
def simulations(server, tmp_path, capsys):
    server.rule = _impatient
    (tmp_path / "svc").mkdir()
    scenarios = tmp_path / "scenarios.jsonl"
    scenarios.write_text("".join(json.dumps(s) + "\n" for s in SCENARIOS[:2]))
    history = tmp_path / "history.sqlite"
    for name, code in (("mine", SYSTEM), ("forgetful", FORGETFUL)):
        (tmp_path / "svc" / f"diff_{name}.py").write_text(code)
        cfg = tmp_path / f"{name}.toml"
        cfg.write_text(f'name = "{name}"\n[pipeline]\nkind = "python"\n'
                       f'target = "diff_{name}:answer"\npython_path = ["svc"]\n')
        try:
            got, _, err = run_cli(["simulate", str(scenarios), "--config", str(cfg),
                                   "--transcripts", str(tmp_path / f"t.{name}.jsonl"),
                                   "--output", str(tmp_path / f"{name}.json"), "--history",
                                   str(history), "--llm-base-url", server.url,
                                   "--llm-model", "judge", "--quiet"], capsys)
        finally:
            sys.modules.pop(f"diff_{name}", None)
        assert got == 0, err
    return tmp_path, history


def test_two_simulation_reports_diffed_by_scenario(simulations, capsys):
    tmp_path, _ = simulations
    code, out, err = run_cli(["diff", str(tmp_path / "mine.json"),
                              str(tmp_path / "forgetful.json"), "--json"], capsys)
    assert code == 0, err
    data = json.loads(out)
    rows = {r["metric"]: r for r in data["metrics"]}
    assert rows["simulate:goal_completion"]["delta"] == pytest.approx(-0.25)
    assert rows["simulate:goal_completion"]["n"] == 2
    assert rows["simulate:goal_reached"]["delta"] == -0.5
    assert [(m["id"], m["a"], m["b"]) for m in rows["simulate:goal_reached"]["worse"]] == [
        ("goal", 1.0, 0.0)]
    assert rows["simulate:knowledge_retention"]["n"] == 0
    assert data["outcomes"] == [{"id": "goal", "scenario": "Learn what BM25 ranks.",
                                 "a": "goal_reached", "b": "gave_up"}]
    code, out, err = run_cli(["diff", str(tmp_path / "mine.json"),
                              str(tmp_path / "forgetful.json")], capsys)
    assert code == 0, err
    assert ("conversations: 1 of the 2 scenarios both played ended otherwise:\n"
            "  goal 'Learn what BM25 ranks.': goal reached -> gave up") in out


def test_two_simulations_in_the_history_diffed_by_id(simulations, capsys):
    tmp_path, history = simulations
    code, out, err = run_cli(["diff", "1", "2", "--history", str(history), "--json"],
                             capsys)
    assert code == 0, err
    data = json.loads(out)
    assert (data["a"], data["b"]) == ("run 1 (mine)", "run 2 (forgetful)")
    rows = {r["metric"]: r for r in data["metrics"]}
    assert rows["simulate:goal_completion"]["delta"] == pytest.approx(-0.25)
    assert data["outcomes"] == [{"id": "goal", "scenario": "Learn what BM25 ranks.",
                                 "a": "goal_reached", "b": "gave_up"}]
    # the same simulation on both sides: nothing ended otherwise, and it says so
    code, out, err = run_cli(["diff", "1", str(tmp_path / "mine.json"), "--history",
                              str(history)], capsys)
    assert code == 0, err
    assert "conversations: 0 of the 2 scenarios both played ended otherwise\n" in out


def test_a_reader_of_runs_names_a_simulations_report(simulations):
    tmp_path, _ = simulations
    with pytest.raises(DataError, match=r"the report of a simulation \(ragmark simulate "
                                        r"--output\), not of a run"):
        read_results(tmp_path / "mine.json")
    kind, data = read_results(tmp_path / "mine.json", also=("simulation",))
    assert kind == "simulation" and data["envelope"]["kind"] == "simulation"
    (conv,) = [c for c in data["configs"][0]["conversations"] if c["id"] == "goal"]
    assert conv["transcript"] == [
        {"user": "what does bm25 do?", "answer": "BM25 is a ranking function.",
         "contexts": ["BM25 ranks documents by term weights."],
         "latency_s": conv["transcript"][0]["latency_s"]},
        {"user": "ranks what exactly?", "answer": "It ranks documents.",
         "contexts": ["Other text."], "latency_s": conv["transcript"][1]["latency_s"]}]


def test_a_simulation_has_a_page_of_its_own(simulations, capsys):
    tmp_path, history = simulations
    code, _, err = run_cli(["report", "1", "--history", str(history), "--output",
                            str(tmp_path / "sim.html")], capsys)
    assert code == 0, err
    page = (tmp_path / "sim.html").read_text()
    assert "<title>ragmark simulate: 2 scenarios, 1 config</title>" in page
    assert page.count('<section class="scenario"') == 2
    code, _, err = run_cli(["report", str(tmp_path / "mine.json"),
                            str(tmp_path / "forgetful.json"), "--output",
                            str(tmp_path / "two.html")], capsys)
    assert code == 2
    assert "a simulation's report is rendered on a page of its own: give its file alone" \
        in err


def test_a_simulations_report_given_as_logged_outputs_names_its_transcripts(
        simulations, capsys):
    tmp_path, _ = simulations
    code, _, err = run_cli(["run", "--outputs", str(tmp_path / "mine.json"), "--metrics",
                            "hit@1", "--no-history"], capsys)
    assert code == 2
    assert err == (f"error: {tmp_path / 'mine.json'}: the results of a ragmark simulation, "
                   "not questions or logged outputs: score its conversations from the "
                   f"transcripts it wrote ({tmp_path / 't.mine.jsonl'})\n")
