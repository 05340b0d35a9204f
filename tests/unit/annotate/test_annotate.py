"""`ragmark annotate` without a browser: the stratified draw, who is offered what, the
store (a kill -9 of the server loses no acknowledged label), the token and the
cross-site guard, --status, --export read back by judge-eval and --human-labels, and
bad flags refused before anything is served."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time

import httpx
import pytest
from support.annotate_data import results_file
from support.cli import run_cli

from ragmark.analysis.review import ReviewRow
from ragmark.annotate import queue as q
from ragmark.annotate import store
from ragmark.annotate.store import Label, Queue

HEADERS = {"X-Ragmark": "1"}
LOOPBACK = "http://127.0.0.1"  # without a token only loopback names are served


def _rows(judges):
    return [ReviewRow(f"q{i}", "?", "a", ("c",), "faithfulness", j) for i, j in
            enumerate(judges)]


def test_the_sample_is_stratified_by_the_judges_verdict_and_seeded():
    # 3 'judge no' (faithfulness < 1) and 9 'judge yes': 4 drawn -> 1 and 3, in file order
    rows = _rows([0.5, 1, 1, 0, 1, 1, 1, 0.8, 1, 1, 1, 1])
    got = q._stratified(rows, 4, seed=3)
    assert [r.id for r in got] == sorted((r.id for r in got), key=lambda i: int(i[1:]))
    assert sum(r.judge < 1 for r in got) == 1 and sum(r.judge == 1 for r in got) == 3
    assert got == q._stratified(rows, 4, seed=3) and len(q._stratified(rows, 2, 0)) == 2
    # a stratum too small for its share still gets one when n allows
    few = q._stratified(_rows([0.0] + [1.0] * 20), 3, seed=0)
    assert sum(r.judge == 0 for r in few) == 1 and len(few) == 3


def test_who_is_offered_what_with_an_overlap_of_two():
    items = [{"id": f"i{k}"} for k in range(5)]
    labels = [Label("Q", "i0", "ann", 1.0, "", "t"), Label("Q", "i2", "ann", 0.0, "", "t"),
              Label("Q", "i3", "ann", None, "", "t")]  # ann skipped i3
    ann = q.view(items, labels, "ann", overlap=2)
    assert ann.order == ["i0", "i1", "i2", "i3", "i4"] and ann.next == "i1"
    bob = q.view(items, labels, "bob", overlap=2)
    # i0 needs a second person; i2 is labelled once and needs one; i3 was only skipped
    assert bob.order == ["i0", "i1", "i3", "i4"] and bob.next == "i0"
    assert (bob.total, bob.labelled) == (5, 2)
    assert q.status(items, labels) == {"items": 5, "labelled": 2, "annotators": {
        "ann": {"no": 1, "skipped": 1, "yes": 1}}}


def test_the_store_replaces_a_label_undoes_the_last_and_refuses_other_items(tmp_path):
    path = tmp_path / "labels.sqlite"
    queue = Queue("Q", "faithfulness", "run.json", {"overlap": 0})
    assert store.create_queue(path, queue, [{"id": "a"}, {"id": "b"}]) is True
    assert store.create_queue(path, queue, [{"id": "a"}, {"id": "b"}]) is False  # resumes
    with pytest.raises(Exception, match="queue 'Q' exists with other items"):
        store.create_queue(path, queue, [{"id": "a"}])
    store.put_label(path, Label("Q", "a", "ann", 1.0, "", ""))
    store.put_label(path, Label("Q", "b", "ann", 0.0, "", ""))
    store.put_label(path, Label("Q", "a", "ann", 0.0, "changed my mind", ""))
    assert [(lab.item, lab.value) for lab in store.labels(path, "Q")] == [("b", 0.0),
                                                                          ("a", 0.0)]
    assert store.undo(path, "Q", "ann") == "a"
    assert [(lab.item, lab.value) for lab in store.labels(path, "Q")] == [("b", 0.0)]
    assert store.undo(path, "Q", "bob") is None
    with pytest.raises(Exception, match="no item 'z' in queue 'Q'"):
        store.put_label(path, Label("Q", "z", "ann", 1.0, "", ""))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(url: str) -> None:
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.TransportError:
            time.sleep(0.1)
    raise AssertionError(f"nothing answered at {url}")


def test_a_killed_server_loses_no_acknowledged_label_and_a_restart_resumes(tmp_path):
    source, labels_db = results_file(tmp_path), tmp_path / "labels.sqlite"
    port = _free_port()
    cmd = [sys.executable, "-m", "ragmark", "annotate", str(source), "--store", str(labels_db),
           "--listen", f"127.0.0.1:{port}", "--annotator", "ann"]
    p = subprocess.Popen(cmd, env={**os.environ}, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    _wait(url + "/")
    order = httpx.get(url + "/api/state").json()["order"]
    acked = []
    with httpx.Client(timeout=10) as c:
        for i, item in enumerate(order):
            r = c.post(url + "/api/label", headers=HEADERS,
                       json={"item": item, "value": float(i % 2), "note": f"n{i}"})
            if r.status_code == 200 and r.json()["saved"]:
                acked.append((item, float(i % 2)))
    p.send_signal(signal.SIGKILL)
    p.communicate(timeout=30)
    assert len(acked) == len(order) == 12
    got = store.labels(labels_db, "run-faithfulness")
    assert [(lab.item, lab.value) for lab in got] == acked
    # started again with the same flags: the same queue, resumed, nothing left to label
    p = subprocess.Popen(cmd, env={**os.environ}, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        _wait(url + "/")
        state = httpx.get(url + "/api/state").json()
        assert (state["next"], state["done"], state["labelled"]) == (None, 12, 12)
    finally:
        p.send_signal(signal.SIGTERM)
        out, _ = p.communicate(timeout=30)
    assert "Resumed queue 'run-faithfulness': faithfulness of 12 items" in out


@pytest.fixture
def app(tmp_path):
    """The app of a queue of the fixture's answers, with a token, in-process."""
    from starlette.testclient import TestClient

    from ragmark.annotate.app import make_app
    from ragmark.plan.annotate import AnnotateRequest, plan_annotate

    plan = plan_annotate(AnnotateRequest(source=results_file(tmp_path),
                                         store=tmp_path / "l.sqlite", token="s3cret"))
    assert plan.queue is not None
    store.create_queue(plan.store, plan.queue, plan.items)
    return TestClient(make_app(plan.store, plan.queue, "s3cret", None)), plan


