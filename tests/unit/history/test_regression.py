"""The regression gate: quiet on noise, loud on a planted drop; the minimum detectable
effect matches a simulation; JUnit XML and the GitHub step summary."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps
from support.cli import run_cli

from ragmark.analysis.diff import Side
from ragmark.analysis.regression import mde, questions_needed, regression_gate

DEMO = Path(__file__).resolve().parents[3] / "src" / "ragmark" / "demo"


def _side(label, vals):
    return Side(label, "cfg", "d", {f"q{i}": "" for i in range(len(vals))},
                {"m": {f"q{i}": float(v) for i, v in enumerate(vals)}})


def test_the_minimum_detectable_effect_matches_a_simulation():
    n, sd, alpha = 60, 0.3, 0.05
    effect = mde(sd, n, alpha)
    assert effect == pytest.approx((sps.norm.ppf(0.975) + sps.norm.ppf(0.8)) * sd / n ** 0.5)
    rng = np.random.default_rng(7)
    d = rng.normal(effect, sd, size=(4000, n))
    power = np.mean(sps.ttest_1samp(d, 0.0, axis=1).pvalue < alpha)
    assert power == pytest.approx(0.8, abs=0.03)  # t vs normal quantiles: within 3 points
    need = questions_needed(sd, effect, alpha)
    assert need in (n, n + 1) and mde(sd, need, alpha) <= effect + 1e-12
    assert mde(sd, 1) is None


def test_the_gate_passes_on_noise():
    rng = np.random.default_rng(11)
    fails = 0
    for _ in range(200):  # two samples of the same distribution, paired by question
        truth = rng.random(80)
        a = np.clip(truth + rng.normal(0, 0.1, 80), 0, 1)
        b = np.clip(truth + rng.normal(0, 0.1, 80), 0, 1)
        (row,) = regression_gate(_side("A", a), _side("B", b), ["m"], n_resamples=2000)
        fails += not row.passed
    assert fails / 200 <= 0.05  # only a significant drop fails: about 2.5% by chance


def test_the_gate_fails_on_a_planted_regression_of_known_size():
    rng = np.random.default_rng(5)
    base = rng.random(200)
    now = base - 0.1 + rng.normal(0, 0.3, 200)  # a drop of 0.1; MDE about 0.06
    (row,) = regression_gate(_side("A", base), _side("B", now), ["m"])
    assert not row.passed and row.delta == pytest.approx(now.mean() - base.mean())
    assert row.delta < -0.05 and row.mde == pytest.approx(
        mde(float(np.std(now - base, ddof=1)), 200))
    assert row.low < row.delta < row.high < 0
    assert row.reason.startswith("significantly worse (p = ")
    # the same drop within a practical margin passes, and says why
    (kept,) = regression_gate(_side("A", base), _side("B", now), ["m"], margin=0.2)
    assert kept.passed and kept.reason.startswith("significantly worse, but by no more than")
    # an improvement never fails
    (up,) = regression_gate(_side("A", now), _side("B", base), ["m"])
    assert up.passed and up.reason == "better"


def test_run_fails_on_regression_writes_junit_and_the_step_summary(tmp_path, capsys,
                                                                   monkeypatch):
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    chunky = tmp_path / "chunky.toml"  # judged per chunk: precision@5 is three times higher
    chunky.write_text('name = "sparse"\nunit = "chunk"\n[chunker]\nname = "fixed"\n'
                      'size = 120\noverlap = 0\n')
    args = ["run", "--dataset", str(DEMO / "questions.json"), "--corpus", str(DEMO / "corpus"),
            "--quiet", "--output", str(tmp_path / "r.json")]
    code, _, _ = run_cli([*args, "--config", str(chunky)], capsys)
    assert code == 0
    junit = tmp_path / "ci" / "gates.xml"
    code, out, err = run_cli([*args, "--fail-on-regression", "P@5,mrr", "--junit",
                              str(junit)], capsys)
    assert code == 1
    assert "FAIL precision@5 vs run 1 (sparse): 0.6750 -> 0.2250 (-0.4500" in " ".join(
        out.split())
    assert "PASS mrr@10 vs run 1 (sparse)" in " ".join(out.split())
    assert err.startswith("gate failed: FAIL precision@5 vs run 1 (sparse)")
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and suite.get("failures") == "1"
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert cases["sparse: no regression in precision@5"].find("failure") is not None
    assert cases["sparse: no regression in mrr@10"].find("failure") is None
    assert cases["sparse: mrr@10 has a value"].find("failure") is None
    md = summary.read_text()
    assert "### Regression gate against run 1 (sparse)" in md
    assert "| precision@5 | 8 | 0.6750 | 0.2250 |" in md and "| FAIL |" in md
    # the run just recorded failed its gate, so it is not the last one: run again, the
    # same regression fails again (issue 25 item 6: the gate never ratchets down)
    code, out, _ = run_cli([*args, "--fail-on-regression", "precision@5"], capsys)
    assert code == 1 and "FAIL precision@5 vs run 1 (sparse)" in " ".join(out.split())
    code, _, err = run_cli([*args, "--against", "last"], capsys)
    assert code == 2 and "give --fail-on-regression METRIC[,METRIC] too" in err
    # the old name of --against works for one release, and says so
    code, _, err = run_cli([*args, "--baseline", "last"], capsys)
    assert code == 2 and "give --fail-on-regression METRIC[,METRIC] too" in err
    assert "warning: --baseline is renamed --against" in err
    # no earlier run (a first CI run): not gated, with a note, as compare does
    code, out, _ = run_cli([*args, "--fail-on-regression", "mrr", "--history",
                            str(tmp_path / "empty.sqlite")], capsys)
    assert code == 0 and ("no earlier run of this config on this dataset to gate against: "
                          "not gated for regressions") in " ".join(out.split())
    # three questions: the baseline's other questions are left out of the pairing, and
    # the paired test over 3 gives p of 2 / 2^3 = 0.25 at the least: a gate that cannot
    # fail is none, so it fails saying so (before, it passed whatever the answers)
    code, out, err = run_cli([*args, "--fail-on-regression", "mrr", "--dataset",
                              str(DEMO / "questions.json"), "--max-queries", "3"], capsys)
    said = " ".join(out.split())
    assert code == 1 and "n = 3)" in said, out
    assert ("this gate cannot fail: over 3 questions the paired test gives p no smaller "
            "than 0.25, not below alpha 0.05 after Holm; gate on at least 6 questions") in said
    assert "detectable at n = 3" not in said


def test_compare_gates_each_config_against_its_own_last_run(tmp_path, capsys, monkeypatch):
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    chunky = tmp_path / "chunky.toml"
    chunky.write_text('name = "sparse"\nunit = "chunk"\n[chunker]\nname = "fixed"\n'
                      'size = 120\noverlap = 0\n')
    demo = ["--dataset", str(DEMO / "questions.json"), "--corpus", str(DEMO / "corpus"),
            "--quiet"]
    assert run_cli(["run", *demo, "--config", str(chunky), "--output",
                    str(tmp_path / "r.json")], capsys)[0] == 0
    flat = tmp_path / "flat.toml"
    flat.write_text('[retriever]\nname = "bm25"\nb = 0.0\n')
    junit = tmp_path / "gates.xml"
    code, out, _ = run_cli(["compare", *demo, "--configs", "sparse", str(flat),
                            "--fail-on-regression", "precision@5", "--junit", str(junit),
                            "--output", str(tmp_path / "c")], capsys)
    assert code == 1
    flat_out = " ".join(out.split())
    assert "FAIL precision@5 vs run 1 (sparse)" in flat_out
    assert ("note: flat: no earlier run of this config on this dataset to gate against: not "
            "gated for regressions") in flat_out
    cases = {c.get("name"): c for c in ET.parse(junit).getroot().iter("testcase")}
    assert cases["sparse: no regression in precision@5"].find("failure") is not None
    assert cases["flat: has a baseline"].find("failure") is None
    md = summary.read_text()
    assert md.startswith("### ragmark run: sparse on questions (8 questions)")  # the run
    assert "\n## ragmark compare: questions (8 questions)" in md  # then the compare
    assert md.count("### Regression gate against run 1 (sparse)") == 1
    # the compare's own Markdown file has the gate table too
    assert "### Regression gate against run 1 (sparse)" in (tmp_path / "c.md").read_text()
    assert "### Regression gate against run 1 (sparse)" in md


def test_plan_says_how_many_questions_a_gate_needs(tmp_path, capsys):
    args = ["run", "--dataset", str(DEMO / "questions.json"), "--corpus", str(DEMO / "corpus"),
            "--quiet", "--output", str(tmp_path / "r.json")]
    assert run_cli(args, capsys)[0] == 0
    data = __import__("json").loads((tmp_path / "r.json").read_text())
    p5 = [q["precision@5"] for q in data["per_query"].values()]
    sd = float(np.std(p5, ddof=1))
    code, out, _ = run_cli(["power", "--from", str(tmp_path / "r.json"), "--effect",
                            "0.02", "--metrics", "precision@5"], capsys)
    assert code == 0
    flat = " ".join(out.split())
    assert f"{questions_needed(sd, 0.02):,}" in flat and f"{sd:.4f}" in flat
    assert "assumed" in flat  # no --with: the spread is the run's own
    # the former name of its flag, for one release; `plan` is no command (the word names
    # the layer that plans every command, issue 49)
    code, old, err = run_cli(["power", "--baseline", str(tmp_path / "r.json"), "--effect",
                              "0.02", "--metrics", "precision@5"], capsys)
    assert code == 0 and old == out and "--baseline is renamed --from" in err
    code, _, err = run_cli(["plan", "--help"], capsys)
    assert code == 2 and "No such command 'plan'" in err
    # a drop of 0.9 needs 2 questions by the normal approximation, but a gate over fewer
    # than 6 cannot fail (least p 2 / 2^5 = 0.0625): power says 6, and for five
    # metrics 8
    code, out, _ = run_cli(["power", "--from", str(tmp_path / "r.json"), "--effect",
                            "0.9", "--metrics", "precision@5"], capsys)
    assert code == 0 and questions_needed(sd, 0.9) < 6
    row = next(line for line in out.splitlines() if "precisi" in line)
    assert row.strip().strip("│").split("│")[-1].strip() == "6"
    assert "cannot fail with fewer than" not in out  # the run has 8 questions
    assert run_cli([*args[:-1], str(tmp_path / "r5.json"), "--max-queries", "5"],
                   capsys)[0] == 0
    code, out, _ = run_cli(["power", "--from", str(tmp_path / "r5.json"), "--effect",
                            "0.9", "--metrics", "precision@5,mrr@10,recall@5,hit@5,ndcg@10"],
                           capsys)
    assert code == 0
    assert ("a gate of 5 metric(s) at α = 0.05 cannot fail with fewer than 8 questions"
            in " ".join(out.split()))
    code, _, err = run_cli(["power", "--from", str(tmp_path / "r5.json"), "--effect",
                            "0.9", "--metrics", "mrr"], capsys)
    assert code == 2 and "the run names mrr with the depth it covers: try --metrics mrr@10" \
        in " ".join(err.split())


def test_compare_against_an_earlier_compare_file(tmp_path, capsys):
    demo = ["--dataset", str(DEMO / "questions.json"), "--corpus", str(DEMO / "corpus"),
            "--quiet", "--no-history"]
    chunky = tmp_path / "chunky.toml"
    chunky.write_text('name = "sparse"\nunit = "chunk"\n[chunker]\nname = "fixed"\n'
                      'size = 120\noverlap = 0\n')
    flat = tmp_path / "flat.toml"
    flat.write_text('[retriever]\nname = "bm25"\nb = 0.0\n')
    assert run_cli(["compare", *demo, "--configs", str(chunky), "--output",
                    str(tmp_path / "before")], capsys)[0] == 0
    code, out, _ = run_cli(["compare", *demo, "--configs", "sparse", str(flat),
                            "--fail-on-regression", "precision@5", "--against",
                            str(tmp_path / "before.json"), "--output",
                            str(tmp_path / "after")], capsys)
    assert code == 1
    flat_out = " ".join(out.split())
    assert f"FAIL precision@5 vs {tmp_path / 'before.json'} (sparse)" in flat_out
    assert "note: flat: no earlier run of this config" in flat_out  # not in the file
    code, _, err = run_cli(["compare", *demo, "--configs", "sparse", "--against", "last",
                            "--output", str(tmp_path / "x")], capsys)
    assert code == 2 and "give --fail-on-regression METRIC[,METRIC] too" in err


def test_the_gate_does_not_pair_nugget_scores_over_other_nuggets():
    """A baseline whose nugget scores counted against other nuggets cannot gate them: the
    gate fails with the reason (as when no question pairs); other metrics are gated."""
    vals = {"nugget_all": {f"q{i}": v for i, v in enumerate([0.5, 1.0, 0.75] * 2)},
            "mrr": {f"q{i}": v for i, v in enumerate([1.0, 0.5, 1.0] * 2)}}
    base, now = (Side(name, "cfg", "d", {f"q{i}": "" for i in range(6)}, vals)
                 for name in ("base", "now"))
    base.nuggets_hash, now.nuggets_hash = "a" * 64, "b" * 64
    rows = {r.metric: r for r in regression_gate(base, now, ["nugget_all", "mrr"])}
    assert rows["nugget_all"].passed is False and rows["nugget_all"].n == 0
    assert rows["nugget_all"].reason.startswith("base and now scored nugget_all against "
                                                "different nuggets (fingerprints aaaa")
    assert rows["mrr"].passed is True and rows["mrr"].n == 6
    now.nuggets_hash = base.nuggets_hash
    assert regression_gate(base, now, ["nugget_all"])[0].passed is True


def test_a_gate_too_small_to_fail_fails_saying_so():
    """The paired sign-flip test over n questions never gives p below 2 / 2^n (only the
    observed signs and their mirror image reach the observed mean): over 5 questions
    0.0625, so a drop from 1 to 0 on every question is not significant at 0.05 and the
    gate could never fail — it fails, saying so. Over 6 questions the least p is
    0.03125: the same drop fails as a regression. Two metrics gated over 6: Holm doubles
    the smallest p to 0.0625, and neither can fail."""
    def sides(n: int, metrics: list[str]) -> tuple[Side, Side]:
        ids = {f"q{i}": "" for i in range(n)}
        before = {m: {q: 1.0 for q in ids} for m in metrics}
        after = {m: {q: 0.0 for q in ids} for m in metrics}
        return Side("base", "cfg", "d", ids, before), Side("now", "cfg", "d", ids, after)

    [five] = regression_gate(*sides(5, ["mrr"]), ["mrr"])
    assert five.passed is False and five.p_value == pytest.approx(0.0625)
    assert five.reason.startswith("this gate cannot fail: over 5 questions the paired test "
                                  "gives p no smaller than 0.0625, not below alpha 0.05")
    assert five.mde is None
    from ragmark.analysis.regression import gate_markdown

    table = gate_markdown([five], "run 1", 0.05, 0.0)
    assert "| — | FAIL: this gate cannot fail: over 5 questions" in table
    [six] = regression_gate(*sides(6, ["mrr"]), ["mrr"])
    assert six.passed is False and six.p_adjusted == pytest.approx(0.03125)
    assert six.reason.startswith("significantly worse")
    two = regression_gate(*sides(6, ["mrr", "recall"]), ["mrr", "recall"])
    assert [r.passed for r in two] == [False, False]
    assert all("2 gated metrics x that is 0.0625" in r.reason
               and "gate on at least 7 questions" in r.reason for r in two)


def test_compare_says_when_no_change_could_be_significant(tmp_path, capsys):
    """Three configs over the demo's first 4 questions: each metric's family has 2
    comparisons and the sign-flip test over 4 never gives p below 0.125: the report
    says so, and how many questions a family of 2 needs (7)."""
    code, out, err = run_cli(["compare", "--dataset", str(DEMO / "questions.json"),
                              "--corpus", str(DEMO / "corpus"), "--configs", "sparse",
                              "dense", "hybrid", "--no-history", "--quiet",
                              "--max-queries", "4", "--output", str(tmp_path / "c")], capsys)
    assert code == 0, err
    md = " ".join((tmp_path / "c.md").read_text().split())
    assert ("comparisons could not be significant however large the change: over 4 "
            "questions the test's p is never below 0.125") in md
    assert "a family of 2 needs at least 7 questions" in md
