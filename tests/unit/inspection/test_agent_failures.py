"""Where an agent went wrong (issue 50, item 5): ``inspect --failures`` names the wrong
tool, the extra and missing calls, wrong arguments, failed calls, loops and a run out of
steps, each at its step; ``inspect QUESTION`` lists the steps."""

from __future__ import annotations

import json

from support.cli import run_cli


def _call(cid: str, name: str, args: dict) -> dict:
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": cid, "type": "function", "function": {"name": name,
                                                     "arguments": json.dumps(args)}}]}


def _tool(cid: str, content: str, error: bool = False) -> dict:
    return {"role": "tool", "tool_call_id": cid, "content": content,
            **({"status": "error"} if error else {})}


LINES = [
    # q1: the expected search with other arguments, a calculator nobody expects, then a
    # search that fails and is repeated word for word
    {"id": "q1", "question": "Who wrote Dune?", "answer": "Frank Herbert", "messages": [
        _call("a", "search", {"query": "dune"}), _tool("a", "Dune is by Frank Herbert."),
        _call("b", "calculator", {"expression": "1+1"}), _tool("b", "2"),
        _call("c", "lookup", {"id": 7}), _tool("c", "timeout", error=True),
        _call("d", "lookup", {"id": 7}), _tool("d", "Frank Herbert"),
        {"role": "assistant", "content": "Frank Herbert"}]},
    # q2: stopped on a tool's result, never made its second expected call
    {"id": "q2", "question": "When was Dune published?", "answer": "", "messages": [
        _call("a", "search", {"query": "Dune year"}), _tool("a", "1965")]},
]
EXPECTED = {"q1": [{"name": "search", "arguments": {"query": "Dune author"}},
                   {"name": "lookup", "arguments": {"id": 7}}],
            "q2": [{"name": "search", "arguments": {"query": "Dune year"}},
                   {"name": "calculator", "arguments": {"expression": "2026-1965"}}]}


def _results(tmp_path, capsys):
    log = tmp_path / "agent.jsonl"
    log.write_text("\n".join(json.dumps({**x, "contexts": ["Dune is by Frank Herbert."],
                                         "expected_tool_calls": EXPECTED[x["id"]]})
                             for x in LINES) + "\n")
    out = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--outputs", str(log), "--output", str(out),
                            "--include-details", "--no-history", "--quiet"], capsys)
    assert code == 0, err
    return out


def test_failure_kinds_at_their_steps(tmp_path, capsys):
    out = _results(tmp_path, capsys)
    code, text, _ = run_cli(["inspect", str(out), "--failures", "--json"], capsys)
    assert code == 0
    got = json.loads(text)
    agent = [(f["id"], f["kind"], f["fact"]) for f in got["failures"] if f["cause"] == "agent"]
    assert agent == [
        ("q1", "wrong_arguments", 'step 1: search({"query": "dune"})'),
        ("q1", "wrong_tool", 'step 3: calculator({"expression": "1+1"})'),
        ("q1", "extra_call", 'step 7: lookup({"id": 7}) (call 2 of lookup; 1 expected)'),
        ("q1", "tool_error", 'step 5: lookup({"id": 7}) failed: timeout'),
        ("q1", "loop", 'step 7: lookup({"id": 7}) repeats step 5'),
        ("q2", "missing_call", 'calculator({"expression": "2026-1965"}) was never made'),
        ("q2", "out_of_steps", "ended after step 2 without an answer"),
    ]
    summary = got["summary"]
    assert {k: (summary[k]["failures"], summary[k]["checked"]) for k in (
        "wrong_tool", "missing_call", "loop", "out_of_steps")} == {
        "wrong_tool": (1, 2), "missing_call": (1, 2), "loop": (1, 2), "out_of_steps": (1, 2)}
    code, text, _ = run_cli(["inspect", str(out), "--failures"], capsys)
    assert "q1 wrong tool: step 3: calculator" in " ".join(text.split())


def test_inspect_lists_the_steps(tmp_path, capsys):
    out = _results(tmp_path, capsys)
    code, text, _ = run_cli(["inspect", str(out), "q1"], capsys)
    assert code == 0
    flat = " ".join(text.split())
    assert "Trajectory (9 steps; 4 tool calls, 1 failed)" in flat
    assert '5. model: asked lookup({"id": 7})' in flat
    assert "6. tool lookup [c]: failed: timeout" in flat
    assert "9. model: Frank Herbert" in flat


def test_a_plain_run_reports_no_agent_kinds(tmp_path, capsys):
    log = tmp_path / "rag.jsonl"
    log.write_text(json.dumps({"question": "q?", "answer": "a", "contexts": ["c c c"]}) + "\n")
    out = tmp_path / "r.json"
    run_cli(["run", "--outputs", str(log), "--output", str(out), "--include-details",
             "--no-history", "--quiet"], capsys)
    code, text, _ = run_cli(["inspect", str(out), "--failures", "--json"], capsys)
    assert code == 0 and "loop" not in json.loads(text)["summary"]


def test_the_markdown_report_sums_up_the_trajectories(tmp_path, capsys):
    """Steps, model turns, calls and failed calls per trajectory: q1 has 9 steps (5
    turns, 4 calls, 1 failed), q2 2 steps (1 turn, 1 call)."""
    log = tmp_path / "agent.jsonl"
    log.write_text("\n".join(json.dumps({**x, "contexts": ["Dune is by Frank Herbert."]})
                             for x in LINES) + "\n")
    code, _, err = run_cli(["run", "--outputs", str(log), "--format", "md", "--output",
                            str(tmp_path / "r"), "--no-history", "--quiet"], capsys)
    assert code == 0, err
    text = (tmp_path / "r.md").read_text()
    assert "Agent trajectories: 2 of 2 questions" in text
    assert "| 5.50 | 3.00 | 2.50 | 0.50 | — | — | — |" in text