def test_the_token_and_the_cross_site_guard(app):
    client, plan = app
    assert client.get("/").status_code == 401
    assert client.get("/api/state?annotator=ann").status_code == 401
    assert client.get("/?token=wrong").status_code == 401
    page = client.get("/?token=s3cret")  # sets the cookie the page's requests carry
    assert page.status_code == 200 and "ragmark annotate: run-faithfulness" in page.text
    assert client.get("/static/annotate.js").status_code == 200
    state = client.get("/api/state?annotator=ann").json()
    first = state["next"]
    item = client.get(f"/api/item?id={first}&annotator=ann").json()["item"]
    assert "judge" not in item and item["id"] == first  # hidden until labelled
    assert "claims" not in item  # the judge's claims and verdicts, likewise
    body = {"annotator": "ann", "item": first, "value": 1}
    # a form another site posts (no JSON, no header) is refused, and so is JSON without it
    assert client.post("/api/label", data={"x": "1"}).status_code == 403
    assert client.post("/api/label", json=body).status_code == 403
    assert client.post("/api/label", json={**body, "value": 7}, headers=HEADERS
                       ).status_code == 400
    assert client.post("/api/label", json={**body, "annotator": ""}, headers=HEADERS
                       ).status_code == 400
    r = client.post("/api/label", json=body, headers=HEADERS)
    assert r.status_code == 200 and r.json()["done"] == 1
    shown = client.get(f"/api/item?id={first}&annotator=ann").json()["item"]
    assert shown["judge"] == 1.0 and [c["supported"] for c in shown["claims"]] == [True, True]
    assert client.get("/static/../store.py").status_code == 404
    bearer = {"Authorization": "Bearer s3cret"}
    from starlette.testclient import TestClient

    fresh = TestClient(client.app)
    assert fresh.get("/api/state?annotator=bob", headers=bearer).status_code == 200


