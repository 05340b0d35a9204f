"""The annotation server against a rebinding page and a second server on the same host
(issue 48, items 12-14): without a token only loopback Host names are answered; each
server's token cookie is its own; the label API refuses a value or a note of the wrong
type, naming the field; an empty answer is not queued for a judge's question. Each
test fails on the main of before the issue."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
from support.annotate_data import results_file
from support.annotate_data import serving as served
from support.cli import run_cli

from ragmark.plan.annotate import AnnotateRequest, plan_annotate

HEADERS = {"X-Ragmark": "1"}


@contextmanager
def serving(tmp, name: str, token: str | None = None) -> Iterator[str]:
    """``ragmark annotate`` of a results file on a free loopback port: its address."""
    folder = tmp / name
    folder.mkdir()
    with served(plan_annotate(AnnotateRequest(
            source=results_file(folder), store=folder / "labels.sqlite",
            listen="127.0.0.1:0", token=token))) as url:
        yield url


def test_a_rebinding_page_can_neither_read_nor_label(tmp_path):
    with serving(tmp_path, "a") as url, httpx.Client(base_url=url, timeout=10) as c:
        port = url.rsplit(":", 1)[1]
        first = c.get("/api/state?annotator=ann").json()["next"]
        body = {"annotator": "ann", "item": first, "value": 1}
        for host in (f"attacker.example:{port}", "attacker.example", "127.0.0.1.nip.io"):
            foreign = {**HEADERS, "Host": host}
            r = c.post("/api/label", json=body, headers=foreign)
            assert r.status_code == 403 and "not a loopback name" in r.json()["error"]
            assert c.get("/api/state?annotator=ann", headers=foreign).status_code == 403
            assert c.get("/", headers=foreign).status_code == 403
        state = c.get("/api/state?annotator=ann").json()
        assert state["done"] == 0  # nothing was saved
        for host in (f"localhost:{port}", f"127.0.0.1:{port}"):
            r = c.post("/api/label", json=body, headers={**HEADERS, "Host": host})
            assert r.status_code == 200 and r.json()["done"] == 1


def test_two_token_servers_on_one_host_keep_their_own_cookie(tmp_path):
    with serving(tmp_path, "a", "alpha") as a, serving(tmp_path, "b", "beta") as b, \
            httpx.Client(timeout=10) as browser:  # one cookie jar, as a browser has
        assert browser.get(a + "/?token=alpha").status_code == 200
        assert browser.get(b + "/?token=beta").status_code == 200
        # cookies ignore ports: with one name, b's cookie replaced a's and logged a out
        assert browser.get(a + "/api/state?annotator=ann").status_code == 200
        assert browser.get(b + "/api/state?annotator=ann").status_code == 200
        names = sorted(c.name for c in browser.cookies.jar)
        assert len(names) == 2 and all(n.startswith("ragmark_annotate_") for n in names)
        page = browser.get(a + "/")
        assert page.headers["referrer-policy"] == "no-referrer"


def test_the_label_api_refuses_wrong_types_naming_the_field(tmp_path):
    with serving(tmp_path, "a") as url, httpx.Client(base_url=url, timeout=10) as c:
        first = c.get("/api/state?annotator=ann").json()["next"]
        body = {"annotator": "ann", "item": first, "value": 1}
        for wrong, field in (({"value": True}, "value:"), ({"value": "1"}, "value:"),
                             ({"note": 123}, "note:"), ({"note": ["x"]}, "note:"),
                             ({"item": {"id": 1}}, "item:"), ({"annotator": 5}, "annotator:")):
            r = c.post("/api/label", json={**body, **wrong}, headers=HEADERS)
            assert r.status_code == 400 and r.json()["error"].startswith(field), (wrong, r.text)
        r = c.post("/api/label", json={k: v for k, v in body.items() if k != "value"},
                   headers=HEADERS)
        assert r.status_code == 400 and r.json()["error"].startswith("value:")
        assert c.get("/api/state?annotator=ann").json()["done"] == 0
        r = c.post("/api/label", json={**body, "note": "checked"}, headers=HEADERS)
        assert r.status_code == 200


def test_an_empty_answer_is_not_queued_and_the_flag_is_named(tmp_path, capsys):
    source = results_file(tmp_path)
    data = json.loads(source.read_text())
    data["queries"][0]["answer"] = "  "
    source.write_text(json.dumps(data))
    plan = plan_annotate(AnnotateRequest(source=source, store=tmp_path / "l.sqlite"))
    assert len(plan.items) == 11 and data["queries"][0]["id"] not in [
        it["id"] for it in plan.items]
    assert plan.drawn["left_out"] == {"an empty answer": 1}
    for q in data["queries"]:  # no judge metric at all
        q["metrics"] = {"refusal": q["metrics"].get("refusal", 0.0)}
    source.write_text(json.dumps(data))
    code, _, err = run_cli(["annotate", str(source), "--store", str(tmp_path / "m.sqlite")],
                           capsys)
    assert code == 2 and "choose one with --task" in err and "--metric" not in err


def test_a_restart_without_its_flags_keeps_the_queues_overlap(tmp_path, capsys):
    """Issue 48, item 7: a queue started with --overlap 3 and restarted after a crash
    without the flag still gives the first 3 items to a second person; a restart with
    another --overlap is refused, saying both."""
    source, labels = results_file(tmp_path), tmp_path / "labels.sqlite"
    first = plan_annotate(AnnotateRequest(source=source, store=labels, listen="127.0.0.1:0",
                                          overlap=3))
    with served(first) as url, httpx.Client(base_url=url, timeout=10) as c:
        order = c.get("/api/state?annotator=ann").json()["order"]
        for item in order:
            assert c.post("/api/label", headers=HEADERS, json={
                "annotator": "ann", "item": item, "value": 1}).status_code == 200
    # the crash; started again with only the source
    again = plan_annotate(AnnotateRequest(source=source, store=labels, listen="127.0.0.1:0"))
    assert again.queue.settings["overlap"] == 3
    with served(again) as url, httpx.Client(base_url=url, timeout=10) as c:
        bob = c.get("/api/state?annotator=bob").json()
        assert bob["order"] == order[:3] and bob["next"] == order[0]
    code, _, err = run_cli(["annotate", str(source), "--store", str(labels), "--overlap", "1"],
                           capsys)
    assert code == 2 and "was started with --overlap 3, not 1" in err
