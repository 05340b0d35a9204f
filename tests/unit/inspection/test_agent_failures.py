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
        # the failed try is blamed, not its successful repeat (issue 61 item 11)
        ("q1", "extra_call", 'step 5: lookup({"id": 7}) (lookup called 2 times; 1 expected)'),
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


# Issue 61 items 10-12: a trajectory set whose failures were counted by hand, a question
# at a time. Each line: (id, messages or tool_calls, answer, expected calls).
HAND = [
    # t1: book(300) fails, book(250) -- the expected call -- succeeds: only the failed
    # try is blamed (an extra call and a tool error), the expected call is matched
    ("t1", [_call("a", "book", {"amount": 300}), _tool("a", "Error: too much", error=True),
            _call("b", "book", {"amount": 250}), _tool("b", "booked"),
            {"role": "assistant", "content": "Booked for 250."}], None,
     [{"name": "book", "arguments": {"amount": 250}}]),
    # t2: three calls to a tool nobody expects: wrong_tool once as a question, 3 calls
    ("t2", [_call("a", "search", {"q": "x"}), _tool("a", "r1"),
            _call("b", "search", {"q": "y"}), _tool("b", "r2"),
            _call("c", "search", {"q": "z"}), _tool("c", "r3"),
            {"role": "assistant", "content": "Done."}], None,
     [{"name": "book", "arguments": {"amount": 1}}]),
    # t3: wrong_tool again (1 call) and the expected call missing
    ("t3", [_call("a", "search", {"q": "x"}), _tool("a", "r1"),
            {"role": "assistant", "content": "Done."}], None,
     [{"name": "book", "arguments": {"amount": 1}}]),
    # t4: ends on a transfer to a human (a tool call): an earlier text is not the
    # answer; out of steps, and run agrees (no answer)
    ("t4", [{"role": "assistant", "content": "Let me check."},
            _call("a", "transfer_to_human", {}), _tool("a", "transferred")], None,
     [{"name": "transfer_to_human", "arguments": {}}]),
    # t5: a plain tool_calls line with an answer: it answered, not out of steps
    ("t5", None, "Your flight is booked.",
     [{"name": "book", "arguments": {"amount": 5}}]),
]


def test_inspect_counts_questions_and_names_the_calls_beside(tmp_path, capsys):
    rows = []
    for qid, messages, answer, expected in HAND:
        row = {"id": qid, "question": f"Task {qid}?", "contexts": ["c"],
               "expected_tool_calls": expected}
        if messages is None:
            row["tool_calls"] = [{"name": "book", "arguments": {"amount": 5},
                                  "result": "ok"}]
        else:
            row["messages"] = messages
        if answer is not None:
            row["answer"] = answer
        rows.append(row)
    log = tmp_path / "agent.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--outputs", str(log), "--output", str(out),
                            "--include-details", "--no-history", "--quiet"], capsys)
    assert code == 0, err
    answers = {q["id"]: q.get("answer") for q in json.loads(out.read_text())["queries"]}
    assert answers["t4"] in (None, "") and answers["t1"] == "Booked for 250."
    code, text, _ = run_cli(["inspect", str(out), "--failures", "--json"], capsys)
    got = json.loads(text)
    by_hand = {"wrong_tool": (2, 4), "extra_call": (1, 1), "wrong_arguments": (0, 0),
               "missing_call": (2, 2), "tool_error": (1, 1), "loop": (0, 0),
               "out_of_steps": (1, 1)}
    s = got["summary"]
    assert {k: (s[k]["failures"], s[k]["occurrences"]) for k in by_hand} == by_hand
    assert all(s[k]["checked"] == 5 for k in by_hand)
    facts = [(f["id"], f["kind"], f["fact"]) for f in got["failures"] if f["cause"] == "agent"]
    assert ("t1", "extra_call", 'step 1: book({"amount": 300}) (book called 2 times; '
            '1 expected)') in facts
    assert not [f for f in facts if f[0] == "t1" and "250" in f[2]]
    assert [f[1] for f in facts if f[0] in ("t4", "t5")] == ["out_of_steps"]
    code, text, _ = run_cli(["inspect", str(out), "--failures"], capsys)
    said = " ".join(text.split())
    assert ("called a tool the question expects no call to 2 of 5 questions (agent 2); "
            "4 calls in all") in said


def test_an_agent_only_set_is_a_set(tmp_path, capsys):
    """Issue 61 item 19: items with a question and expected_tool_calls only (tau-bench's
    and BFCL's shape, kwargs and all) got "cannot tell the set's format";
    ground_truth_contexts: [] was refused too, and a placeholder passage made inspect say
    "retrieved nothing" for every question."""
    items = [{"id": "t1", "question": "Book flight 1.",
              "expected_tool_calls": [{"name": "book", "kwargs": {"flight": 1}}]},
             {"id": "t2", "question": "Cancel booking 2.", "ground_truth_contexts": [],
              "expected_tool_calls": [{"name": "cancel", "kwargs": {"id": 2}}]}]
    (tmp_path / "set.json").write_text(json.dumps(items))
    log = [{"id": "t1", "question": "Book flight 1.", "answer": "Booked.",
            "tool_calls": [{"name": "book", "arguments": {"flight": 1}, "result": "ok"}]},
           {"id": "t2", "question": "Cancel booking 2.", "answer": "Cancelled.",
            "tool_calls": [{"name": "cancel", "arguments": {"id": 3}, "result": "ok"}]}]
    (tmp_path / "log.jsonl").write_text("".join(json.dumps(x) + "\n" for x in log))
    out = tmp_path / "r.json"
    code, stdout, err = run_cli(["run", "--outputs", str(tmp_path / "log.jsonl"),
                                 "--dataset", str(tmp_path / "set.json"), "--output",
                                 str(out), "--include-details", "--no-history", "--quiet"],
                                capsys)
    assert code == 0, err
    data = json.loads(out.read_text())
    assert data["dataset"]["format"] == "agent"
    per = {q["id"]: q["metrics"]["trajectory_unordered"] for q in data["queries"]}
    assert per == {"t1": 1.0, "t2": 0.0}  # t2's id 3 is not the expected 2
    assert "groundedness" not in data["metrics"]  # nothing to ground in: not a default
    code, text, _ = run_cli(["inspect", str(out), "--failures", "--json"], capsys)
    got = json.loads(text)
    assert [f["kind"] for f in got["failures"]] == ["wrong_arguments"]
    assert got["summary"]["empty_ranking"]["not_checked"].startswith("an agent's set")
    # a set of none of the kinds says which fields make each
    (tmp_path / "odd.json").write_text(json.dumps([{"question": "q?"}]))
    code, _, err = run_cli(["run", "--dataset", str(tmp_path / "odd.json"), "--quiet",
                            "--no-history"], capsys)
    assert code == 2 and "'expected_tool_calls' (an agent's set)" in err