def test_status_and_export_read_back_by_judge_eval_and_human_labels(app, tmp_path, capsys):
    from ragmark.analysis.human_labels import read_human_labels
    from ragmark.judge_eval import read_items

    _, plan = app
    ids = [str(it["id"]) for it in plan.items]
    for who, item, value in (("ann", ids[0], 1.0), ("ann", ids[1], 0.0), ("bob", ids[0], 0.0)):
        store.put_label(plan.store, Label(plan.queue.name, item, who, value, "", ""))
    store.put_label(plan.store, Label(plan.queue.name, ids[2], "bob", None, "", ""))
    code, out, _ = run_cli(["annotate", "--status", "--store", str(plan.store)], capsys)
    assert code == 0
    assert out.splitlines() == [
        f"run-faithfulness: faithfulness from {plan.queue.source}: 2 of 12 items labelled",
        "  ann: no 1, yes 1", "  bob: no 1, skipped 1",
        # one item both labelled, yes and no: o_yn = o_ny = 1, n = 2, alpha = 1 - 1 * 2 / 2
        "  agreement between people on the 1 items two or more labelled: Krippendorff's "
        "alpha (nominal) 0.000"]
    csv_path, jsonl = tmp_path / "out.csv", tmp_path / "out.jsonl"
    for path in (csv_path, jsonl):
        code, out, _ = run_cli(["annotate", "--store", str(plan.store), "--queue",
                                "run-faithfulness", "--export", str(path)], capsys)
        assert code == 0 and f"Wrote 3 labels to {path}" in out
    human = read_human_labels(csv_path)
    assert [(h.id, h.value) for h in human.labels] == [(ids[0], 1.0), (ids[1], 0.0),
                                                       (ids[0], 0.0)]
    items, metric = read_items(str(jsonl), None, None)
    assert metric is None or metric == "faithfulness"
    assert [(it.id, it.unsupported) for it in items] == [(ids[0], False), (ids[1], True),
                                                         (ids[0], True)]
    rows = [json.loads(line) for line in jsonl.read_text().splitlines()]
    assert [r["annotator"] for r in rows] == ["ann", "ann", "bob"]


@pytest.mark.parametrize("args, message", [
    ([], "give SOURCE (a results file of `ragmark run --include-details`"),
    (["--listen", "0.0.0.0:8750"], "binding beyond loopback lets anyone"),
    (["--listen", "0.0.0.0:8750", "--token", " "], "--token is empty or blank"),
    (["--overlap", "40"], "--overlap 40: the queue has 12 items"),
    (["--status", "--export", "x.csv"], "--status and --export: give one of them"),
    (["--export", "x.csv"], "--export needs --queue NAME"),
    (["--task", "nope"], "no metric 'nope' in"),
])
def test_bad_flags_exit_2_before_anything_is_served(args, message, tmp_path, capsys):
    source = results_file(tmp_path)
    needs_source = not any(a in args for a in ("--status", "--export")) and args != []
    code, _, err = run_cli(["annotate", *([str(source)] if needs_source else []), "--store",
                            str(tmp_path / "l.sqlite"), *args], capsys)
    assert code == 2 and message in " ".join(err.split()), err
    assert not (tmp_path / "l.sqlite").exists() or args[:1] == ["--status"]


def test_per_claim_items_carry_the_judges_verdict_of_each_claim(tmp_path, capsys):
    from ragmark.plan.annotate import AnnotateRequest, export_labels, plan_annotate

    source = results_file(tmp_path)
    data = json.loads(source.read_text())
    plan = plan_annotate(AnnotateRequest(source=source, store=tmp_path / "l.sqlite",
                                         per_claim=True))
    assert plan.queue is not None and plan.queue.name == "run-faithfulness-claims"
    first = data["queries"][0]
    f = first["metrics"]["faithfulness"]
    claims = [it for it in plan.items if it["id"].startswith(first["id"] + "#")]
    assert [it["claim"] for it in claims] == f["claims"]
    assert [it["judge"] for it in claims] == [0.0 if c in f["unsupported"] else 1.0
                                              for c in f["claims"]]
    assert all(it["answer"] == first["answer"] for it in claims)
    store.create_queue(plan.store, plan.queue, plan.items)
    store.put_label(plan.store, Label(plan.queue.name, claims[0]["id"], "ann", 0.0, "", ""))
    out = tmp_path / "claims.jsonl"
    export = plan_annotate(AnnotateRequest(store=plan.store, queue=plan.queue.name,
                                           export=out))
    assert export_labels(export) == 1
    row = json.loads(out.read_text())
    assert row["answer"] == f["claims"][0] and row["label"] == 0  # judge-eval judges it
    code, _, err = run_cli(["annotate", str(source), "--store", str(tmp_path / "m.sqlite"),
                            "--per-claim", "--task", "groundedness"], capsys)
    assert code == 2 and "--per-claim labels the claims of the faithfulness judge" in err


