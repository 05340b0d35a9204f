"""A judge asked several times (issue 63, item 5): ``--judge-repeats 2`` asks each judge
call with seeds 0 and 1 at the repeats' temperature; each value is the mean of its
repeats and the judge's noise is measured. Hand-worked, a yes/no criterion on three
questions, P(yes) by (question, seed): q0 0.9 / 0.7, q1 0.2 (NO) / 0.6 (YES), q2 0.1 /
0.3. Values 0.8, 0.4, 0.2 (mean 0.4667); each question's sample variance 0.02, 0.08,
0.02, so the within-question s.d. is sqrt(0.04) = 0.2; between questions the s.d. of
(0.8, 0.4, 0.2) is 0.3055; the hard verdict flips on q1 only (1 of 3); the judge's noise
in the mean is 0.2 / sqrt(2 * 3) = 0.0816."""

from __future__ import annotations

import json

import pytest
from judges_support import COMPLETE, run_complete, weighed_reply
from support.cli import run_cli

CRITERION = COMPLETE
P_YES = {("q0", 0): 0.9, ("q0", 1): 0.7, ("q1", 0): 0.2, ("q1", 1): 0.6,
         ("q2", 0): 0.1, ("q2", 1): 0.3}


def _rule(body):
    q = next(q for q in ("q0", "q1", "q2") if f"Question {q}" in body["messages"][-1]["content"])
    p = P_YES[q, body["seed"]]
    word = "YES" if p >= 0.5 else "NO"
    return weighed_reply([(word, [("YES", p), ("NO", 1 - p)])])


def _run(server, tmp_path, capsys, *more, expect=0):
    return run_complete(server, tmp_path, capsys, *more, expect=expect)


def test_repeats_are_averaged_and_the_judges_noise_measured(server, tmp_path, capsys):
    server.rule = _rule
    data, said = _run(server, tmp_path, capsys, "--judge-repeats", "2")
    asked = [r.body for r in server.requests if r.body]
    assert sorted((b["seed"], b["temperature"]) for b in asked) == [
        (0, 0.7)] * 3 + [(1, 0.7)] * 3
    q = {r["id"]: r["metrics"]["complete"] for r in data["queries"]}
    assert q["q0"]["value"] == pytest.approx(0.8)
    assert q["q1"]["value"] == pytest.approx(0.4)
    assert q["q1"]["repeats"] == [pytest.approx(0.2), pytest.approx(0.6)]
    assert q["q1"]["hard_repeats"] == [0.0, 1.0] and q["q1"]["hard_value"] == 0.5
    assert data["metrics"]["complete"] == pytest.approx((0.8 + 0.4 + 0.2) / 3)
    noise = data["llm"]["judge_noise"]["complete"]
    assert noise["within_sd"] == pytest.approx(0.2)
    assert noise["between_sd"] == pytest.approx(0.305505, abs=1e-6)
    assert (noise["flipped"], noise["questions"], noise["repeats"]) == (1, 3, 2)
    assert noise["mean_se"] == pytest.approx(0.2 / 6 ** 0.5, abs=1e-6)
    assert data["llm"]["judge_repeats"] == 2 and data["llm"]["calls"] == 6
    assert "judge noise of complete (2 repeats at temperature 0.7, 3 questions)" in said
    # a rerun asks nothing again: each repeat's calls are cached apart
    before = len(server.requests)
    _run(server, tmp_path, capsys, "--judge-repeats", "2")
    assert len(server.requests) == before


def test_the_repeats_temperature_and_dry_run(server, tmp_path, capsys):
    server.rule = _rule
    _, said = _run(server, tmp_path, capsys, "--judge-repeats", "3", "--dry-run")
    assert "9 judge calls" in said and not [r for r in server.requests if r.body]
    _, said = _run(server, tmp_path, capsys, "--judge-temperature", "0.5", expect=2)
    assert "--judge-temperature" in said and "--judge-repeats" in said


def _side(label, values, noise=None):
    from ragmark.analysis.diff import Side

    ids = [f"q{i}" for i in range(len(values))]
    return Side(label, label, "h", dict.fromkeys(ids, "?"),
                {"complete": dict(zip(ids, values, strict=True))}, noise=noise or {})


def test_a_drop_within_the_judges_own_noise_is_not_a_regression():
    """40 questions, every one 0.03 lower (±0.01): a significant drop. The judge's noise
    band of the difference, within-question s.d. 0.2 at 2 repeats over 40 questions:
    1.96 * sqrt(0.04 / 80) = 0.0438, wider than the drop: not a regression; at s.d.
    0.05 the band is 1.96 * sqrt(0.0025 / 80) = 0.0110: a regression, said so."""
    from ragmark.analysis.regression import regression_gate
    from ragmark.stats.noise import noise_band

    base = _side("base", [0.8] * 40)
    lower = [0.77 + (0.01 if i % 2 else -0.01) for i in range(40)]
    (plain,) = regression_gate(base, _side("now", lower), ["complete"])
    assert not plain.passed
    noisy = _side("now", lower, {"complete": {"within_sd": 0.2, "repeats": 2}})
    assert noise_band((base.noise, noisy.noise), "complete", 40) == pytest.approx(
        0.043827, abs=1e-6)
    (row,) = regression_gate(base, noisy, ["complete"])
    assert row.passed and "within the judge's own noise (±0.0438" in row.reason
    quiet = _side("now", lower, {"complete": {"within_sd": 0.05, "repeats": 2}})
    (row,) = regression_gate(base, quiet, ["complete"])
    assert not row.passed and "the judge's own noise (±0.0110)" in row.reason


