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
    res = str(tmp_path / "r1.json")  # --output r1: the JSON report r1.json, r1.md beside
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


def _hostile_judge(body):
    """A judge endpoint whose replies carry the codes: a rating with a hostile reason for
    most, a hostile non-answer (its failure quoted back) for a question naming 'Third',
    and a hostile pairwise reason for a duel."""
    from support.fake_llm_server import chat_reply

    user = body["messages"][-1]["content"]
    if "first_answer" in user:
        return chat_reply(json.dumps({"better": "first", "reason": f"why{E}"}))
    if "Third" in json.dumps(body):
        return chat_reply(f"no idea{E}")
    return chat_reply(json.dumps({"rating": 5, "reason": f"fine{E}"}))


def test_the_other_commands_fed_them_print_none_raw(tmp_path, logged, server, capsys):
    """judge-eval, monitor, duel, compare, label, annotate --status and --export, each fed
    the codes in its own inputs and in an endpoint's replies."""
    from support.annotate_data import results_file

    from ragmark.annotate import store
    from ragmark.annotate.store import Label
    from ragmark.demo import demo_path
    from ragmark.plan.annotate import AnnotateRequest, plan_annotate

    server.rule = _hostile_judge
    llm = ["--llm-base-url", server.url, "--llm-model", "test-model"]
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps(
        {"id": f"i{k}{E}", "question": f"{w} question{E}?", "context": f"ctx{E}",
         "answer": f"ans{E}", "label": k % 2}) + "\n"
        for k, w in enumerate(("First", "Second", "Third", "Fourth"))))
    a = results_file(tmp_path)
    data = json.loads(a.read_text())
    for q in data["queries"]:
        q["answer"], q["question"] = f"{q['answer']}{E}", f"{q['question']}{E}"
    a.write_text(json.dumps(data))
    data["config"]["name"] = f"other{E}"
    for q in data["queries"][:6]:
        q["answer"] = f"No idea{E}."
    b = tmp_path / "b.json"
    b.write_text(json.dumps(data))
    plan = plan_annotate(AnnotateRequest(source=a, store=tmp_path / "l.sqlite",
                                         token="t"))
    assert plan.queue is not None
    store.create_queue(plan.store, plan.queue, plan.items)
    first = str(plan.items[0]["id"])
    store.put_label(plan.store, Label(plan.queue.name, first, f"ann{E}", 1.0, f"n{E}", ""))
    other = tmp_path / "other.jsonl"
    other.write_text(logged.read_text())
    said: dict[str, str] = {}
    for name, args in {
        "judge-eval": ["judge-eval", str(items), "--metric", "answer_relevance",
                       "--label-map", "1=unsupported,0=supported", "--output",
                       str(tmp_path / "je.json"), *llm],
        "monitor": ["monitor", str(logged), "--judge-metrics", "none"],
        "duel": ["duel", str(a), str(b), "--output", str(tmp_path / "duel.json"),
                 "--resamples", "200", *llm],
        "compare": ["compare", "--dataset", str(logged), "--outputs", str(logged),
                    "--outputs", str(other),
                    "--no-history", "--output", str(tmp_path / "c.json")],
        "label": ["label", "--dataset", str(demo_path() / "questions.json"), "--corpus",
                  str(demo_path() / "corpus"), "--configs", "sparse", "--top-k", "2",
                  "--output", str(tmp_path / "labels.json"), *llm],
        "annotate status": ["annotate", "--status", "--store", str(plan.store)],
        "annotate export": ["annotate", "--store", str(plan.store), "--queue",
                            plan.queue.name, "--export", str(tmp_path / "x.csv")],
    }.items():
        code, out, err = run_cli(args, capsys)
        assert code in (0, 1), (name, err)
        said[name] = out + err
    for name, text in said.items():
        assert raw(text) == [], (name, raw(text))
    assert "ann␛[31mRED" in said["annotate status"]  # shown, not dropped
    assert "other␛[31mRED" in said["duel"] and "(1 items without a verdict" in said[
        "judge-eval"]