def test_a_task_on_a_scale_has_five_labels_and_interval_agreement(tmp_path):
    from starlette.testclient import TestClient

    from ragmark.annotate.app import make_app
    from ragmark.plan.annotate import AnnotateRequest, annotate_status, plan_annotate

    source = results_file(tmp_path)
    data = json.loads(source.read_text())
    for q_ in data["queries"]:
        q_["metrics"]["answer_correctness"] = q_["metrics"].pop("faithfulness", None)
    source.write_text(json.dumps(data))
    plan = plan_annotate(AnnotateRequest(source=source, store=tmp_path / "l.sqlite",
                                         task="answer_correctness"))
    assert plan.queue is not None
    store.create_queue(plan.store, plan.queue, plan.items)
    client = TestClient(make_app(plan.store, plan.queue, None, None), base_url=LOOPBACK)
    state = client.get("/api/state?annotator=ann").json()
    assert [c["key"] for c in state["choices"]] == ["1", "2", "3", "4", "5"]
    assert [c["value"] for c in state["choices"]] == [0, 0.25, 0.5, 0.75, 1]
    assert state["ask"] == "how far does the answer agree with the expected answer?"
    first, second = state["order"][:2]
    for who, item, value in (("ann", first, 0.75), ("bob", first, 0.5), ("ann", second, 0.0),
                             ("bob", second, 0.25)):
        r = client.post("/api/label", headers=HEADERS,
                        json={"annotator": who, "item": item, "value": value})
        assert r.status_code == 200
    assert client.post("/api/label", headers=HEADERS, json={
        "annotator": "ann", "item": first, "value": 0.3}).status_code == 400
    got = annotate_status(plan_annotate(AnnotateRequest(store=plan.store, status=True)))
    c = got["run-answer_correctness"]
    assert c["annotators"] == {"ann": {"mostly": 1, "not at all": 1},
                               "bob": {"a little": 1, "half": 1}}
    # interval: units (0.75, 0.5), (0, 0.25): o has four 1-weighted pairs; d2 = 1/16 for
    # both units' pairs; n = 4; D_e over all values 0, .25, .5, .75 (each n_c = 1):
    # sum n_c n_k d2 = 2 * (1+4+9+1+4+1)/16 = 40/16; alpha = 1 - 3 * (4/16) / (40/16) = 0.7
    assert c["agreement"]["level"] == "interval"
    assert c["agreement"]["value"] == pytest.approx(0.7, abs=1e-12)


def test_logged_outputs_are_labelled_before_any_judge(tmp_path, capsys):
    """A file of logged outputs (as `run --outputs` reads it) is a SOURCE too: its
    answered questions, no judge value (none shown, none exported), the empty answer left
    out and counted; its labels feed `judge-eval` (the judge measured on them)."""
    from starlette.testclient import TestClient

    from ragmark.annotate.app import make_app
    from ragmark.judge_eval import read_items
    from ragmark.plan.annotate import AnnotateRequest, export_labels, plan_annotate

    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in (
        {"id": "a", "question": "What does BM25 rank?", "answer": "Documents.",
         "contexts": ["BM25 ranks documents by term frequency."]},
        {"id": "b", "question": "What is a reranker?", "answer": "",
         "contexts": ["A reranker reorders passages."]},
        {"id": "c", "question": "What is MRR?", "answer": "A colour.",
         "contexts": ["MRR is the mean reciprocal rank."]})))
    plan = plan_annotate(AnnotateRequest(source=log, store=tmp_path / "l.sqlite"))
    assert plan.queue is not None and plan.queue.task == "faithfulness"
    assert [it["id"] for it in plan.items] == ["a", "c"]
    assert plan.drawn == {"eligible": 2, "left_out": {"no answer": 1},
                          "strata": {"not judged": 2}}
    store.create_queue(plan.store, plan.queue, plan.items)
    client = TestClient(make_app(plan.store, plan.queue, None, None), base_url=LOOPBACK)
    for item, value in (("a", 1), ("c", 0)):
        assert client.post("/api/label", headers=HEADERS, json={
            "annotator": "ann", "item": item, "value": value}).status_code == 200
    assert "judge" not in client.get("/api/item?id=a&annotator=ann").json()["item"]
    out = tmp_path / "labels.csv"
    assert export_labels(plan_annotate(AnnotateRequest(
        store=plan.store, queue=plan.queue.name, export=out))) == 2
    items, metric = read_items(str(out), None, None)
    assert metric == "faithfulness"
    assert [(it.id, it.unsupported) for it in items] == [("a", False), ("c", True)]
    code, _, err = run_cli(["annotate", str(log), "--per-claim", "--store",
                            str(tmp_path / "m.sqlite")], capsys)
    assert code == 2 and "--per-claim labels the claims a judge made" in err


