"""An agent's trajectories in the history (issue 50, item 1): recorded with a run,
shown for one question (``history show ID --question Q``), compared by ``diff`` (the
questions whose tool calls changed, from history ids or results files), and pruned with
the other per-question details."""

from __future__ import annotations

import json
import sqlite3
from datetime import timedelta

from support.cli import run_cli

from ragmark.history import trajectories
from ragmark.history.migrations import migrate, version
from ragmark.history.retention import prune


def _log(path, q1_query: str) -> None:
    def call(cid, name, args):
        return {"role": "assistant", "content": None, "tool_calls": [
            {"id": cid, "type": "function",
             "function": {"name": name, "arguments": json.dumps(args)}}]}

    lines = [
        {"id": "q1", "question": "Who wrote Dune?", "answer": "Frank Herbert",
         "contexts": ["Dune is by Frank Herbert."], "messages": [
             call("a", "search", {"query": q1_query}),
             {"role": "tool", "tool_call_id": "a", "content": "Dune is by Frank Herbert."},
             {"role": "assistant", "content": "Frank Herbert"}],
         "expected_tool_calls": [{"name": "search", "arguments": {"query": "Dune author"}}]},
        {"id": "q2", "question": "Capital of France?", "answer": "Paris",
         "contexts": ["Paris is the capital of France."], "messages": [
             {"role": "assistant", "content": "Paris"}],
         "expected_tool_calls": []},
    ]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")


def _run(tmp_path, capsys, name: str, q1_query: str) -> str:
    log = tmp_path / f"{name}.jsonl"
    _log(log, q1_query)
    out = tmp_path / f"{name}.json"
    code, _, err = run_cli(["run", "--outputs", str(log), "--name", "agent",
                            "--output", str(out), "--include-details", "--history",
                            str(tmp_path / "h.sqlite"), "--quiet"], capsys)
    assert code == 0, err
    return str(out)


def test_trajectories_are_recorded_shown_diffed_and_pruned(tmp_path, capsys):
    hist = str(tmp_path / "h.sqlite")
    first = _run(tmp_path, capsys, "a", "Dune author")
    second = _run(tmp_path, capsys, "b", "dune")
    got = trajectories(hist, 2, "agent")
    assert set(got) == {"q1", "q2"}
    assert got["q1"][0]["tool_calls"][0]["arguments"] == {"query": "dune"}
    assert got["q2"] == [{"kind": "model", "content": "Paris", "tool_calls": []}]

    code, text, err = run_cli(["history", "--history", hist, "show", "2", "--question",
                               "q1"], capsys)
    assert code == 0, err
    flat = " ".join(text.split())
    assert "config agent, question q1: Who wrote Dune?" in flat
    assert "trajectory_strict: 0.0000" in flat
    assert ('trajectory (3 steps): 1. model: asked search({"query": "dune"}) 2. tool search '
            '[a]: → Dune is by Frank Herbert. 3. model: Frank Herbert'
            in flat)
    code, _, err = run_cli(["history", "--history", hist, "show", "2", "--question", "q9"],
                           capsys)
    assert code == 2 and "run 2 has no question 'q9'" in err

    expected = [{"id": "q1", "question": "Who wrote Dune?",
                 "a": ['search({"query":"Dune author"})'], "b": ['search({"query":"dune"})']}]
    for a, b in (("1", "2"), ("last~1", "last"), (first, second)):
        code, text, err = run_cli(["diff", a, b, "--history", hist, "--json"], capsys)
        assert code == 0, err
        assert json.loads(text)["tool_calls"] == expected, (a, b)
    code, text, _ = run_cli(["diff", "1", "2", "--history", hist], capsys)
    flat = " ".join(text.split())
    assert ('tool calls: 1 of the 2 questions with a trajectory in both changed their calls '
            'q1 \'Who wrote Dune?\': A: search({"query":"Dune author"}) B: '
            'search({"query":"dune"})') in flat
    code, text, _ = run_cli(["diff", "1", "1", "--history", hist, "--json"], capsys)
    assert "tool_calls" not in json.loads(text)

    with sqlite3.connect(hist) as con:  # run 1 made old; run 2 stays as the baseline
        con.execute("UPDATE runs SET created_at = '2020-01-01T00:00:00+00:00' WHERE id = 1")
    prune(hist, timedelta(days=1))
    assert trajectories(hist, 1, "agent") == {} and set(trajectories(hist, 2, "agent")) == {
        "q1", "q2"}


def test_a_store_of_schema_7_gets_the_trajectories_table(tmp_path):
    path = tmp_path / "v7.sqlite"
    con = sqlite3.connect(path, isolation_level=None)
    migrate(con, upto=7)
    assert version(con) == 7
    con.close()
    assert trajectories(path, 1, "x") == {}  # migrated on opening; no run has one
    con = sqlite3.connect(path)
    assert version(con) == 8
    con.close()
