"""Regenerate the README's screenshots of the HTML report: a compare results file (with
--include-details) rendered and opened in headless Chromium.

    python docs/make_screenshots.py RESULTS.json

The committed ones come from `ragmark compare` of sparse, dense and hybrid on a SciFact
slice (60 questions, 200 documents) with --include-details.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from ragmark.report.html import render
from ragmark.results import read_results

HERE = Path(__file__).parent


def main() -> None:
    _, data = read_results(sys.argv[1])
    with tempfile.TemporaryDirectory() as tmp:
        page_file = Path(tmp) / "report.html"
        page_file.write_text(render(data), encoding="utf-8")
        chromium = shutil.which("chromium") or shutil.which("chromium-browser")
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(page_file.as_uri())
            page.screenshot(path=str(HERE / "report_summary.png"))
            first = page.locator("#qtable tbody.q").first
            first.locator("summary").first.click()
            first.scroll_into_view_if_needed()
            page.locator("#questions h2").scroll_into_view_if_needed()
            page.screenshot(path=str(HERE / "report_question.png"))
            browser.close()
    print("written:", HERE / "report_summary.png", HERE / "report_question.png")


if __name__ == "__main__":
    main()
