"""``monitor`` on a live agent's log (issue 50, item 6): each window's tool error rate,
calls and search recall (``--search-tool``), and a drift gate on the tool error rate
that holds while the tools work and fails when they start failing."""

from __future__ import annotations

import json
from pathlib import Path

from support.cli import run_cli

PASSAGE = "BM25 ranks documents by term frequency and inverse document frequency."


def _records(start: int, n: int, fail: bool) -> list[dict]:
    """An agent's log lines: a search (failing, then retried, when ``fail``)."""
    out = []
    for i in range(start, start + n):
        calls = [{"name": "search", "arguments": {"query": f"q{i}"}, "error": "timeout"}
                 ] if fail else []
        calls.append({"name": "search", "arguments": {"query": f"q{i} again"},
                      "result": json.dumps([{"id": "d1", "text": PASSAGE}])})
        out.append({"id": f"r{i}", "question": f"What does BM25 rank ({i})?",
                    "answer": "Documents.", "tool_calls": calls,
                    "ground_truth_contexts": [PASSAGE]})
    return out


def _append(log: Path, records: list[dict]) -> None:
    with log.open("a", encoding="utf-8") as f:
        f.writelines(json.dumps(r) + "\n" for r in records)


def test_a_drift_gate_on_the_tool_error_rate(tmp_path, capsys):
    log = tmp_path / "agent.jsonl"
    flags = ["--search-tool", "search", "--metrics", "tool_calls,tool_error_rate,recall@5",
             "--judge-metrics", "none"]
    for w in range(3):  # three windows of working tools
        _append(log, _records(w * 30, 30, fail=False))
        code, _, err = run_cli(["monitor", str(log), *flags], capsys)
        assert code == 0, err
    _append(log, _records(90, 30, fail=False))
    out = tmp_path / "w.json"
    code, text, err = run_cli(["monitor", str(log), *flags, "--fail-on-drift",
                               "tool_error_rate", "--output", str(out)], capsys)
    assert code == 0, err
    w = json.loads(out.read_text())
    assert w["metrics"]["tool_error_rate"] == 0.0 and w["metrics"]["tool_calls"] == 1.0
    assert w["metrics"]["recall@5"] == 1.0  # the search's result is the retrieval
    _append(log, _records(120, 30, fail=True))  # every first search now fails
    code, text, err = run_cli(["monitor", str(log), *flags, "--fail-on-drift",
                               "tool_error_rate", "--output", str(out)], capsys)
    w = json.loads(out.read_text())
    assert w["metrics"]["tool_error_rate"] == 0.5 and w["metrics"]["tool_calls"] == 2.0
    assert code == 1 and "gate failed: tool_error_rate drifted" in err
