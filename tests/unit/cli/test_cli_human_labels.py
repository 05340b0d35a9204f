"""`ragmark run --human-labels`: a review CSV exported from a judged run, filled in by
"people", corrects the judge metric it labels (PPI++ as ragmark.stats.ppi computes it from the
run's own values); labels of another answer are left out and counted; bad cells and a
file without labels are exit 2 before any work."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from support.cli import run_cli
from support.fake_llm_server import chat_reply

from ragmark.stats.ppi import ppi_mean

DEMO = Path(__file__).resolve().parents[3] / "src" / "ragmark" / "demo"


def rating_rule(body):
    """answer_relevance: 5 for questions about MRR or chunks, else 3 (0.5 after scaling)."""
    users = [m["content"] for m in body["messages"] if m["role"] == "user"]
    good = any(w in users[-1] for w in ("reciprocal", "chunk"))
    return chat_reply(json.dumps({"rating": 5 if good else 3, "reason": "r"}))


def args(server, out: Path, *more: str) -> list[str]:
    return ["run", "--dataset", str(DEMO / "questions.json"), "--corpus", str(DEMO / "corpus"),
            "--judge-metrics", "answer_relevance", "--llm-base-url", server.url,
            "--llm-model", "test-model", "--output", str(out), "--quiet", *more]


def fill(path: Path, labels: dict[str, str], answer_of: dict[str, str] | None = None) -> None:
    rows = list(csv.DictReader(path.open(encoding="utf-8")))
    for r in rows:
        r["human"] = labels.get(r["id"], "")
        if answer_of and r["id"] in answer_of:
            r["answer"] = answer_of[r["id"]]
    with path.open("w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def test_human_labels_correct_the_judge_metric(server, tmp_path, capsys):
    server.rule = rating_rule
    first = tmp_path / "r.json"
    code, _, err = run_cli(args(server, first, "--include-details"), capsys)
    assert code == 0, err
    review = tmp_path / "review.csv"
    code, _, err = run_cli(["review", "export", str(first), "--rows", "6", "--seed", "1",
                            "--metric", "answer_relevance", "--output", str(review)], capsys)
    assert code == 0, err
    ids = [r["id"] for r in csv.DictReader(review.open(encoding="utf-8"))]
    # people say: yes for the first four, no for the fifth; the sixth row's answer was
    # edited (another answer than the run's), so its label is left out
    labels = {i: "yes" for i in ids[:4]} | {ids[4]: "no", ids[5]: "yes"}
    fill(review, labels, answer_of={ids[5]: "some other answer"})

    out = tmp_path / "c.json"
    code, stdout, err = run_cli(args(server, out, "--human-labels", str(review)), capsys)
    assert code == 0, err
    data = json.loads(out.read_text())
    c = data["corrected"]["answer_relevance"]
    values = {q: m["answer_relevance"] for q, m in data["per_query"].items()}
    used = ids[:5]
    want = ppi_mean([v for q, v in values.items() if q not in used],
                    [values[q] for q in used], [1, 1, 1, 1, 0])
    assert c["estimate"] == pytest.approx(want.estimate)
    assert (c["ci_low"], c["ci_high"]) == (pytest.approx(want.low), pytest.approx(want.high))
    assert c["n_labelled"] == 5 and c["n_unlabelled"] == len(values) - 5
    assert c["labels_left_out"] == {
        "the run's answer or contexts differ from the labelled ones": 1}
    assert c["method"] == "PPI++" and c["judge_mean"] == pytest.approx(data["metrics"][
        "answer_relevance"])
    assert (f"answer_relevance: judge mean {c['judge_mean']:.3f}; corrected (PPI++, 5 human "
            "labels") in stdout


def test_bad_label_files_are_exit_2_before_any_work(server, tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("id,question,answer,contexts,expected_answer,metric,judge,human\n"
                   "q1,Q?,A,[1] c,,answer_relevance,0.5,maybe\n", encoding="utf-8")
    code, _, err = run_cli(args(server, tmp_path / "x.json", "--human-labels", str(bad)),
                           capsys)
    assert code == 2 and "line 2" in err and "field 'human'" in err and '"maybe"' in err
    assert server.requests == []
    empty = tmp_path / "empty.csv"
    empty.write_text("id,question,answer,contexts,expected_answer,metric,judge,human\n"
                     "q1,Q?,A,[1] c,,answer_relevance,0.5,\n", encoding="utf-8")
    code, _, err = run_cli(args(server, tmp_path / "x.json", "--human-labels", str(empty)),
                           capsys)
    assert code == 2 and "no row has a human label" in err
