"""Issue 52 on real parts: ``ragmark probe`` on BEIR SciFact with BM25 and ragmark's LLM
generator behind llama.cpp's server (SmolLM2-135M), two configs — the plain prompt and
the one that says the passages are data. What is exact here is asserted exactly: every
planted passage leads with its claim, so BM25 puts it among the three contexts; the
success rates are the model's, so they are checked for what they cover, and against the
answers they were read from. (On SciFact a real abstract can outrank one of five
poisoned passages: retrieval of the planted passages is measured, not assumed.)"""

from __future__ import annotations

import hashlib
import json
import re

import pytest
from support.cli import run_cli
from support.llama import MISSING, WHY_MISSING, llama_server

pytestmark = pytest.mark.skipif(MISSING, reason=WHY_MISSING)


def test_probe_scifact_with_smollm2(scifact, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("RAGMARK_LLM_TIMEOUT", "300")
    corpus_hash = hashlib.sha256((scifact / "corpus.jsonl").read_bytes()).hexdigest()
    with llama_server(tmp_path / "server.log") as url:
        configs = []
        for name, guard in (("plain", "false"), ("guarded", "true")):
            p = tmp_path / f"{name}.toml"
            p.write_text(f'name = "{name}"\ntop_n = 3\n[generator]\nname = "llm"\n'
                         f'guard = {guard}\nmax_context_tokens = 700\nmax_tokens = 48\n'
                         f'[llm]\nbase_url = "{url}"\nmodel = "smollm2"\n')
            configs.append(str(p))
        code, stdout, err = run_cli(
            ["probe", "--dataset", str(scifact), "--configs", *configs, "--attacks",
             "injection,poisoning,leakage", "--styles", "plain", "--targets", "3",
             "--seed", "1", "--resamples", "1000", "--output", str(tmp_path / "probe"),
             "--quiet"], capsys)
    assert code == 0, err
    data = json.loads((tmp_path / "probe.json").read_text())
    for config in ("plain", "guarded"):
        got = data["configs"][config]["attacks"]
        for arm in ("injection:plain", "leakage"):
            assert got[arm]["retrieved"]["value"] == 1.0, (config, arm)
            assert got[arm]["recall"]["value"] == 1.0
        # five poisoned passages for three contexts: most contexts are planted (a real
        # abstract may outrank one), each a distinct planted document
        poison = got["poisoning"]
        assert poison["precision"]["value"] >= 2 / 3 and poison["retrieved"]["value"] == 1.0
        assert poison["recall"]["value"] == pytest.approx(poison["precision"]["value"] * 3 / 5)
        outcomes = data["configs"][config]["outcomes"]
        assert len(outcomes) == 9 and all(o["success"] is not None for o in outcomes)
        # each success is what its answer shows: the canary there, or not
        answers = json.loads(next((tmp_path / "probe.probe-state").glob(
            f"{config}--injection-plain--*.json")).read_text())["answers"]
        for o in (o for o in outcomes if o["attack"] == "injection"):
            said = re.sub(r"[^a-z0-9]", "", (answers[o["question_id"]] or "").lower())
            assert o["success"] == (o["shown"]["canary"].lower() in said)
        for rate in ("success", "success_when_retrieved"):
            v = got["injection:plain"][rate]
            assert 0.0 <= v["low"] <= v["value"] <= v["high"] <= 1.0 and v["n"] == 3
        assert data["configs"][config]["clean"]["ndcg@10"]["n"] == 3
    assert {c["attack"]: c["pairs"] for c in data["comparisons"]} == {
        "injection": 3, "poisoning": 3, "leakage": 3}
    assert "## plain" in stdout and "## guarded" in stdout
    assert hashlib.sha256((scifact / "corpus.jsonl").read_bytes()).hexdigest() == corpus_hash
