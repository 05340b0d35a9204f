"""The agent judges (issue 50, item 4): task completion (one word asked) and argument
correctness (one verdict a call, held to the count by the schema), through a real HTTP
server, the dry run and the cache; missing with the reason without a trajectory or a
call. A judge module dropped in is in the catalogue with no other edit."""

from __future__ import annotations

import json

from support.cli import run_cli
from support.fake_llm_server import chat_reply

LINE = {"id": "q1", "question": "How many years passed between Dune and its sequel?",
        "answer": "4", "contexts": ["Dune Messiah was published in 1969."], "tool_calls": [
            {"name": "search", "arguments": {"query": "Dune Messiah year"},
             "result": "Dune Messiah was published in 1969."},
            {"name": "calculator", "arguments": {"expression": "1969-1900"}, "result": "69"}]}
PLAIN = {"id": "q2", "question": "What is BM25?", "answer": "A ranking function.",
         "contexts": ["BM25 is a ranking function."]}


def _rule(body):
    system = body["messages"][0]["content"]
    if "accomplishes the task" in system:
        return chat_reply("YES")
    if "numbered tool calls" in system:
        return chat_reply(json.dumps({"verdicts": [{"call": 1, "correct": True},
                                                   {"call": 2, "correct": False}]}))
    return chat_reply("?")


def test_task_completion_and_argument_correctness(server, tmp_path, capsys):
    log = tmp_path / "agent.jsonl"
    log.write_text(json.dumps(LINE) + "\n" + json.dumps(PLAIN) + "\n")
    server.rule = _rule
    llm = ["--llm-base-url", server.url, "--llm-model", "m"]
    code, out, err = run_cli(["run", "--outputs", str(log), "--judge-metrics",
                              "task_completion,argument_correctness", "--dry-run", *llm],
                             capsys)
    assert code == 0, err
    assert not server.requests  # a dry run asks nothing
    res = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--outputs", str(log), "--metrics", "groundedness",
                            "--judge-metrics", "task_completion,argument_correctness",
                            "--output", str(res), "--include-details", "--no-history",
                            "--quiet", *llm], capsys)
    assert code == 0, err  # q2 has no trajectory: missing there, with the reason
    got = {q["id"]: q["metrics"] for q in json.loads(res.read_text())["queries"]}
    assert got["q1"]["task_completion"] == 1.0
    assert got["q1"]["argument_correctness"] == {"value": 0.5, "wrong": [2]}
    assert got["q2"]["task_completion"] == {"value": None, "reason": (
        "no trajectory recorded (its source gave no messages, tool calls or tool spans)")}
    bodies = [r.body for r in server.requests]
    assert len(bodies) == 2  # one call a judge a question with a trajectory
    args = next(b for b in bodies if "numbered tool calls" in b["messages"][0]["content"])
    schema = args["response_format"]["json_schema"]["schema"]["properties"]["verdicts"]
    assert schema["minItems"] == schema["maxItems"] == 2
    task = next(b for b in bodies if "accomplishes" in b["messages"][0]["content"])
    said = task["messages"][-1]["content"]
    assert 'calculator({"expression": "1969-1900"}) -> 69' in said
    assert task["max_tokens"] <= 16  # one word
    before = len(server.requests)  # again: from the cache, no call
    run_cli(["run", "--outputs", str(log), "--judge-metrics", "task_completion",
             "--no-history", "--quiet", *llm], capsys)
    assert len(server.requests) == before
