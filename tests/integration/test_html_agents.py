"""An agent's trajectory in the HTML report, in real headless Chromium (issue 50, item 1):
a compare of two logged agents, one question's row expanded with real clicks after
typing in the filter, its steps listed with every text escaped (a tool result holding
markup shows as text, runs nothing)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.browser import launched, needs_chromium, open_page

from ragmark.cli import main

pytestmark = needs_chromium

EVIL = '<img src=x onerror="document.title=\'pwned\'"><b>bold</b>'


def _line(qid: str, question: str, calls: list[tuple[str, dict, str]], answer: str) -> str:
    messages: list[dict] = [{"role": "user", "content": question}]
    for i, (name, args, result) in enumerate(calls):
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"c{i}", "type": "function",
             "function": {"name": name, "arguments": json.dumps(args)}}]})
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": result})
    messages.append({"role": "assistant", "content": answer})
    return json.dumps({"id": qid, "question": question, "messages": messages,
                       "contexts": [r for _, _, r in calls] or ["none"]})


@pytest.fixture(scope="module")
def page_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("agents")
    truth = [("q1", "Who wrote Dune?", "Frank Herbert", "Dune is a novel by Frank Herbert."),
             ("q2", "When was Dune Messiah published?", "1969",
              "Dune Messiah was published in 1969.")]
    (tmp / "set.jsonl").write_text("\n".join(json.dumps(
        {"id": q, "question": text, "expected_answer": a, "ground_truth_contexts": [p],
         "expected_tool_calls": [{"name": "search", "arguments": {"query": text}}]})
        for q, text, a, p in truth) + "\n")
    (tmp / "careful.jsonl").write_text("\n".join(
        _line(q, text, [("search", {"query": text}, p)], a) for q, text, a, p in truth) + "\n")
    (tmp / "odd.jsonl").write_text("\n".join([
        _line("q1", truth[0][1], [("search", {"query": "dune"}, EVIL),
                                  ("calculator", {"expression": "1+1"}, "2")], "Herbert"),
        _line("q2", truth[1][1], [], "1969")]) + "\n")
    with pytest.raises(SystemExit) as e:
        main(["compare", "--dataset", str(tmp / "set.jsonl"), "--outputs",
              str(tmp / "careful.jsonl"), "--outputs", str(tmp / "odd.jsonl"),
              "--metrics", "trajectory_superset,tool_f1,exact_match", "--format", "html",
              "--output", str(tmp / "agents"), "--include-details", "--quiet",
              "--no-history"])
    assert e.value.code == 0
    return tmp / "agents.html"


def test_a_questions_steps_show_escaped_in_chromium(page_file):
    with launched() as browser:
        context, page, seen = open_page(browser, page_file.as_uri())
        page.locator("#filter").press_sequentially("Dune?")  # real keystrokes
        rows = page.locator("#qtable tbody.q")
        visible = [r for r in range(rows.count()) if rows.nth(r).is_visible()]
        assert len(visible) == 1
        row = rows.nth(visible[0])
        row.locator("details").first.locator("summary").first.click()
        text = row.inner_text()
        assert "Trajectory (3 steps; 1 tool call)" in text  # careful
        assert "Trajectory (5 steps; 2 tool calls)" in text  # odd
        assert 'model: asked search({"query": "Who wrote Dune?"})' in text
        assert "tool calculator [c1]: → 2" in text
        assert EVIL[:20] in text  # shown as text
        assert page.title() != "pwned" and page.locator("img[src=x]").count() == 0
        assert seen["errors"] == [] and seen["requests"] == [page_file.as_uri()]
        context.close()
