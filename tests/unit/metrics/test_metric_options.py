"""A metric's name with options (issue 62 item 1): ``rbp(p=0.5)@3`` is one value whose
identity holds its options, parsed once, typed as the metric declares them, written
canonically and read back whole; a plugin adds a retrieval metric with an option in one
file (here: one test), and ``run`` computes it beside its default.

The plugin is rank-biased precision (Moffat and Zobel, "Rank-biased precision for
measurement of retrieval effectiveness", TOIS 2008, eq. 4; ir_measures' ``RBP(p=)``):
RBP@k = (1 - p) * sum over ranks i <= k of rel_i * p^(i - 1), rel_i 1 for a relevant
item."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from support.cli import run_cli
from support.doors import isolated

from ragmark import evaluate
from ragmark.errors import UnknownComponentError
from ragmark.metrics import names
from ragmark.metrics.graded import Graded
from ragmark.metrics.names import MetricName, MetricSpec, parse_metric, read_name
from ragmark.types import Param

DEMO = Path(__file__).resolve().parents[3] / "src" / "ragmark" / "demo"


def rbp(j: Graded, k: int, p: float) -> np.ndarray:
    keep = j.hit_rank <= k
    out = np.bincount(j.hit_q[keep], weights=p ** (j.hit_rank[keep] - 1.0),
                      minlength=j.n_queries) * (1 - p)
    out[j.n_rel == 0] = np.nan
    return out


RBP = MetricSpec("rbp", "retrieval", "required", "rank-biased precision", label="RBP",
                 needs=("ground_truth",), compute=rbp,
                 options=(Param("p", float, 0.8, "the user's persistence"),))


@pytest.fixture
def with_rbp(monkeypatch):
    isolated(monkeypatch, names.METRICS)
    names.register(RBP)


def test_the_options_are_part_of_the_name_typed_and_canonical(with_rbp):
    m = parse_metric("RBP(P=0.50)@3")
    assert m == MetricName("rbp", 3, (("p", 0.5),)) and str(m) == "rbp(p=0.5)@3"
    assert parse_metric(str(m)) == m == read_name(str(m)) and read_name(str(m)).k == 3
    assert parse_metric("rbp(p=0.8)@3") == parse_metric("rbp@3") == MetricName("rbp", 3)
    assert parse_metric("rbp(p=0.5)@3") != parse_metric("rbp(p=0.9)@3")
    assert parse_metric("rbp(p=0.5)@3").settings() == {"p": 0.5}
    assert parse_metric("rbp@3").settings() == {"p": 0.8}
    assert names.split_names("rbp(p=0.5)@3, ndcg@10") == ["rbp(p=0.5)@3", "ndcg@10"]
    assert "rbp[(p=)]@k" in names.known_metrics()


@pytest.mark.parametrize("text, message", [
    ("rbp(q=1)@3", "no option 'q'; it takes p (a number, default 0.8)"),
    ("rbp(p=high)@3", "option 'p' must be a number, got 'high'"),
    ("rbp(p=nan)@3", "option 'p' must be a number, got 'nan'"),
    ("rbp(p=0.5,p=0.6)@3", "option 'p' given twice"),
    ("rbp(0.5)@3", "'0.5' is not an option (name=value"),
    ("ndcg(p=1)@10", "no option 'p'; it takes none"),
])
def test_a_bad_option_is_named(with_rbp, text, message):
    with pytest.raises(UnknownComponentError, match=re.escape(message)):
        parse_metric(text)


@pytest.mark.parametrize("option, message", [
    (Param("P", float, 0.8, "x"), "option 'P' must be lower-case"),
    (Param("p", list, [], "x"), "needs a type of bool, int, float or str"),
    (Param("p", int, 0.5, "x"), "a default of it"),
    (Param("p", str, "a,b", "x"), "cannot be written in a name"),
])
def test_an_option_that_cannot_be_written_is_refused_at_registration(monkeypatch, option,
                                                                       message):
    isolated(monkeypatch, names.METRICS)
    from dataclasses import replace

    with pytest.raises(UnknownComponentError, match=message):
        names.register(replace(RBP, options=(option,)))


def test_the_library_call_computes_it_by_hand(with_rbp):
    """Ranking a (relevant), b, c (relevant): p = 0.5: 0.5 * (1 + 0.25) = 0.625;
    p = 0.8 (the default): 0.2 * (1 + 0.64) = 0.328."""
    got = evaluate({"q": {"a": 1, "c": 1}}, {"q": {"a": 0.9, "b": 0.5, "c": 0.1}},
                   ["rbp(p=0.5)@3", "rbp@3", "rbp(p=0.5)@1"])
    assert got == pytest.approx({"rbp(p=0.5)@3": 0.625, "rbp@3": 0.328,
                                 "rbp(p=0.5)@1": 0.5})


def test_run_computes_two_of_them_side_by_side(with_rbp, tmp_path, capsys):
    """On the demo: both values per question, keyed by their canonical names, equal the
    formula over the ranks the results list as matched; the console labels them."""
    out = tmp_path / "r.json"
    code, stdout, err = run_cli(["run", "--dataset", str(DEMO / "questions.json"),
                                 "--corpus", str(DEMO / "corpus"), "--metrics",
                                 "rbp(p=0.5)@5,rbp@5", "--output", str(out),
                                 "--include-details", "--no-history"], capsys)
    assert code == 0, err
    data = json.loads(out.read_text())
    assert set(data["metrics"]) >= {"rbp(p=0.5)@5", "rbp@5"}
    checked = 0
    for q in data["queries"]:
        ranks = [r["rank"] for r in q["retrieved"] if r["grade"] > 0 and r["rank"] <= 5]
        if not q["ground_truth"]["targets"]:
            continue
        for p, key in ((0.5, "rbp(p=0.5)@5"), (0.8, "rbp@5")):
            want = (1 - p) * sum(p ** (r - 1) for r in ranks)
            assert q["metrics"][key] == pytest.approx(want), (q["id"], key)
            checked += 1
    assert checked >= 10
    assert "RBP(p=0.5)@5" in stdout and "RBP@5" in stdout


def test_a_gate_and_the_history_name_it_whole(with_rbp, tmp_path, capsys):
    """``--fail-under rbp(p=0.5)@5=...`` gates that metric, not ``rbp@5``; the history
    keeps both series apart."""
    hist = ["--history", str(tmp_path / "h.sqlite")]
    base = ["run", "--dataset", str(DEMO / "questions.json"), "--corpus",
            str(DEMO / "corpus"), "--metrics", "rbp(p=0.5)@5,rbp@5", "--quiet", *hist]
    code, _, err = run_cli([*base, "--output", str(tmp_path / "a.json")], capsys)
    assert code == 0, err
    data = json.loads((tmp_path / "a.json").read_text())
    means = data["metrics"]
    low, high = sorted([means["rbp(p=0.5)@5"], means["rbp@5"]])
    assert low < high
    name = "rbp(p=0.5)@5" if means["rbp(p=0.5)@5"] == high else "rbp@5"
    cut = (low + high) / 2
    code, _, err = run_cli([*base, "--output", str(tmp_path / "b.json"), "--fail-under",
                            f"{name}={cut}"], capsys)
    assert code == 0, err  # the higher one passes
    other = "rbp@5" if name != "rbp@5" else "rbp(p=0.5)@5"
    code, _, err = run_cli([*base, "--output", str(tmp_path / "c.json"), "--fail-under",
                            f"{other}={cut}"], capsys)
    assert code == 1 and other in err
    code, text, err = run_cli(["history", *hist, "trend", "--metric", "rbp(p=0.5)@5",
                               "--config-name", data["config"]["name"]], capsys)
    assert code == 0 and f"{means['rbp(p=0.5)@5']:.4f}" in text, err
    assert f"{means['rbp@5']:.4f}" not in text  # the other series
