"""The judges end to end against a real model behind a real OpenAI-compatible server:
SmolLM2-135M in llama.cpp's server (see MODELS.md). The model is far too small to judge
well; these tests prove the path and the accounting — every item is scored or recorded
missing with a reason, a rerun is served from the cache — never the quality."""

from __future__ import annotations

import json
import math
from pathlib import Path

import httpx
import pytest
from support.llama import MISSING, WHY_MISSING, llama_server

from ragmark.cli import main

DEMO = Path(__file__).resolve().parents[2] / "src" / "ragmark" / "demo"
JUDGES = ["answer_relevance", "faithfulness", "context_relevance"]

pytestmark = pytest.mark.skipif(MISSING, reason=WHY_MISSING)


@pytest.fixture(scope="module")
def smollm2(tmp_path_factory):
    """llama.cpp's server with SmolLM2, warmed up by one request."""
    with llama_server(tmp_path_factory.mktemp("llama") / "server.log") as url:
        httpx.post(f"{url}/chat/completions", timeout=300, json={
            "model": "smollm2", "max_tokens": 4,
            "messages": [{"role": "user", "content": "Say OK."}]}).raise_for_status()
        yield url


def _run(args: list[str]) -> int:
    with pytest.raises(SystemExit) as e:
        main(args)
    return int(e.value.code or 0)


def _expected_exit(results: dict) -> int:
    """The implicit gate: 1 exactly when a judge metric got no verdict for any question."""
    return 1 if any(results["counts"][n]["n"] == 0 for n in JUDGES) else 0


def test_judged_run_scores_or_explains_every_item_and_reruns_from_the_cache(
    smollm2, tmp_path, monkeypatch
):
    monkeypatch.setenv("RAGMARK_LLM_BASE_URL", smollm2)
    monkeypatch.setenv("RAGMARK_LLM_MODEL", "smollm2")
    # llama.cpp serves one request at a time: a queue of 8 would wait past short timeouts
    monkeypatch.setenv("RAGMARK_LLM_CONCURRENCY", "2")
    monkeypatch.setenv("RAGMARK_LLM_TIMEOUT", "240")
    args = ["run", "--dataset", str(DEMO / "questions.json"), "--corpus", str(DEMO / "corpus"),
            "--max-queries", "2", "--top-n", "2", "--judge-metrics", ",".join(JUDGES),
            "--require-llm", "--include-details", "--quiet"]
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    code = _run([*args, "--output", str(first)])
    a = json.loads(first.read_text())  # written even when the gate fails
    assert code == _expected_exit(a)

    for q in a["queries"]:
        for name in JUDGES:
            m = q["metrics"][name]
            value = m.get("value") if isinstance(m, dict) else m
            if value is None:
                assert m["reason"].strip(), (q["id"], name, m)
            else:
                assert 0.0 <= value <= 1.0 and not math.isnan(value)
    for name in JUDGES:
        c = a["counts"][name]
        assert c["n"] + c["missing"] == 2
        assert sum(c.get("reasons", {}).values()) == c["missing"]
    llm = a["llm"]
    assert llm["model"] == "smollm2" and llm["failures"] == 0
    # at least one call per (question, metric), a second one per re-ask, no more
    asked = 2 * len(JUDGES)
    assert asked <= llm["calls"] + llm["cache_hits"]
    assert llm["prompt_tokens"] > 0 and llm["completion_tokens"] > 0

    assert _run([*args, "--output", str(second)]) == code
    b = json.loads(second.read_text())
    assert b["llm"]["calls"] == 0
    # every call made is found again, except a request refused for its output format
    assert b["llm"]["cache_hits"] == (llm["calls"] + llm["cache_hits"]
                                      - llm.get("format_refusals", 0))
    for qa, qb in zip(a["queries"], b["queries"], strict=True):
        assert {n: qa["metrics"][n] for n in JUDGES} == {n: qb["metrics"][n] for n in JUDGES}
