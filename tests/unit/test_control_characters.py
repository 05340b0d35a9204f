"""Issue 61 item 6 and its done-means: every command that prints or writes text that came
from a system or a file is fed control characters — colour and erase-line codes, an OSC 8
hyperlink, a carriage return, a backspace, a right-to-left override — in questions,
answers, contexts, tool calls and their results and errors, and in a bad field's value;
none reaches a terminal or a Markdown file raw."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import run_cli

E = ("\x1b[31mRED\x1b[0m\x1b[2K\x1b]8;;https://evil.invalid/\x07click\x1b]8;;\x07"
     "\r\x08\u202e\x9b")


def raw(text: str) -> list[str]:
    """The control characters in ``text`` a terminal or a viewer would act on."""
    return sorted({c for c in text if (ord(c) < 32 and c not in "\n\t")
                   or 0x7F <= ord(c) <= 0x9F or c == "\u202e"})


@pytest.fixture
def logged(tmp_path: Path) -> Path:
    rows = [{"id": "q1", "question": f"What is BM25{E}?", "answer": f"A ranking{E} function.",
             "contexts": [{"id": "d1", "text": f"BM25 ranks{E} documents."}],
             "expected_answer": "A ranking function.",
             "tool_calls": [{"name": f"search{E}", "arguments": {"q": f"bm25{E}"},
                             "result": f"found{E}", "error": f"failed{E}"}],
             "expected_tool_calls": [{"name": "search", "arguments": {"q": "bm25"}}]},
            {"id": "q2", "question": "Second?", "answer": "", "contexts": [],
             "expected_answer": "x"}]
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return log


def test_no_command_prints_or_writes_them_raw(tmp_path, logged, capsys):
    hist = ["--history", str(tmp_path / "h.sqlite")]
    said: dict[str, str] = {}
    for i in (1, 2):
        code, out, err = run_cli(["run", "--outputs", str(logged), "--output",
                                  str(tmp_path / f"r{i}"), "--format", "json,md",
                                  "--include-details", "--name", "sys", *hist], capsys)
        assert code in (0, 1), err
        said[f"run {i}"] = out + err
    res = str(tmp_path / "r1")
    for name, args in {
        "inspect question": ["inspect", res, "q1"],
        "inspect failures": ["inspect", res, "--failures"],
        "history show": ["history", "show", "1", "--question", "q1", *hist],
        "diff": ["diff", "last~1", "last", "--config-name", "sys", *hist],
        "history": ["history", *hist],
    }.items():
        code, out, err = run_cli(args, capsys)
        assert code == 0, (name, err)
        said[name] = out + err
    for name, text in said.items():
        assert raw(text) == [], name
    for md in (tmp_path / "r1.md", tmp_path / "r2.md"):
        assert raw(md.read_text()) == [], md
    # made visible, not dropped: the escape shows as its control picture
    assert "BM25␛[31mRED" in said["inspect question"]
    assert "<U+202E>" in said["inspect question"]
    assert "search␛[31mRED" in said["history show"]


def test_an_error_quoting_a_files_value_shows_it_visibly(tmp_path, capsys):
    bad = tmp_path / "set.jsonl"
    bad.write_text(json.dumps({"question": "q?", "expected_tool_calls": [
        {"name": "a", "arguments": {}}], "tool_args_match": f"exact{E}"}) + "\n")
    code, out, err = run_cli(["run", "--dataset", str(bad), "--quiet", "--no-history"],
                             capsys)
    assert code == 2 and "tool_args_match" in err
    assert raw(out + err) == [] and "exact\\u001b[31mRED" in err
