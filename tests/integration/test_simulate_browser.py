"""A simulation's page (``ragmark report sim.json``) in real headless Chromium: two
systems on two scenarios, one of which answers with hostile text (a script, an image on
an outside host, an event handler) and a simulated user who writes some too. The page
runs none of it and fetches nothing; every conversation is there turn by turn; typing
in the filter (real keystrokes) and ticking "only those whose ending differs" leave the
scenarios they should."""

from __future__ import annotations

import json
import sys

from support.browser import needs_chromium, rendered
from support.cli import run_cli
from support.fake_llm_server import chat_reply

from ragmark.judges.conversation import GOAL_PROMPT, RETENTION_PROMPT

pytestmark = needs_chromium

HOSTILE = ('<script>document.title="pwned"</script><img src="https://sim.ragmark.invalid/'
           'x.png" onerror="document.title=\'pwned\'">')
SCENARIOS = [
    {"id": "bm25", "scenario": "Learn what BM25 ranks.",
     "expected_outcome": "The assistant says BM25 ranks documents.",
     "ground_truth_contexts": ["BM25 ranks documents by term weights."]},
    {"id": "mars", "scenario": "Learn the capital of Mars.",
     "expected_outcome": "The assistant names the capital.", "max_turns": 2},
]
KNOWS = """
def answer(question, history=None):
    if "bm25" in question:
        return {"answer": "BM25 ranks documents.", "contexts": [
            {"id": "d1", "text": "BM25 ranks documents by term weights."}]}
    return {"answer": "No idea.", "contexts": []}
"""
HOSTILE_SYSTEM = f"""
def answer(question, history=None):
    return {{"answer": "I do not know. " + {HOSTILE!r}, "contexts": []}}
"""


def _rule(body):
    """The judges (goal reached where BM25 was said to rank documents; nothing
    forgotten), and the simulated user: it gives up when told "I do not know" or "No
    idea", is satisfied once BM25 is said to rank documents, and asks about Mars with
    hostile text."""
    system = body["messages"][0]["content"]
    text = body["messages"][-1]["content"]
    if system.startswith(GOAL_PROMPT.instruction[:30]):
        return chat_reply("YES" if "BM25" in text and "I do not know" not in text else "NO")
    if system.startswith(RETENTION_PROMPT.instruction[:30]):
        return chat_reply("NO")
    if "ASSISTANT: I do not know." in text or "ASSISTANT: No idea." in text:
        return chat_reply(json.dumps({"status": "gave_up"}))
    if "ASSISTANT: BM25 ranks documents." in text:
        return chat_reply(json.dumps({"status": "goal_reached"}))
    ask = "what does bm25 do?" if "BM25" in text else f"capital of mars? {HOSTILE}"
    return chat_reply(json.dumps({"status": "continue", "message": ask}))


def test_the_simulation_page_shows_every_turn_as_text_and_filters(tmp_path, server, capsys):
    server.rule = _rule
    (tmp_path / "svc").mkdir()
    configs = []
    for name, code in (("knows", KNOWS), ("hostile", HOSTILE_SYSTEM)):
        (tmp_path / "svc" / f"page_{name}.py").write_text(code)
        (tmp_path / f"{name}.toml").write_text(
            f'name = "{name}"\n[pipeline]\nkind = "python"\ntarget = "page_{name}:answer"\n'
            'python_path = ["svc"]\n')
        configs += ["--config", str(tmp_path / f"{name}.toml")]
    scenarios = tmp_path / "scenarios.jsonl"
    scenarios.write_text("".join(json.dumps(s) + "\n" for s in SCENARIOS))
    try:
        code, _, err = run_cli(["simulate", str(scenarios), *configs, "--transcripts",
                                str(tmp_path / "t.jsonl"), "--output",
                                str(tmp_path / "sim.json"), "--metrics", "hit@1",
                                "--no-history", "--llm-base-url",
                                server.url, "--llm-model", "judge", "--quiet"], capsys)
    finally:
        for name in ("knows", "hostile"):
            sys.modules.pop(f"page_{name}", None)
    assert code == 0, err
    data = json.loads((tmp_path / "sim.json").read_text())
    endings = {c["system"]: {v["id"]: v["outcome"] for v in c["conversations"]}
               for c in data["configs"]}
    assert endings == {"knows": {"bm25": "goal_reached", "mars": "gave_up"},
                       "hostile": {"bm25": "gave_up", "mars": "gave_up"}}
    with rendered(tmp_path / "sim.json", tmp_path / "sim.html", capsys) as page:
        assert page.title() == "ragmark simulate: 2 scenarios, 2 configs"
        assert page.locator("img").count() == 0 and page.locator("body script").count() == 1
        texts = page.locator(".text").all_inner_texts()
        # mars's turn with each system, the hostile system's two answers
        assert sum(HOSTILE in t for t in texts) == 4
        turns = page.locator("section.scenario").first.locator(".turn").all_inner_texts()
        summaries = page.locator("section.scenario").first.locator("summary").all_inner_texts()
        assert summaries == [
            "knows: goal reached after 1 turn; goal completion 1.00; knowledge retention "
            "missing (no answer after the first turn: nothing to remember)",
            "hostile: gave up after 1 turn; goal completion 0.00; knowledge retention "
            "missing (no answer after the first turn: nothing to remember)"]
        assert turns[0] == "User: what does bm25 do?"
        assert turns[1].startswith("Assistant: BM25 ranks documents.\npassages: d1;")
        assert turns[1].endswith(" s; hit@1 1.000")  # the turn's own metric
        assert page.locator("h2", has_text="Per turn").count() == 1
        assert page.locator("#shown").inner_text() == "2"
        page.locator("#filter").click()
        page.keyboard.type("MARS")
        assert page.locator("section.scenario:visible h3").all_inner_texts() == ["mars"]
        assert page.locator("#shown").inner_text() == "1"
        for _ in "MARS":
            page.keyboard.press("Backspace")
        page.locator("#differ").check()
        assert page.locator("section.scenario:visible h3").all_inner_texts() == ["bm25"]
        assert "pwned" not in page.title()
