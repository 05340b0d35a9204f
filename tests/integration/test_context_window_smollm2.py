"""Judge calls fit a real small window (issue 25 item 8): SmolLM2-135M in llama.cpp's
server with a 2,048-token context judges context relevance of logged outputs whose five
SciFact abstracts do not fit it whole. llama-cpp-python's server publishes its window
nowhere; ragmark learns it before judging from the refusal of an oversized probe
("maximum context length is 2048 tokens"), asks about each abstract in a call of its own
(issue 63), each whole, and every question gets a verdict, with no judge call refused
(issue 51 item 4: the calls made at once were each refused once before)."""

from __future__ import annotations

import json

import pytest
from support.cli import run_cli
from support.llama import MISSING, WHY_MISSING, llama_server

pytestmark = pytest.mark.skipif(MISSING, reason=WHY_MISSING)


def test_a_two_thousand_token_model_judges_long_contexts(scifact, tmp_path, capsys,
                                                         monkeypatch):
    monkeypatch.setenv("RAGMARK_LLM_TIMEOUT", "300")
    docs = []
    with (scifact / "corpus.jsonl").open(encoding="utf-8") as f:
        for line in f:
            text = json.loads(line)["text"]
            if len(text) > 1500:
                docs.append(text)
            if len(docs) == 15:
                break
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps({
        "id": f"q{i}", "question": "What does this study find?",
        "answer": "It reports a finding.", "contexts": docs[5 * i: 5 * i + 5]}) + "\n"
        for i in range(3)))
    assert all(sum(map(len, docs[5 * i: 5 * i + 5])) > 7500 for i in range(3))  # > 2,048
    out = tmp_path / "r.json"
    with llama_server(tmp_path / "server.log") as url:
        code, _, err = run_cli(["run", "--outputs", str(log), "--judge-metrics",
                                "context_relevance", "--llm-base-url", url, "--llm-model",
                                "smollm2", "--output", str(out), "--quiet"], capsys)
    assert code == 0, err
    data = json.loads(out.read_text())
    counts = data["counts"]["context_relevance"]
    reasons = " ".join(counts.get("reasons", {}))
    assert "judge call failed" not in reasons, reasons  # no call left refused
    assert counts["n"] + counts["missing"] == 3 and counts["n"] >= 2, counts
    assert data["llm"]["context_window"] == 2048
    assert data["llm"]["failures"] == 0  # no judge call refused
    served = (tmp_path / "server.log").read_text()
    assert served.count("POST /v1/chat/completions HTTP/1.1\" 400") == 1  # the probe
    # a call an abstract, each fits the window known before the first call: nothing
    # cut, five calls a question
    assert "judge_cut_to_fit" not in data["llm"] and data["llm"]["calls"] > 3
    assert not any("did not fit the model's context window" in n for n in data["notes"])
