"""Nugget evaluation end to end on a real small model (issue 38): SmolLM2-135M in
llama.cpp's server creates, labels and assigns the nuggets of logged outputs built from
SciFact (the expected answer and the ground-truth passages: sentences of the relevant
abstract). The values may be poor; what must hold: every nugget score of every question
is a value in [0, 1] or has a reason, every nugget of a scored question has its
importance and its assignment, at most 30 a question, the four scores of a question
agree with its assignments, and a question's calls are its creation, labelling and
assignment (and their re-asks). The same run judges the support of the answers' cited
sentences (each answer cites two contexts and leaves a sentence uncited): every cited
sentence has a verdict, the uncited one none, and the three support scores agree with
the verdicts."""

from __future__ import annotations

import json

import pytest
from support.cli import run_cli
from support.llama import MISSING, WHY_MISSING, llama_server
from support.summaries import summary_items

from ragmark.judges import support
from ragmark.judges.nugget_scores import ASSIGNMENTS, METRICS, Assigned, nugget_scores
from ragmark.types import IMPORTANCE, Nugget

pytestmark = pytest.mark.skipif(MISSING, reason=WHY_MISSING)
QUESTIONS = 3


def test_nuggets_on_smollm2(scifact, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("RAGMARK_LLM_CONCURRENCY", "2")
    monkeypatch.setenv("RAGMARK_LLM_TIMEOUT", "300")
    items = summary_items(scifact, QUESTIONS, context_sentences=4)
    logged = tmp_path / "outputs.jsonl"
    with logged.open("w", encoding="utf-8") as f:
        for it in items:
            cited = " ".join(f"{c.split('. ')[0].rstrip('.')} [{n}]." for n, c in
                             enumerate(it["contexts"][:2], start=1))
            f.write(json.dumps({"id": it["id"], "question": it["question"],
                                "answer": f"{cited} This sentence cites nothing.",
                                "contexts": it["contexts"][:2],
                                "expected_answer": it["contexts"][0],
                                "ground_truth_contexts": it["contexts"][1:4]}) + "\n")
    out = tmp_path / "r.json"
    with llama_server(tmp_path / "server.log") as url:
        code, _, err = run_cli(["run", "--outputs", str(logged), "--metrics",
                                "nuggets,support", "--llm-base-url", url, "--llm-model", "smollm2",
                                "--output", str(out), "--include-details",
                                "--allow-missing", "--quiet"], capsys)
    assert code == 0, err
    r = json.loads(out.read_text())
    scored = 0
    for q in r["queries"]:
        m = q["metrics"]
        assert set(METRICS) <= set(m), q["id"]
        for name in METRICS:
            value = m[name]["value"] if isinstance(m[name], dict) else m[name]
            if value is None:
                assert m[name].get("reason"), (q["id"], name)
            else:
                assert 0.0 <= value <= 1.0, (q["id"], name, value)
        if m["nugget_all"]["value"] is None:
            continue
        scored += 1
        nuggets = m["nugget_all"]["nuggets"]
        assert 1 <= len(nuggets) <= 30
        assert all(n["importance"] in IMPORTANCE and n["assignment"] in ASSIGNMENTS
                   and n["text"].strip() for n in nuggets), nuggets
        again = nugget_scores([Assigned(Nugget(n["text"], n["importance"]), n["assignment"])
                               for n in nuggets])
        for name in METRICS:
            assert again[name].value == m[name]["value"], (q["id"], name)
        # one creation call (three passages), one labelling call, one assignment call,
        # each re-asked at most once
        assert 3 <= m["nugget_all"]["calls"] <= 6, m["nugget_all"]["calls"]
        _check_support(q["id"], m)
    llm = r["llm"]
    assert llm["calls"] + llm["cache_hits"] >= 3 * scored


def _check_support(qid, m):
    """Every cited sentence judged, the uncited one not; the scores from the verdicts."""
    for name in support.METRICS:
        assert m[name]["value"] is not None or m[name].get("reason"), (qid, name)
    if m["support_partial"]["value"] is None:
        return
    sentences = m["support_partial"]["sentences"]
    assert [s["passage"] for s in sentences] == [1, 2, None], sentences
    assert all(s["support"] in support.LABELS for s in sentences[:2]), sentences
    assert sentences[2]["support"] is None
    again = support.support_scores([s["support"] for s in sentences])
    for name in support.METRICS:
        assert again[name].value == m[name]["value"], (qid, name)
    assert 2 <= m["support_partial"]["calls"] <= 4  # a call a cited context, one re-ask
