"""A judge of one's own criterion, its noise and a jury, on a real model (issue 63, items
4-6): SmolLM2-135M in llama-cpp-python's server. The criterion has no steps, so the model
writes them once; every value is a probability in [0, 1] (or missing with its reason);
the steps are recorded with the run. Asked twice at temperature 0.7 the run reports the
judge's noise; a jury of the same model under two names reports the jurors' agreement.
The model is far too small to judge well: only that each part works end to end is
checked, not the verdicts."""

from __future__ import annotations

import json

import pytest
from support.cli import run_cli
from support.llama import MISSING, WHY_MISSING, llama_server

pytestmark = pytest.mark.skipif(MISSING, reason=WHY_MISSING)

ANSWERS = [("What is the boiling point of water?", "Water boils at 100 degrees Celsius."),
           ("What does aspirin do to the stomach?",
            "COX-1 inhibition reduces mucosal prostaglandin synthesis."),
           ("Why is the sky blue?", "Sunlight scatters off air, and blue light scatters most.")]


@pytest.fixture(scope="module")
def smollm2(tmp_path_factory):
    with llama_server(tmp_path_factory.mktemp("llama-c") / "server.log") as url:
        yield url


def _run(url, tmp_path, capsys, *more):
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps({"id": f"q{i}", "question": q, "answer": a,
                                       "contexts": []}) + "\n"
                           for i, (q, a) in enumerate(ANSWERS)))
    cfg = tmp_path / "judges.toml"
    cfg.write_text('[judges.plain]\ncriterion = "The answer uses plain words, no jargon."\n')
    out = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--outputs", str(log), "--config", str(cfg), "--metrics",
                            "plain", "--llm-base-url", url, "--llm-model", "smollm2",
                            "--llm-timeout", "300", "--output", str(out),
                            "--include-details", "--allow-missing", "--no-history",
                            "--quiet", *more], capsys)
    assert code == 0, err
    return json.loads(out.read_text())


def test_a_criterion_its_noise_and_a_jury_end_to_end(smollm2, tmp_path, capsys):
    data = _run(smollm2, tmp_path, capsys)
    steps = data["llm"]["criterion_steps"]["plain"]
    assert 2 <= len(steps) <= 6 and all(s.strip() for s in steps)
    scores = [q["metrics"]["plain"] for q in data["queries"]]
    valued = [s for s in scores if s.get("value") is not None]
    assert all(0.0 <= s["value"] <= 1.0 for s in valued)
    assert all(s.get("reason") for s in scores if s.get("value") is None)
    assert any("hard_value" in s for s in valued)  # the server gave log-probabilities
    twice = _run(smollm2, tmp_path, capsys, "--judge-repeats", "2")
    noise = twice["llm"]["judge_noise"]["plain"]
    assert noise["repeats"] == 2 and twice["llm"]["calls"] >= 6
    assert twice["llm"]["criterion_steps"]["plain"] == steps  # written once, at 0
    jury = _run(smollm2, tmp_path, capsys, "--judge-llm", "smollm2",
                "--judge-llm", f"other@{smollm2}")
    agreed = jury["llm"]["jury"]["plain"]
    assert agreed["jurors"] == ["smollm2", "other"] and agreed["questions"] == 3
