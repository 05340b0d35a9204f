"""The loop of issue 35 without a hand-made file: a judged run, its answers labelled by
two people in the annotation app (the page's own requests), then `judge-eval
store:QUEUE` (the judge against the people, the people against each other) and `run
--human-labels store:QUEUE` (the judge's mean corrected by the labels, PPI++)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import run_cli
from support.fake_llm_server import chat_reply

from ragmark.stats.ppi import ppi_mean

DEMO = Path(__file__).resolve().parents[3] / "src" / "ragmark" / "demo"
HEADERS = {"X-Ragmark": "1"}
LOOPBACK = "http://127.0.0.1"  # without a token only loopback names are served


def relevance(body):
    """answer_relevance: 5 when the question is about MRR or chunks, else 1."""
    users = [m["content"] for m in body["messages"] if m["role"] == "user"]
    good = any(w in users[-1] for w in ("reciprocal", "chunk"))
    return chat_reply(json.dumps({"rating": 5 if good else 1, "reason": "r"}))


def test_label_in_the_app_then_judge_eval_and_corrected_means_from_the_store(
        server, tmp_path, capsys, monkeypatch):
    from starlette.testclient import TestClient

    from ragmark.annotate import store
    from ragmark.annotate.app import make_app
    from ragmark.plan.annotate import AnnotateRequest, plan_annotate

    server.rule = relevance
    history = tmp_path / "h" / "history.sqlite"
    monkeypatch.setenv("RAGMARK_HISTORY", str(history))  # judge-eval finds the store
    run = ["run", "--dataset", str(DEMO / "questions.json"), "--corpus",
           str(DEMO / "corpus"), "--judge-metrics", "answer_relevance", "--llm-base-url",
           server.url, "--llm-model", "test-model", "--quiet", "--history", str(history)]
    code, _, err = run_cli([*run, "--include-details", "--output", str(tmp_path / "r.json")],
                           capsys)
    assert code == 0, err
    plan = plan_annotate(AnnotateRequest(source=tmp_path / "r.json", task="answer_relevance",
                                         overlap=3, history=history))
    assert plan.store == history.parent / "labels.sqlite" and plan.queue is not None
    store.create_queue(plan.store, plan.queue, plan.items)
    client = TestClient(make_app(plan.store, plan.queue, None, None), base_url=LOOPBACK)
    ids = [str(it["id"]) for it in plan.items]
    # ann: yes to every answer but the last; bob (the overlap items): no to the first
    said = {("ann", i): 0.0 if i == ids[-1] else 1.0 for i in ids}
    said |= {("bob", ids[0]): 0.0, ("bob", ids[1]): 1.0, ("bob", ids[2]): 1.0}
    for (who, item), value in said.items():
        r = client.post("/api/label", headers=HEADERS,
                        json={"annotator": who, "item": item, "value": value})
        assert r.status_code == 200
    assert client.get("/api/state?annotator=bob").json()["next"] is None  # bob is done

    code, stdout, err = run_cli(["judge-eval", f"store:{plan.queue.name}",
                                 "--llm-base-url", server.url, "--llm-model", "test-model",
                                 "--output", str(tmp_path / "je.json")], capsys)
    assert code == 0, err
    je = json.loads((tmp_path / "je.json").read_text())
    assert je["metric"] == "answer_relevance"  # the queue's task
    assert je["items"] == len(ids) - 1 and je["people"]["split"] == 1  # ids[0]: 1 vs 1
    assert je["people"]["items"] == 3 and "kappa" in je["people"]
    text = " ".join(stdout.split())
    assert "people (ann, bob) on the 3 items two or more labelled" in text
    # issue 48, item 14: the judge was not asked about the item the people split on
    assert ("on those 3 items, 2 of them with the judge's verdict (it was not asked about "
            "the 1 the people split evenly on, or gave none)") in text
    assert je["judge_with_people"]["judged"] == 2

    out = tmp_path / "c.json"
    code, stdout, err = run_cli([*run, "--output", str(out), "--human-labels",
                                 f"store:{plan.queue.name}"], capsys)
    assert code == 0, err
    data = json.loads(out.read_text())
    c = data["corrected"]["answer_relevance"]
    values = {q: m["answer_relevance"] for q, m in data["per_query"].items()}
    mean_label = {i: sum(v for (_, j), v in said.items() if j == i)
                  / sum(1 for (_, j) in said if j == i) for i in ids}  # ids[0]: 0.5
    want = ppi_mean([v for q, v in values.items() if q not in mean_label],
                    [values[q] for q in ids], [mean_label[q] for q in ids])
    assert c["n_labelled"] == len(ids) and c["estimate"] == pytest.approx(want.estimate)
    assert (c["ci_low"], c["ci_high"]) == (pytest.approx(want.low), pytest.approx(want.high))


def test_a_queue_that_is_not_there_is_exit_2(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("RAGMARK_HISTORY", str(tmp_path / "history.sqlite"))
    code, _, err = run_cli(["judge-eval", "store:nope", "--llm-base-url",
                            "http://127.0.0.1:9/v1", "--llm-model", "m"], capsys)
    assert code == 2 and "no label store at" in err
    code, _, err = run_cli(["judge-eval", str(tmp_path / "missing.jsonl"), "--llm-base-url",
                            "http://127.0.0.1:9/v1", "--llm-model", "m"], capsys)
    assert code == 2 and "missing.jsonl: no such file" in err


def test_the_label_store_is_named_one_way_on_every_command(server, tmp_path, capsys):
    """Issue 48, items 9 and 14: judge-eval could not find a store `annotate --history`
    made, and its error named --store, which it did not take; `history show ID --history
    X` was 'No such option'. --store PATH, else the store beside --history, on annotate,
    judge-eval, run and compare."""
    from starlette.testclient import TestClient

    from ragmark.annotate import store
    from ragmark.annotate.app import make_app
    from ragmark.plan.annotate import AnnotateRequest, plan_annotate

    server.rule = relevance
    history = tmp_path / "team" / "history.sqlite"
    run = ["run", "--dataset", str(DEMO / "questions.json"), "--corpus",
           str(DEMO / "corpus"), "--judge-metrics", "answer_relevance", "--llm-base-url",
           server.url, "--llm-model", "test-model", "--quiet"]
    code, _, err = run_cli([*run, "--include-details", "--output", str(tmp_path / "r.json"),
                            "--history", str(history)], capsys)
    assert code == 0, err
    kept = tmp_path / "labels" / "mine.sqlite"
    for where in ({"history": history}, {"store": kept}):
        plan = plan_annotate(AnnotateRequest(source=tmp_path / "r.json",
                                             task="answer_relevance", **where))
        store.create_queue(plan.store, plan.queue, plan.items)
        client = TestClient(make_app(plan.store, plan.queue, None, None), base_url=LOOPBACK)
        for i, it in enumerate(plan.items):
            assert client.post("/api/label", headers=HEADERS, json={
                "annotator": "ann", "item": it["id"], "value": float(i % 2)}).status_code == 200
    assert (history.parent / "labels.sqlite").exists() and kept.exists()
    queue = f"store:{plan.queue.name}"
    judge = ["judge-eval", queue, "--llm-base-url", server.url, "--llm-model", "test-model",
             "--quiet"]
    # neither beside the default history: the error names both ways
    code, _, err = run_cli(judge, capsys)
    assert code == 2 and "--store PATH, or the --history it sits beside" in err
    for named in (["--history", str(history)], ["--store", str(kept)]):
        out = tmp_path / "je.json"
        code, _, err = run_cli([*judge, *named, "--output", str(out)], capsys)
        assert code == 0, err
        assert json.loads(out.read_text())["items"] == len(plan.items)
    code, _, err = run_cli([*run, "--no-history", "--human-labels", queue, "--store",
                            str(kept), "--output", str(tmp_path / "c.json")], capsys)
    assert code == 0, err
    assert json.loads((tmp_path / "c.json").read_text())["corrected"]["answer_relevance"][
        "n_labelled"] == len(plan.items)
    code, out, err = run_cli(["history", "show", "1", "--history", str(history)], capsys)
    assert code == 0 and "run" in out, err
    code, out, err = run_cli(["history", "trend", "--config-name", "sparse", "--metric",
                              "answer_relevance", "--history", str(history)], capsys)
    assert code == 0, err
