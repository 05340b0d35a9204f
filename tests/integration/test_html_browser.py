"""The HTML report in real headless Chromium (Debian's ``chromium``, driven by
playwright): no console error, no request but the file itself, a quick first paint,
sorting, filtering and row expansion work, it reads with JavaScript off, and a
screenshot is taken."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.browser import launched, needs_chromium, open_page

from ragmark.cli import main
from ragmark.demo.tour import demo_path

pytestmark = needs_chromium

CHUNKY = 'name = "chunky"\nunit = "chunk"\n[chunker]\nname = "fixed"\nsize = 120\noverlap = 0\n'


@pytest.fixture(scope="module")
def page_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("html")
    (tmp / "chunky.toml").write_text(CHUNKY)
    with pytest.raises(SystemExit) as e:
        main(["compare", "--dataset", str(demo_path() / "questions.json"), "--corpus",
              str(demo_path() / "corpus"), "--configs", "sparse", str(tmp / "chunky.toml"),
              "--format", "html", "--output", str(tmp / "eval"), "--quiet", "--no-history"])
    assert e.value.code == 0
    return tmp / "eval.html"


@pytest.fixture(scope="module")
def browser():
    with launched() as b:
        yield b


def _open(browser, path: Path, js: bool = True):
    return open_page(browser, path.as_uri(), js)


def test_page_opens_offline_without_errors_and_paints_fast(browser, page_file, tmp_path):
    context, page, seen = _open(browser, page_file)
    assert seen["errors"] == []
    assert seen["requests"] == [page_file.as_uri()]  # nothing but the file itself
    fcp = "performance.getEntriesByName('first-contentful-paint')"
    page.wait_for_function(f"() => {fcp}.length > 0", timeout=10_000)
    paint = page.evaluate(f"() => {fcp}[0].startTime")
    assert 0 < paint < 2000
    shot = tmp_path / "page.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000
    context.close()


def test_sort_filter_and_expand(browser, page_file):
    context, page, seen = _open(browser, page_file)
    rows = page.locator("#qtable tbody.q")
    assert rows.count() == 8

    def column(i: int) -> list[str]:
        return [rows.nth(r).locator("tr").first.locator("td").nth(i).get_attribute("data-v")
                or "" for r in range(rows.count())]

    page.click("#qtable th.sort[data-col='2']")  # the first config's column, ascending
    values = [float(v) for v in column(2) if v]
    assert values == sorted(values) and len(values) == 8
    page.click("#qtable th.sort[data-col='2']")  # again: descending
    values = [float(v) for v in column(2) if v]
    assert values == sorted(values, reverse=True)
    page.fill("#filter", "recall")
    visible = [rows.nth(r).is_visible() for r in range(rows.count())]
    texts = [rows.nth(r).get_attribute("data-text") for r in range(rows.count())]
    assert visible == ["recall" in t for t in texts] and 0 < sum(visible) < 8
    page.fill("#filter", "")
    first = rows.first.locator("details").first
    assert first.get_attribute("open") is None
    first.locator("summary").first.click()
    assert first.get_attribute("open") == ""
    assert first.locator("table.items").first.is_visible()
    assert seen["errors"] == []
    context.close()


def test_readable_with_javascript_off(browser, page_file):
    context, page, seen = _open(browser, page_file, js=False)
    assert page.locator("table.metrics").is_visible()
    assert page.locator("section#differences svg").first.is_visible()
    details = page.locator("#qtable tbody.q details").first
    details.locator("summary").first.click()  # native <details>: no script needed
    assert details.get_attribute("open") == ""
    assert seen["errors"] == []
    context.close()


def test_wide_tables_scroll_in_their_box_and_a_single_run_says_only_what_it_shows(
        browser, page_file, tmp_path):
    """Issue 25 item 13: at 1,400 px the metric table and the question table (every
    metric per config, judge columns too) used to push the page wider than the window;
    the single-run page's legend spoke of intervals and a baseline it does not show."""
    with pytest.raises(SystemExit) as e:  # one run, with two judge columns (no endpoint:
        main(["run", "--dataset", str(demo_path() / "questions.json"), "--corpus",  # missing)
              str(demo_path() / "corpus"), "--judge-metrics",
              "faithfulness,answer_correctness", "--format", "html", "--output",
              str(tmp_path / "one"), "--quiet", "--no-history"])
    assert e.value.code in (0, 1)
    for path in (page_file, tmp_path / "one.html"):
        context = browser.new_context(viewport={"width": 1400, "height": 900})
        page = context.new_page()
        page.goto(path.as_uri())
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
        assert page.evaluate("document.documentElement.scrollWidth") <= 1400, path.name
        for table in ("table.metrics", "#qtable"):
            right = page.evaluate(f"document.querySelector('{table}').parentElement"
                                  ".getBoundingClientRect().right")
            assert right <= 1400 - 24, (path.name, table)
        legend = page.locator("p.legend").first.inner_text()
        if path == page_file:
            assert "95% bootstrap interval; Wilson's where every value is 0 or 1" in legend
            assert "baseline" in legend
        else:
            assert legend == "Mean over the questions with a value (n)."
            assert "answer_correctness" in page.locator("table.metrics").inner_text()
        context.close()


