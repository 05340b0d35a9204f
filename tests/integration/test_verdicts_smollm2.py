"""Judge schemas with exact counts, on a real small model (issue 20 item 3): SmolLM2-135M
in llama.cpp's server judges faithfulness on a fixed sample of 24 summaries built from
SciFact. With one schema for every call, 15% of such items ended without a verdict (a
verdict list of the wrong length or numbering); with the per-call schema (exactly one
verdict per claim, numbered 1..n, which the server enforces with a grammar) under 5%
must. The model's verdicts themselves are near chance: only whether they can be used
is measured."""

from __future__ import annotations

import json

import pytest
from support.cli import run_cli
from support.llama import MISSING, WHY_MISSING, llama_server
from support.summaries import summary_items, write_items

pytestmark = pytest.mark.skipif(MISSING, reason=WHY_MISSING)
ITEMS = 24


@pytest.fixture(scope="module")
def smollm2(tmp_path_factory):
    with llama_server(tmp_path_factory.mktemp("llama-v") / "server.log") as url:
        yield url


def test_under_five_percent_of_items_end_without_a_verdict(smollm2, scifact, tmp_path,
                                                            capsys, monkeypatch):
    monkeypatch.setenv("RAGMARK_LLM_CONCURRENCY", "2")
    monkeypatch.setenv("RAGMARK_LLM_TIMEOUT", "300")
    items = write_items(summary_items(scifact, ITEMS), tmp_path / "items.jsonl")
    out = tmp_path / "r.json"
    code, stdout, err = run_cli(["judge-eval", str(items), "--metric", "faithfulness",
                                 "--label-map", "1=unsupported,0=supported",
                                 "--llm-base-url", smollm2, "--llm-model", "smollm2",
                                 "--output", str(out), "--quiet"], capsys)
    assert code == 0, err
    r = json.loads(out.read_text())
    assert r["items"] == ITEMS and r["labels"] == {"unsupported": 12, "supported": 12}
    without = r["items"] - r["judged"]
    share = without / r["items"]
    assert r["judged"] + sum(r["failures"].values()) == r["items"]
    assert share < 0.05, r["failures"]
    assert r["llm"]["failures"] == 0  # no call failed: every miss would be the model's
    assert "scores" in r and r["scores"]["items"] == r["judged"]