def test_a_preference_queue_keeps_as_score_whichever_side_it_was_shown(tmp_path, server,
                                                                        capsys, monkeypatch):
    """Issue 36: --task pairwise:overall on a compare: A the baseline, B --config; each
    pair's first answer drawn; a key names a side, the label kept is A's score; the
    export is what judge-eval --metric pairwise:overall reads."""
    from starlette.testclient import TestClient
    from support.pairwise_data import compare_file

    from ragmark.annotate.app import make_app
    from ragmark.judge_eval.preferences import read_preferences
    from ragmark.plan.annotate import AnnotateRequest, plan_annotate

    monkeypatch.delenv("RAGMARK_LLM_BASE_URL", raising=False)
    results = compare_file(tmp_path, server, capsys)
    plan = plan_annotate(AnnotateRequest(source=results, task="pairwise:overall",
                                         config="mid", store=tmp_path / "l.sqlite"))
    assert plan.queue is not None and plan.queue.name == "c-pairwise:overall"
    items = plan.items
    assert [it["id"] for it in items] == [f"q{i}" for i in range(6)]
    assert {(it["a"], it["b"]) for it in items} == {("long", "mid")}
    # the compare's verdicts: long won 5, lost the bones question (q5)
    assert [it["judge"] for it in items] == [1.0] * 5 + [0.0]
    assert {it["first"] for it in items} == {"A", "B"}  # drawn per pair
    assert all(len(it["answer"]) > len(it["answer_b"]) for it in items)
    store.create_queue(plan.store, plan.queue, items)
    client = TestClient(make_app(plan.store, plan.queue, None, None), base_url=LOOPBACK)
    state = client.get("/api/state?annotator=ann").json()
    assert [c["text"] for c in state["choices"]] == [
        "the first is better", "the second is better", "a tie"]
    assert state["ask"].startswith("which answer is better overall:")
    for it, value in zip(items, (1.0, 1.0, 0.0, 0.5, 1.0, 0.0), strict=True):
        r = client.post("/api/label", json={"annotator": "ann", "item": it["id"],
                                            "value": value}, headers=HEADERS)
        assert r.status_code == 200
    code, out, _ = run_cli(["annotate", "--status", "--store", str(plan.store)], capsys)
    assert "  ann: a 3, b 2, tie 1" in out.splitlines()
    path = tmp_path / "prefs.jsonl"
    code, out, err = run_cli(["annotate", "--store", str(plan.store), "--queue",
                              "c-pairwise:overall", "--export", str(path)], capsys)
    assert code == 0, err
    prefs = read_preferences(path)
    assert [p.preferred for p in prefs] == ["A", "A", "B", "tie", "A", "B"]
    assert prefs[0].answer_a == items[0]["answer"] and prefs[0].answer_b == items[0][
        "answer_b"]
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert rows[5]["judge"] == "B" and rows[0]["a"] == "long" and rows[0]["b"] == "mid"
    # the people against the compare's judge (the same scripted rule): 4 of 5 decided
    server.requests.clear()
    code, stdout, err = run_cli(["judge-eval", str(path), "--metric", "pairwise:overall",
                                 "--llm-base-url", server.url, "--llm-model", "judge",
                                 "--resamples", "300"], capsys)
    assert code == 0, err
    assert server.requests == []  # every call in the cache from the compare
    assert "accuracy on the 5 pairs people did not call a tie 0.800 [" in " ".join(
        stdout.split())


