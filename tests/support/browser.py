"""Real headless Chromium (Debian's ``chromium``) driven by playwright, for every web page
ragmark makes: the module-level ``sync_api`` and ``CHROMIUM`` a test module skips on,
and :func:`open_page`, which records the page's console errors and every request."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

sync_api = pytest.importorskip("playwright.sync_api", reason="needs playwright (ragmark-eval[dev])")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(CHROMIUM is None,
                                    reason="needs Debian's chromium (apt-get install chromium)")


@contextmanager
def launched() -> Iterator[Any]:
    """A headless Chromium, closed after."""
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield b
        finally:
            b.close()


def open_page(browser: Any, url: str, js: bool = True) -> tuple[Any, Any, dict[str, list[str]]]:
    """A new context and page at ``url``, and what it ``seen``: console errors and page
    errors (``errors``), every request's URL (``requests``)."""
    context = browser.new_context(java_script_enabled=js)
    page = context.new_page()
    seen: dict[str, list[str]] = {"errors": [], "requests": []}
    page.on("console", lambda m: seen["errors"].append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: seen["errors"].append(str(e)))
    page.on("request", lambda r: seen["requests"].append(r.url))
    page.goto(url)
    return context, page, seen


@contextmanager
def rendered(results: Any, html: Any, capsys: Any) -> Iterator[Any]:
    """``ragmark report RESULTS --output HTML``, the page opened in a headless Chromium
    and loaded: it asked for nothing but its file (an image an answer names is never
    fetched) and logged no error."""
    from support.cli import run_cli

    code, _, err = run_cli(["report", str(results), "--output", str(html)], capsys)
    assert code == 0, err
    with launched() as browser:
        context, page, seen = open_page(browser, html.as_uri())
        page.wait_for_load_state("load")
        assert seen["requests"] == [html.as_uri()]
        assert seen["errors"] == []
        try:
            yield page
        finally:
            context.close()
