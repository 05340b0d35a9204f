"""`ragmark annotate`'s page in real headless Chromium (Debian's ``chromium``, driven by
playwright) with a person's keystrokes: ten items labelled, a reload keeps them, undo,
a note, a skip, the judge hidden until labelled, a hostile text shown as text, a second
annotator on the same queue, nothing requested but the server, and the export equal to
the store (read back by --human-labels' reader)."""

from __future__ import annotations

import threading

import pytest
from support.annotate_data import HOSTILE, results_file, serving
from support.browser import launched, needs_chromium, open_page, sync_api

from ragmark.analysis.human_labels import read_human_labels
from ragmark.annotate import store
from ragmark.plan.annotate import AnnotateRequest, execute_annotate, export_labels, plan_annotate

pytestmark = needs_chromium
@pytest.fixture(scope="module")
def served(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("annotate")
    plan = plan_annotate(AnnotateRequest(source=results_file(tmp), store=tmp / "labels.sqlite",
                                         listen="127.0.0.1:0", overlap=2))
    ready = threading.Event()
    got = {}

    def on_ready(server, new):
        got["server"], got["new"] = server, new
        ready.set()

    thread = threading.Thread(target=execute_annotate, args=(plan, on_ready), daemon=True)
    thread.start()
    assert ready.wait(20) and got["new"] is True
    host, port = got["server"].server_address
    yield plan, f"http://{host}:{port}"
    got["server"].shutdown()
    thread.join(10)


@pytest.fixture(scope="module")
def browser():
    with launched() as b:
        yield b


def _open(browser, url):
    return open_page(browser, url + "/")


def _progress(page, text):
    try:
        page.wait_for_function("t => document.getElementById('progress').textContent === t",
                               arg=text, timeout=10_000)
    except sync_api.TimeoutError:
        raise AssertionError(f"progress {page.text_content('#progress')!r}, status "
                             f"{page.text_content('#status')!r}; expected {text!r}") from None


def _showing(page, question_start):
    try:
        page.wait_for_function(
            "t => document.getElementById('question').textContent.startsWith(t) && "
            "!document.getElementById('main').hidden", arg=question_start, timeout=10_000)
    except sync_api.TimeoutError:
        raise AssertionError(f"showing {page.text_content('#question')!r}, status "
                             f"{page.text_content('#status')!r}; expected "
                             f"{question_start!r}") from None


def test_a_person_labels_ten_items_with_the_keyboard_and_a_reload_keeps_them(served,
                                                                             browser):
    plan, url = served
    context, page, seen = _open(browser, url)
    page.wait_for_selector("#name")
    page.keyboard.type("alice")
    page.keyboard.press("Enter")
    _showing(page, "Question 0:")
    assert page.is_hidden("#judge")  # the judge's verdict is hidden until labelled
    assert page.is_hidden("#claims") and page.query_selector("#answer mark") is None
    page.keyboard.press("n")
    page.keyboard.type("the second claim is unclear")
    page.keyboard.press("Enter")
    given = []
    for i in range(10):
        _showing(page, f"Question {i}:")
        if i == 2:  # the hostile item is shown as text, and ran nothing
            assert page.text_content("#answer") == f"Hostile {HOSTILE}"
            assert page.text_content("#contexts li") == HOSTILE
            assert page.evaluate("window.pwned") is None
            assert page.query_selector("#answer img, #contexts img, #answer script") is None
        key = "1" if i % 3 else "2"
        page.keyboard.press(key)
        given.append(1.0 if key == "1" else 0.0)
        _progress(page, f"{i + 1} of 12 labelled (you: {i + 1})")
    _showing(page, "Question 10:")
    page.reload()
    _progress(page, "10 of 12 labelled (you: 10)")
    _showing(page, "Question 10:")  # resumes where the person was
    page.keyboard.press("k")  # back to an item labelled: its label and the judge shown
    _showing(page, "Question 9:")
    assert page.is_visible("#judge") and "faithfulness" in page.text_content("#judge")
    # the judge's claims, listed with its verdicts, and marked where the answer says them
    claims = page.query_selector_all("#claims li")
    assert [c.get_attribute("class") for c in claims] == ["supported", "unsupported",
                                                          "unsupported"]
    assert page.text_content("#answer mark.supported") == (
        "Fixed-size chunking typically uses 500 characters with an overlap of 50")
    assert page.get_attribute("#choices button:nth-child(1)", "aria-pressed") == "false"
    assert page.get_attribute("#choices button:nth-child(2)", "aria-pressed") == "true"  # No
    page.keyboard.press("u")  # undo the last label (item 9)
    _progress(page, "9 of 12 labelled (you: 9)")
    _showing(page, "Question 9:")
    page.keyboard.press("s")  # skip it: not a label, not offered again
    _showing(page, "Question 10:")
    _progress(page, "9 of 12 labelled (you: 9)")
    assert seen["errors"] == []
    assert {r.split("?")[0] for r in seen["requests"]} <= {
        f"{url}/", f"{url}/static/annotate.js", f"{url}/static/annotate.css",
        f"{url}/api/state", f"{url}/api/item", f"{url}/api/label", f"{url}/api/undo"}
    context.close()

    labels = store.labels(plan.store, plan.queue.name)
    mine = {lab.item: lab for lab in labels}
    assert [mine[f"item{i:02d}"].value for i in range(9)] == given[:9]
    assert mine["item09"].value is None  # the skip
    assert mine["item00"].note == "the second claim is unclear"

    # a second person on the same queue: the two overlap items (labelled once) and the
    # items nobody labelled; not alice's others
    context, page, seen = _open(browser, url)
    page.wait_for_selector("#name")
    page.fill("#name", "bob")
    page.keyboard.press("Enter")
    _showing(page, "Question 0:")
    page.keyboard.press("2")
    _showing(page, "Question 1:")
    assert page.text_content("#position") == "2 / 5"  # items 0, 1, 9, 10, 11
    page.keyboard.press("1")
    _showing(page, "Question 9:")
    _progress(page, "9 of 12 labelled (you: 2)")
    context.close()

    out = plan.store.parent / "labels.csv"
    plan_export = plan_annotate(AnnotateRequest(store=plan.store, queue=plan.queue.name,
                                                export=out))
    assert export_labels(plan_export) == 11
    read = read_human_labels(out)
    stored = [lab for lab in store.labels(plan.store, plan.queue.name) if lab.value is not None]
    assert [(h.id, h.value) for h in read.labels] == [(lab.item, lab.value) for lab in stored]
    assert read.metrics == ["faithfulness"]


def test_a_person_gives_preferences_with_the_keyboard_whichever_side_a_is_on(
        browser, tmp_path, server, capsys, monkeypatch):
    """Issue 36: a preference queue (A the baseline, B mid) in Chromium. Each pair's
    first answer is drawn; the person presses 1 (the first is better) on every pair, so
    the label kept is 1 (A) where A was shown first and 0 (B) where B was; 3 is a tie;
    the hostile passage is text; after labelling, the judge's preference is shown by
    side."""
    from support.pairwise_data import compare_file

    monkeypatch.delenv("RAGMARK_LLM_BASE_URL", raising=False)
    results = compare_file(tmp_path, server, capsys)
    plan = plan_annotate(AnnotateRequest(source=results, task="pairwise:overall",
                                         config="mid", store=tmp_path / "l.sqlite",
                                         listen="127.0.0.1:0", annotator="carol"))
    with serving(plan) as url:
        context, page, seen = _open(browser, url)
        firsts = {it["id"]: it["first"] for it in plan.items}
        for i, it in enumerate(plan.items):
            _showing(page, it["question"][:20])
            first, second = ((it["answer"], it["answer_b"]) if firsts[it["id"]] == "A"
                             else (it["answer_b"], it["answer"]))
            assert page.text_content("#answer") == first
            assert page.text_content("#second") == second
            assert page.is_visible("#second-box") and page.is_hidden("#judge")
            if i == 5:  # the bones passage holds a <script>: text, and ran nothing
                assert "<script>alert(1)</script>" in page.text_content("#contexts")
                assert page.query_selector("#contexts script, #second script") is None
            page.keyboard.press("3" if i == 4 else "1")
            _progress(page, f"{i + 1} of 6 labelled (you: {i + 1})")
        page.keyboard.press("k")  # back to the last pair: the judge's preference by side
        _showing(page, plan.items[5]["question"][:20])
        judge_side = "the first" if (firsts["q5"] == "B") else "the second"  # it chose B
        assert page.text_content("#judge") == f"The judge (pairwise:overall) preferred {judge_side}"
        assert page.get_attribute("#choices button:nth-child(1)", "aria-pressed") == "true"
        assert seen["errors"] == []
        context.close()
    kept = {lab.item: lab.value for lab in store.labels(plan.store, plan.queue.name)}
    want = {it["id"]: (0.5 if k == 4 else 1.0 if firsts[it["id"]] == "A" else 0.0)
            for k, it in enumerate(plan.items)}
    assert kept == want


def test_a_token_page_leaves_the_address_bar_reads_right_to_left_and_folds_long_texts(
        browser, tmp_path):
    """Issue 48, items 13-14: with --token, the token is exchanged for this server's
    cookie and leaves the address bar; an Arabic answer reads right to left; a
    340,000-character answer is folded until asked for, and labelled with a key."""
    import json

    source = results_file(tmp_path)
    data = json.loads(source.read_text())
    arabic = "يقيس BM25 أهمية المستند بتكرار الكلمات."
    data["queries"][0]["answer"] = arabic
    data["queries"][1]["answer"] = "A long answer. " * 22_667  # 340,005 characters
    source.write_text(json.dumps(data))
    plan = plan_annotate(AnnotateRequest(source=source, store=tmp_path / "l.sqlite",
                                         listen="127.0.0.1:0", token="s3cret",
                                         annotator="dana"))
    with serving(plan) as url:
        context, page, seen = open_page(browser, url + "/?token=s3cret")
        _showing(page, "Question 0")
        assert page.url == url + "/"  # the token is no longer in the address bar
        assert page.evaluate("getComputedStyle(document.getElementById('answer'))"
                             ".direction") == "rtl"
        assert page.evaluate("getComputedStyle(document.getElementById('question'))"
                             ".direction") == "ltr"
        page.keyboard.press("1")
        _showing(page, "Question 1")
        height = page.evaluate("document.getElementById('answer').getBoundingClientRect()"
                               ".height")
        assert height < 400, height
        assert page.text_content("button.unfold") == "Show all (340,005 characters)"
        assert page.evaluate("document.documentElement.scrollHeight") < 3000
        page.click("button.unfold")
        assert page.evaluate("document.getElementById('answer').getBoundingClientRect()"
                             ".height") > 10_000
        assert page.text_content("button.unfold") == "Fold"
        page.keyboard.press("f")  # the key folds it again
        assert page.text_content("button.unfold") == "Show all (340,005 characters)"
        page.keyboard.press("2")
        _progress(page, "2 of 12 labelled (you: 2)")
        page.reload()  # the cookie alone lets the page in again
        _progress(page, "2 of 12 labelled (you: 2)")
        assert seen["errors"] == []
        context.close()
    kept = [(lab.item, lab.value) for lab in store.labels(plan.store, plan.queue.name)]
    assert kept == [("item00", 1.0), ("item01", 0.0)]