def test_peoples_preferences_correct_the_compares_win_rate(tmp_path, server, capsys,
                                                           monkeypatch):
    """Issue 36: compare --pairwise --human-labels store:QUEUE: A's win rate of the
    labelled match corrected by PPI++ from people's preferences of four of its six
    pairs, equal to ppi_mean on the same values; the other matches are not labelled."""
    from support.pairwise_data import compare_file, make_setup

    from ragmark.annotate.store import labels_path
    from ragmark.plan.annotate import AnnotateRequest, plan_annotate
    from ragmark.stats.ppi import ppi_mean

    monkeypatch.delenv("RAGMARK_LLM_BASE_URL", raising=False)
    hist = tmp_path / "h.db"
    results = compare_file(tmp_path, server, capsys)
    plan = plan_annotate(AnnotateRequest(source=results, task="pairwise:overall",
                                         config="mid", store=labels_path(hist)))
    store.create_queue(plan.store, plan.queue, plan.items)
    for item, value in zip(("q0", "q1", "q2", "q3"), (1.0, 1.0, 0.0, 0.5), strict=True):
        store.put_label(plan.store, Label(plan.queue.name, item, "ann", value, "", ""))
    ds, cfgs = make_setup(tmp_path)
    code, stdout, err = run_cli(["compare", "--dataset", str(ds), "--configs", *cfgs,
                                 "--metrics", "mrr", "--llm-base-url", server.url,
                                 "--llm-model", "judge", "--output", str(tmp_path / "again"),
                                 "--human-labels", "store:c-pairwise:overall", "--history",
                                 str(hist), "--resamples", "300"], capsys)
    assert code == 0, err  # --pairwise overall implied by the labels
    r = json.loads((tmp_path / "again.json").read_text())["pairwise"]
    long_mid, long_short, _ = (m["criteria"]["overall"] for m in r["matches"])
    got = long_mid["corrected"]
    # the judge: long (A) wins q0..q4, loses q5; people labelled q0..q3
    want = ppi_mean([1.0, 0.0], [1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 0.0, 0.5]).to_json()
    assert got["estimate"] == pytest.approx(want["estimate"])
    assert (got["ci_low"], got["ci_high"]) == pytest.approx((want["ci_low"], want["ci_high"]))
    assert got["n_labelled"] == 4 and got["n_unlabelled"] == 2
    assert got["judge_mean"] == pytest.approx(5 / 6) and got["human_mean"] == 0.625
    # the labels are of long against mid: long against short's answers differ
    assert long_short["corrected"]["estimate"] is None
    assert long_short["corrected"]["labels_left_out"] == {
        "the answers differ from the labelled ones": 4}
    assert ("long against mid: A's win rate by the judge 0.833; corrected by 4 people's "
            "preferences (PPI++, 2 more pairs judged)") in " ".join(stdout.split())
    code, _, err = run_cli(["run", "--dataset", str(ds), "--config", cfgs[0],
                            "--human-labels", "store:c-pairwise:overall", "--history",
                            str(hist)], capsys)
    assert code == 2 and "give them to 'ragmark compare --pairwise'" in " ".join(err.split())


def test_an_evaluation_set_is_checked_before_it_measures_anything(tmp_path, capsys):
    """Issue 35: SOURCE an evaluation set: each question with a reference answer and a
    ground-truth context is an item (the reference as the answer, no judge); the others
    are left out and counted."""
    from ragmark.plan.annotate import AnnotateRequest, plan_annotate

    items = [{"id": "a", "question": "Q a?", "ground_truth_contexts": ["Ctx a."],
              "expected_answer": "Answer a."},
             {"id": "b", "question": "Q b?", "ground_truth_contexts": ["Ctx b."]},
             {"id": "c", "question": "Q c?", "ground_truth_contexts": ["Ctx c."],
              "expected_answer": "Answer c."}]
    path = tmp_path / "set.json"
    path.write_text(json.dumps(items))
    plan = plan_annotate(AnnotateRequest(source=path, store=tmp_path / "l.sqlite"))
    assert plan.queue is not None and plan.queue.task == "faithfulness"
    assert [(it["id"], it["answer"], it["contexts"], it["judge"]) for it in plan.items] == [
        ("a", "Answer a.", ["Ctx a."], None), ("c", "Answer c.", ["Ctx c."], None)]
    assert plan.drawn["left_out"] == {"no reference answer": 1}
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps([{"question": "Q?", "ground_truth_contexts": ["x"]}]))
    code, _, err = run_cli(["annotate", str(bare), "--store", str(tmp_path / "l.sqlite")],
                           capsys)
    assert code == 2 and "no question has both a reference answer and a ground-truth" in err
