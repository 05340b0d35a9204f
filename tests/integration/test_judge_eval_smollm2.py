"""`ragmark judge-eval` against a real model behind a real server (SmolLM2-135M in
llama.cpp's server). The model is far too small to judge well: the test checks the
accounting (every item judged or counted as a failure), the report's shape, and that a
rerun is served from the cache with the same report — never the judge's quality."""

from __future__ import annotations

import json

import pytest
from support.cli import run_cli
from support.llama import MISSING, WHY_MISSING, llama_server

pytestmark = pytest.mark.skipif(MISSING, reason=WHY_MISSING)

ITEMS = [
    ("Aspirin lowers fever.", "Aspirin is a drug that lowers fever and eases pain.", 0),
    ("Aspirin cures diabetes.", "Aspirin is a drug that lowers fever and eases pain.", 1),
    ("The Nile flows north.", "The Nile flows north into the Mediterranean Sea.", 0),
    ("The Nile flows into the Pacific.", "The Nile flows north into the Mediterranean.", 1),
]


@pytest.fixture(scope="module")
def smollm2(tmp_path_factory):
    with llama_server(tmp_path_factory.mktemp("llama-je") / "server.log") as url:
        yield url


def test_judge_eval_accounts_for_every_item_and_reruns_from_the_cache(
        smollm2, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("RAGMARK_LLM_CONCURRENCY", "2")
    monkeypatch.setenv("RAGMARK_LLM_TIMEOUT", "240")
    items = tmp_path / "items.jsonl"
    items.write_text("\n".join(json.dumps({"id": f"i{n}", "question": "Is it true?",
                                           "context": c, "answer": a, "label": lab})
                               for n, (a, c, lab) in enumerate(ITEMS)) + "\n")
    args = ["judge-eval", str(items), "--label-map", "1=unsupported,0=supported",
            "--llm-base-url", smollm2, "--llm-model", "smollm2", "--quiet"]
    code, stdout, err = run_cli([*args, "--output", str(tmp_path / "a.json")], capsys)
    assert code == 0, err
    a = json.loads((tmp_path / "a.json").read_text())
    assert a["items"] == 4 and a["labels"] == {"unsupported": 2, "supported": 2}
    assert a["judged"] + sum(a["failures"].values()) == 4
    assert a["failure_rate"] == pytest.approx((4 - a["judged"]) / 4)
    if a["judged"] >= 2:
        c = a["confusion"]
        assert sum(v for row in c.values() for v in row.values()) == a["judged"]
    assert a["llm"]["calls"] >= 4 and a["llm"]["failures"] == 0
    code, _, err = run_cli([*args, "--output", str(tmp_path / "b.json")], capsys)
    assert code == 0, err
    b = json.loads((tmp_path / "b.json").read_text())
    assert b["llm"]["calls"] == 0 and b["llm"]["cache_hits"] > 0
    for key in ("judged", "failures", "failure_rate", "balanced_accuracy", "confusion"):
        assert a.get(key) == b.get(key), key
