"""ragmark diff: paired per-question differences, from files or the history."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from support.cli import run_cli

from ragmark.analysis.diff import Side, diff, diff_metric
from ragmark.errors import ConfigError

DEMO = Path(__file__).resolve().parents[3] / "src" / "ragmark" / "demo"


def _side(label, values, dataset="d", questions=None):
    qs = questions or {q: f"question {q}?" for m in values.values() for q in m}
    return Side(label, "cfg", dataset, qs, values)


def test_a_planted_change_is_measured_and_its_questions_listed():
    rng = np.random.default_rng(0)
    a = {f"q{i}": float(v) for i, v in enumerate(rng.random(40))}
    b = dict(a)
    for q in ("q3", "q7", "q11"):  # three questions lose 0.5, one gains 0.2
        b[q] = a[q] - 0.5
    b["q20"] = a["q20"] + 0.2
    a["q39"] = None  # missing in A: not paired
    d = diff_metric(_side("A", {"m": a}), _side("B", {"m": b}), "m", top=2)
    assert d.n == 39
    assert d.delta == pytest.approx((-1.5 + 0.2) / 39)
    assert d.low is not None and d.low < d.delta < d.high
    assert [m.id for m in d.worse] == ["q11", "q3"]  # equal losses: by id
    assert all(m.delta == pytest.approx(-0.5) for m in d.worse)
    assert [(m.id, round(m.delta, 9)) for m in d.better] == [("q20", 0.2)]
    assert d.unchanged == 35
    same = diff_metric(_side("A", {"m": a}), _side("B", {"m": a}), "m")
    assert (same.delta, same.p_value, same.worse, same.better) == (0.0, 1.0, [], [])


def test_different_datasets_or_questions_are_refused_unless_intersect():
    a = _side("A", {"m": {"q1": 1.0, "q2": 0.0}})
    b = _side("B", {"m": {"q1": 0.0, "q2": 0.0}}, dataset="other")
    with pytest.raises(ConfigError, match="ran on different datasets .* pass --intersect"):
        diff(a, b)
    rows, notes = diff(a, b, intersect=True)
    assert rows[0].n == 2 and notes[0].startswith("the runs are over different datasets")
    c = _side("C", {"m": {"q1": 1.0, "q3": 1.0}})
    with pytest.raises(ConfigError, match=r"answered different questions \(1 only in A, 1 only"):
        diff(a, c)
    rows, notes = diff(a, c, intersect=True)
    assert rows[0].n == 1 and notes == ["1 question only in A and 1 only in B are left out"]
    with pytest.raises(ConfigError, match="metric 'x' is not in both runs"):
        diff(a, a, ["x"])
    # nothing to pair: said, not an empty table
    d = _side("D", {"n": {"q1": 1.0, "q2": 0.0}})
    with pytest.raises(ConfigError) as e:
        diff(a, d)
    assert str(e.value) == "A and D have no metric in common: A has m; B has n"


def test_diff_from_the_history_and_from_files(tmp_path, capsys):
    args = ["--dataset", str(DEMO / "questions.json"), "--corpus", str(DEMO / "corpus"),
            "--quiet"]
    weak = tmp_path / "weak.toml"  # small chunks judged per chunk: other values
    weak.write_text('name = "sparse"\nunit = "chunk"\n[chunker]\nname = "fixed"\nsize = 120\n'
                    'overlap = 0\n')
    code, out1, _ = run_cli(["run", *args, "--output", str(tmp_path / "a.json")], capsys)
    assert code == 0 and "Recorded in the run history as 1" in out1
    code, _, _ = run_cli(["run", *args, "--config", str(weak), "--output",
                          str(tmp_path / "b.json")], capsys)
    assert code == 0
    code, out, _ = run_cli(["diff", "last~1", "last", "--metrics", "P@5", "--json"], capsys)
    assert code == 0
    got = json.loads(out)
    assert (got["a"], got["b"]) == ("run 1 (sparse)", "run 2 (sparse)")
    (p5,) = got["metrics"]
    a = json.loads((tmp_path / "a.json").read_text())["metrics"]["precision@5"]
    b = json.loads((tmp_path / "b.json").read_text())["metrics"]["precision@5"]
    assert p5["metric"] == "precision@5" and p5["n"] == 8
    assert (p5["mean_a"], p5["mean_b"]) == (pytest.approx(a), pytest.approx(b))
    assert p5["delta"] == pytest.approx(b - a) and p5["better"]
    assert p5["better"][0]["question"]  # question texts come from the history
    # the same from the files, and by id
    code, out, _ = run_cli(["diff", str(tmp_path / "a.json"), str(tmp_path / "b.json"),
                            "--metrics", "precision@5", "--json"], capsys)
    assert json.loads(out)["metrics"][0]["delta"] == pytest.approx(b - a)
    code, out, _ = run_cli(["diff", "1", "2", "--metrics", "precision@5"], capsys)
    assert code == 0 and "precision@5" in out and "better: q" in out
    code, _, err = run_cli(["diff", "last~5", "last"], capsys)
    assert code == 2 and "last~5: the history has 2 matching runs" in err
    code, _, err = run_cli(["diff", "nope", "last"], capsys)
    assert code == 2 and "'nope' is neither a results file, a history id, nor last" in err


def test_history_commands(tmp_path, capsys):
    args = ["--dataset", str(DEMO / "questions.json"), "--corpus", str(DEMO / "corpus"),
            "--quiet"]
    for _ in range(2):
        assert run_cli(["run", *args, "--output", str(tmp_path / "r.json")], capsys)[0] == 0
    assert run_cli(["run", *args, "--no-history", "--output", str(tmp_path / "r.json")],
                   capsys)[0] == 0
    code, out, _ = run_cli(["compare", *args, "--configs", "sparse", "--output",
                            str(tmp_path / "c")], capsys)
    assert code == 0 and "Recorded in the run history as 3" in out
    code, out, _ = run_cli(["history", "--metric", "MRR@10"], capsys)
    assert code == 0
    lines = [ln for ln in out.splitlines() if ln.startswith("│") and ln[1:5].strip().isdigit()]
    assert [ln[1:5].strip() for ln in lines] == ["3", "2", "1"] and "mrr" in out
    code, out, _ = run_cli(["history", "--metric", "mrr"], capsys)  # named with its depth
    assert "No recorded run matches" in out
    assert ("Runs of ragmark's own pipeline name mrr with the depth it covers: try --metric "
            "mrr@10") in " ".join(out.split())
    code, out, _ = run_cli(["history", "--metric", "mrr@10", "--json"], capsys)
    rows = json.loads(out)
    assert [r["id"] for r in rows] == [3, 2, 1] and rows[0]["kind"] == "compare"
    assert rows[0]["mrr@10"] == {"sparse": pytest.approx(1.0)} and rows[2]["questions"] == 8
    code, out, _ = run_cli(["history", "--kind", "compare"], capsys)
    assert "compare" in out and " 1 │" not in out
    code, out, _ = run_cli(["history", "show", "1"], capsys)
    assert code == 0 and "run 1: run on questions (8 questions)" in out and "ndcg@10" in out
    pytest.importorskip("matplotlib")
    code, out, _ = run_cli(["history", "trend", "--config-name", "sparse", "--metric", "mrr@10",
                            "--plot", str(tmp_path / "trend")], capsys)
    assert code == 0 and (tmp_path / "trend.svg").exists() and (tmp_path / "trend.png").exists()
    assert "mrr@10 of sparse on questions" in out
    code, _, err = run_cli(["history", "--history", str(tmp_path / "none.sqlite")], capsys)
    assert code == 2 and "no run history at" in err


def test_nugget_scores_over_different_nuggets_are_not_paired():
    """Issue 38: two runs whose nugget metrics count against different nuggets (another
    judge created them, or another --nuggets file) cannot be diffed on them: refused with
    the reason; the other metrics still can, and the same nuggets pair as usual."""
    values = {"nugget_all": {"q1": 0.5, "q2": 1.0}, "mrr": {"q1": 1.0, "q2": 0.5}}
    a, b = _side("A", values), _side("B", values)
    a.nuggets_hash, b.nuggets_hash = "a" * 64, "b" * 64
    with pytest.raises(ConfigError, match=r"A and B scored nugget_all against different "
                                          r"nuggets \(fingerprints aaaaaaaaaaaa and bbbb"):
        diff(a, b)
    assert [d.metric for d in diff(a, b, ["mrr"])[0]] == ["mrr"]
    b.nuggets_hash = a.nuggets_hash
    assert [d.metric for d in diff(a, b)[0]] == ["nugget_all", "mrr"]
