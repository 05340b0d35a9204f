"""A test set's check as a page (``ragmark report check.json``) in real headless
Chromium: a question written with hostile text (a script, an image on an outside host)
shows as text, nothing is fetched, and typing in the filter (real keystrokes) leaves
the rows that hold the words typed."""

from __future__ import annotations

import json

from support.browser import needs_chromium, rendered
from support.cli import run_cli

pytestmark = needs_chromium

HOSTILE = ('<script>document.title="pwned"</script><img src="https://check.ragmark.invalid/'
           'x.png" onerror="document.title=\'pwned\'">')


def test_the_check_page_shows_questions_as_text_and_filters(tmp_path, capsys):
    bm25 = {"expected_answer": "By term weights.",
            "ground_truth_contexts": ["BM25 ranks documents by term weights."]}
    rows = [{"id": "q1", "question": "How does BM25 rank documents?", **bm25},
            {"id": "q2", "question": "How does BM25 rank the documents?", **bm25},
            {"id": "q3", "question": f"Which year, 1889? {HOSTILE}", "expected_answer": "1889",
             "ground_truth_contexts": ["The tower was finished in 1889 in Paris."]}]
    (tmp_path / "set.json").write_text(json.dumps(rows))
    code, _, err = run_cli(["testset", "check", str(tmp_path / "set.json"), "--words-only",
                            "--output", str(tmp_path / "check.json"), "--quiet"], capsys)
    assert code == 0, err
    with rendered(tmp_path / "check.json", tmp_path / "check.html", capsys) as page:
        assert page.title().startswith("ragmark testset check") and "pwned" not in page.title()
        assert page.locator("img").count() == 0 and page.locator("body script").count() == 1
        assert page.locator("tr.item").count() == 2  # the pair, the leaked answer
        leaked = page.locator("tr.item").nth(1).inner_text()
        assert leaked == f"q3 Which year, 1889? {HOSTILE}"
        assert page.locator("#shown").inner_text() == "2"
        page.locator("#filter").click()
        page.keyboard.type("the documents")
        assert page.locator("tr.item:visible").all_inner_texts() == [
            "q1 How does BM25 rank documents?\tq2 How does BM25 rank the documents?\t—\t1.00"
            "\twords"]
        assert page.locator("#shown").inner_text() == "1"