COLOUR_OF = """(name) => [...document.querySelectorAll('svg')].flatMap((svg) => {
  const t = [...svg.querySelectorAll('text')].find((x) => x.textContent === name
    || x.textContent.startsWith(name + ' (n='));
  if (!t) { return []; }
  for (let el = t.nextElementSibling; el; el = el.nextElementSibling) {
    if (el.tagName === 'circle') { return [el.getAttribute('fill')]; }
    const s = el.getAttribute('stroke');
    if (el.tagName === 'line' && s && s !== '#ddd') { return [s]; }
  }
  return [];
})"""


def test_the_pairwise_part_reads_as_well_as_the_markdown(browser, tmp_path, server, capsys):
    """Issue 48, item 15, in Chromium: the win matrix's caption is not squeezed into the
    table's width; a config keeps its colour from plot to plot; the HTML table has the
    Markdown's 'without verdict' column; the latency-and-cost table counts the pairwise
    judge's calls."""
    from support.pairwise_data import compare_file

    results = compare_file(tmp_path, server, capsys, "--format", "json,md,html")
    page_file = results.with_suffix(".html")
    context, page, seen = _open(browser, page_file)
    page.set_viewport_size({"width": 1280, "height": 900})
    box = page.locator("figure.heatmap figcaption").bounding_box()
    assert box is not None and box["width"] > 400 and box["height"] < 60, box
    heads = page.locator("#pairwise table").first.locator("th").all_text_contents()
    assert heads[-1] == "without verdict"
    judge_row = page.locator("#costs tbody tr").last.locator("td").all_text_contents()
    assert judge_row[0] == "the pairwise judge (every match)" and judge_row[5] == "36"
    md = results.with_suffix(".md").read_text()
    assert "| the pairwise judge (every match) | — | — | — | 36 |" in md
    for name in ("long", "mid", "short"):
        colours = page.evaluate(COLOUR_OF, name)
        assert len(colours) >= 2 and len(set(colours)) == 1, (name, colours)
    assert len({page.evaluate(COLOUR_OF, n)[0] for n in ("long", "mid", "short")}) == 3
    assert seen["errors"] == []
    context.close()


@pytest.mark.parametrize("k", [10, 100, 1000])
def test_deep_rankings_keep_the_page_in_the_window(browser, tmp_path, k):
    """Issue 61 item 27: with --top-k 100 the "Metrics at every k" table made the page
    6,581 px wide and the chart's k labels 1-100 printed over each other. At k = 10,
    100 and 1000 the page stays within 1,400 px, the table lists the usual cutoffs, and
    no two of the chart's labels overlap."""
    import json

    corpus = tmp_path / "corpus.jsonl"  # 1,200 documents, each sharing a word with every
    corpus.write_text("".join(json.dumps({  # question, so BM25 ranks them all
        "id": f"d{i}", "text": f"Passage {i} about retrieval topic number {i % 37}."})
        + "\n" for i in range(1200)))
    items = [{"id": f"q{j}", "question": f"What about retrieval topic number {j}?",
              "ground_truth_contexts": [f"Passage {j} about retrieval topic number {j}."]}
             for j in range(4)]
    (tmp_path / "set.json").write_text(json.dumps(items))
    with pytest.raises(SystemExit) as e:
        main(["run", "--dataset", str(tmp_path / "set.json"), "--corpus", str(corpus),
              "--top-k", str(k), "--format", "html", "--output", str(tmp_path / "deep"),
              "--quiet", "--no-history", "--include-details", "--skip-generation"])
    assert e.value.code == 0
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.goto((tmp_path / "deep.html").as_uri())
    assert page.evaluate("document.documentElement.scrollWidth") <= 1400
    heads = page.locator("section#curves table").first.locator("thead th").all_inner_texts()
    assert heads[:3] == ["config", "questions", "@1"] and heads[-1] == f"@{k}"
    assert len(heads) <= 2 + 13
    boxes = page.evaluate("""() => {
        const svg = document.querySelector('section#curves svg');
        const axis = svg.getBoundingClientRect().bottom;
        return [...svg.querySelectorAll('text')]
          .map(t => t.getBoundingClientRect())
          .filter(r => r.bottom > axis - 30)
          .map(r => [r.left, r.right]);
    }""")
    boxes.sort()
    assert len(boxes) == len(heads) - 2
    assert all(a[1] <= b[0] + 0.5 for a, b in zip(boxes, boxes[1:], strict=False)), boxes
    context.close()
