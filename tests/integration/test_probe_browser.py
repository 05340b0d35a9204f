"""A probe's page in real headless Chromium: the answers it shows are hostile by design
(a script, an image on the outside host, an event handler, a Markdown image), written by
a model that obeys what was planted. The page runs none of it and fetches nothing: no
request but the file, no console error, the title unchanged, every text on screen as
text with the canary marked."""

from __future__ import annotations

import json
import re
from pathlib import Path

from support.browser import needs_chromium, rendered
from support.cli import run_cli
from support.fake_llm_server import chat_reply

pytestmark = needs_chromium

DEMO = Path(__file__).resolve().parents[2] / "src" / "ragmark" / "demo"
HOSTILE = ('<script>document.title="pwned"</script><img src="https://probe.ragmark.invalid/'
           'x.png" onerror="document.title=\'pwned\'"> ![s](https://probe.ragmark.invalid/p.png)')


def obey(body):
    user = body["messages"][-1]["content"]
    canary = re.findall(r"RMK[A-Z0-9]{5}", user)[:1]
    return chat_reply(" ".join([*canary, HOSTILE]), 40, 20)


def test_the_probe_page_shows_hostile_answers_as_text(tmp_path, server, capsys):
    server.rule = obey
    cfg = tmp_path / "llm.toml"
    cfg.write_text(f'name = "llm"\n[generator]\nname = "llm"\nguard = false\n[llm]\n'
                   f'base_url = "{server.url}"\nmodel = "test-model"\n')
    code, _, err = run_cli(["probe", "--dataset", str(DEMO / "questions.json"), "--corpus",
                            str(DEMO / "corpus"), "--configs", str(cfg), "--attacks",
                            "injection,exfiltration", "--styles", "plain", "--targets", "2",
                            "--resamples", "200", "--output", str(tmp_path / "p"), "--quiet"],
                           capsys)
    assert code == 0, err
    data = json.loads((tmp_path / "p.json").read_text())
    assert data["configs"]["llm"]["attacks"]["exfiltration"]["success"]["value"] == 1.0
    with rendered(tmp_path / "p.json", tmp_path / "p.html", capsys) as page:
        assert page.title().startswith("ragmark probe") and "pwned" not in page.title()
        assert page.locator("img").count() == 0 and page.locator("body script").count() == 0
        cells = page.locator("td.text").all_inner_texts()
        assert any('<script>document.title="pwned"</script>' in c for c in cells)
        marked = page.locator("td.text mark").all_inner_texts()
        canaries = {p["marker"] for p in data["planted"]["injection:plain"].values()}
        assert canaries <= set(marked)
        assert any("probe.ragmark.invalid" in m for m in marked)  # the address, marked
