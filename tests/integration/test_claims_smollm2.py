"""Claim-level diagnostics end to end on a real small model (issue 23 item 3):
SmolLM2-135M in llama.cpp's server diagnoses logged outputs built from SciFact. The
values may be poor; the accounting must be exact: every claim metric of every question
has a value in [0, 1] or a reason, the calls each question's diagnosis reports add up
to the calls the endpoint served plus those the cache answered (and the calls made
again without a response_format the server refused), and a question made
``4 + chunks`` calls plus its re-asks."""

from __future__ import annotations

import json

import pytest
from support.cli import run_cli
from support.llama import MISSING, WHY_MISSING, llama_server
from support.summaries import summary_items

from ragmark.judges.claim_scores import BLAME, METRICS

pytestmark = pytest.mark.skipif(MISSING, reason=WHY_MISSING)
QUESTIONS = 3
CHUNKS = 2


def test_claim_diagnostics_on_smollm2(scifact, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("RAGMARK_LLM_CONCURRENCY", "2")
    monkeypatch.setenv("RAGMARK_LLM_TIMEOUT", "300")
    items = summary_items(scifact, QUESTIONS, context_sentences=CHUNKS + 2)
    logged = tmp_path / "outputs.jsonl"
    with logged.open("w", encoding="utf-8") as f:
        for it in items:  # the expected answer: the first sentence of the abstract
            f.write(json.dumps({"id": it["id"], "question": it["question"],
                                "answer": it["answer"], "contexts": it["contexts"][:CHUNKS],
                                "expected_answer": it["contexts"][0]}) + "\n")
    out = tmp_path / "r.json"
    with llama_server(tmp_path / "server.log") as url:
        code, stdout, err = run_cli(["run", "--outputs", str(logged), "--metrics", "claims",
                                     "--llm-base-url", url, "--llm-model", "smollm2",
                                     "--output", str(out), "--include-details",
                                     "--allow-missing", "--quiet"], capsys)
    assert code == 0, err
    r = json.loads(out.read_text())
    calls = []
    for q in r["queries"]:
        m = q["metrics"]
        assert set(METRICS) <= set(m), q["id"]
        for name in METRICS:
            value = m[name]["value"]
            if value is None:
                assert m[name].get("reason"), (q["id"], name)
            else:
                assert 0.0 <= value <= 1.0, (q["id"], name, value)
        details = next(m[n] for n in METRICS if "calls" in m[n])
        made = details["calls"]
        calls.append(made)
        blame = details.get("blame")
        if blame is not None:
            assert blame["label"] in BLAME
        # 4 + chunks, and the re-asks; fewer only when an extraction failed or found none
        assert made >= 4 + CHUNKS or any(m[n]["value"] is None for n in METRICS), made
    llm = r["llm"]
    # every call the diagnoses made reached the endpoint or the cache; a call the
    # server refused for its response_format was made once more without it
    assert sum(calls) + llm.get("format_refusals", 0) == llm["calls"] + llm["cache_hits"], (
        calls, {k: v for k, v in llm.items() if k != "total"})
    assert llm["judge_reasks"] <= sum(calls) - QUESTIONS * 2