def test_a_compare_does_not_call_a_difference_within_the_judges_noise(server, tmp_path,
                                                                      capsys):
    """Six questions; long answers P(yes) 0.95 / 0.45 (seeds 0 / 1), short ones 0.6 /
    0.4: means 0.7 and 0.5, the same 0.2 on every question, so the exact paired test
    gives p = 2 / 64 = 0.031. The judges' noise: within-question variances 0.125 and
    0.02, band 1.96 * sqrt((0.125 + 0.02) / (2 * 6)) = 0.2155 > 0.2: not significant."""
    from support.pairwise_data import make_setup

    def rule(body):
        answer = body["messages"][-1]["content"].split('<data name="answer">\n')[1]
        long = len(answer.split("\n</data>")[0]) > 40
        p = {(True, 0): 0.95, (True, 1): 0.45, (False, 0): 0.6, (False, 1): 0.4}[
            long, body["seed"]]
        return weighed_reply([("YES" if p >= 0.5 else "NO", [("YES", p), ("NO", 1 - p)])])

    ds, cfgs = make_setup(tmp_path)
    for c in cfgs:
        with open(c, "a") as f:
            f.write("\n" + CRITERION)
    server.rule = rule
    out = tmp_path / "c"
    code, _, err = run_cli(["compare", "--dataset", str(ds), "--configs", cfgs[0], cfgs[2],
                            "--metrics", "complete", "--llm-base-url", server.url,
                            "--llm-model", "judge", "--output", str(out), "--no-history",
                            "--quiet", "--judge-repeats", "2", "--test", "permutation"],
                           capsys)
    assert code == 0, err
    data = json.loads(out.with_suffix(".json").read_text())
    (row,) = [r for r in data["comparisons"] if r["metric"] == "complete"]
    assert row["value"] == pytest.approx(0.5) and row["baseline_value"] == pytest.approx(0.7)
    assert row["p_adjusted"] == pytest.approx(0.03125)
    assert row["significant"] is False
    assert row["judge_noise"] == pytest.approx(1.96 * (0.145 / 12) ** 0.5, abs=1e-5)
    assert "within the judges' own noise" in row["summary"]


def test_power_reads_the_judges_noise(server, tmp_path, capsys):
    """The run of the first test: values 0.8, 0.4, 0.2 (s.d. 0.3055), the judge's
    within-question s.d. 0.2 at 2 repeats. To see a drop of 0.1: the spread asks
    ((1.96 + 0.8416) * 0.3055 / 0.1)^2 = 73.3 -> 74 questions; the noise band asks
    2 * (1.96 * 0.2)^2 / (2 * 0.1^2) = 15.4 -> 16; 74 it is."""
    server.rule = _rule
    _run(server, tmp_path, capsys, "--judge-repeats", "2")
    code, out, err = run_cli(["power", "--from", str(tmp_path / "out.json"), "--effect",
                              "0.1", "--metrics", "complete"], capsys)
    assert code == 0, err
    assert "0.2000" in out and "repeats" in out and "74" in out
    assert "judge noise: the within-question s.d." in out
    # a noisier judge (s.d. 1.0): the band asks 2 * 1.96^2 / (2 * 0.01) = 384.2 -> 385
    data = json.loads((tmp_path / "out.json").read_text())
    data["llm"]["judge_noise"]["complete"]["within_sd"] = 1.0
    (tmp_path / "noisy.json").write_text(json.dumps(data))
    code, out, err = run_cli(["power", "--from", str(tmp_path / "noisy.json"), "--effect",
                              "0.1", "--metrics", "complete"], capsys)
    assert code == 0, err
    assert "385" in out and "74" not in out


def test_the_history_keeps_the_judges_noise_for_a_later_gate(server, tmp_path, capsys):
    """A run recorded in the history keeps its judge noise: a gate against it (``last``)
    counts it, as one against its results file does."""
    from ragmark.analysis.diff import resolve_side
    from ragmark.history import history_path

    server.rule = _rule
    data, _ = run_complete(server, tmp_path, capsys, "--judge-repeats", "2", history=True)
    side = resolve_side("last", None, history_path(None))
    assert side.noise["complete"] == data["llm"]["judge_noise"]["complete"]
    assert side.noise["complete"]["within_sd"] == pytest.approx(0.2)
