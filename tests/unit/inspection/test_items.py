"""Each question's difficulty and discrimination over configs (issue 65, item 3), as
classical test theory's item analysis defines them (Crocker and Algina 1986, ch. 14:
the item's p-value, and the corrected item-total point-biserial correlation).

Hand-worked, three configs and four questions of 0/1 values:

    c1: q1 1, q2 1, q3 1, q4 0
    c2: q1 1, q2 1, q3 0, q4 0
    c3: q1 1, q2 0, q3 0, q4 0

q1: every config passes it (difficulty 1, separates nothing); q4: every config fails
it (0). q2: values (1, 1, 0), the rest of each config's mean over the other three
(2/3, 1/3, 1/3): r = (1/9) / sqrt((2/3) (2/27)) = 0.5, difficulty 2/3. q3: values (1,
0, 0), rest (2/3, 2/3, 1/3): r = 0.5, difficulty 1/3."""

from __future__ import annotations

import json

import pytest
from support.cli import run_cli

from ragmark.analysis.items import item_statistics, item_summary

VALUES = {"c1": {"q1": 1.0, "q2": 1.0, "q3": 1.0, "q4": 0.0},
          "c2": {"q1": 1.0, "q2": 1.0, "q3": 0.0, "q4": 0.0},
          "c3": {"q1": 1.0, "q2": 0.0, "q3": 0.0, "q4": 0.0}}


def test_difficulty_and_discrimination_hand_worked():
    items, left_out = item_statistics(VALUES, ["q1", "q2", "q3", "q4"])
    got = {i.id: i for i in items}
    assert left_out == 0
    assert (got["q1"].difficulty, got["q1"].discrimination, got["q1"].verdict) == (
        1.0, None, "every config passes it")
    assert (got["q4"].difficulty, got["q4"].verdict) == (0.0, "every config fails it")
    assert got["q2"].difficulty == pytest.approx(2 / 3)
    assert got["q2"].discrimination == pytest.approx(0.5)
    assert got["q3"].difficulty == pytest.approx(1 / 3)
    assert got["q3"].discrimination == pytest.approx(0.5)
    s = item_summary(items, left_out, list(VALUES), "hit@1")
    assert (s["separate_nothing"], s["always_passed"], s["always_failed"]) == (2, 1, 1)
    assert [i["id"] for i in s["items"]] == ["q4", "q3", "q2", "q1"]  # hardest first


def test_a_question_some_config_has_no_value_for_is_left_out():
    values = {c: dict(v) for c, v in VALUES.items()}
    values["c2"]["q3"] = None
    items, left_out = item_statistics(values, ["q1", "q2", "q3", "q4"])
    assert left_out == 1 and [i.id for i in items] == ["q1", "q2", "q4"]


def test_check_with_the_history_of_a_compare(tmp_path, capsys):
    from ragmark.demo.tour import demo_path

    demo = demo_path()
    (tmp_path / "chunky.toml").write_text('name = "chunky"\nunit = "chunk"\n[chunker]\n'
                                          'name = "fixed"\nsize = 120\noverlap = 0\n')
    hist = str(tmp_path / "h.sqlite")
    code, _, err = run_cli(["compare", "--dataset", str(demo / "questions.json"), "--corpus",
                            str(demo / "corpus"), "--configs", "sparse",
                            str(tmp_path / "chunky.toml"), "--history", hist, "--output",
                            str(tmp_path / "cmp"), "--quiet"], capsys)
    assert code == 0, err
    args = ["testset", "check", str(demo / "questions.json"), "--corpus", str(demo / "corpus"),
            "--words-only", "--history", hist, "--quiet"]
    code, out, err = run_cli([*args, "--metric", "mrr", "--json"], capsys)
    assert code == 0, err
    items = json.loads(out)["items"]
    per = json.loads((tmp_path / "cmp.json").read_text())["configs"]
    both = {c: per[c]["per_query"] for c in ("sparse", "chunky")}
    alike = [q for q in both["sparse"] if both["sparse"][q]["mrr@10"] ==
             both["chunky"][q]["mrr@10"]]
    assert items["metric"] == "mrr@10" and sorted(items["configs"]) == ["chunky", "sparse"]
    assert items["separate_nothing"] == len(alike) and items["questions"] == 8
    code, _, err = run_cli([*args, "--metric", "ndcg@3"], capsys)
    assert code == 2 and "has 0 configs with it on this set" in err and "mrr@10" in err


def test_two_configs_give_no_discrimination_and_say_why():
    """Over two configs every correlation is +1 or -1: not reported; the question that
    varies says so, the ones that do not keep their verdicts."""
    two = {c: VALUES[c] for c in ("c1", "c3")}
    got = {i.id: i for i in item_statistics(two, ["q1", "q2", "q3", "q4"])[0]}
    assert got["q2"].separates and got["q2"].discrimination is None
    assert got["q2"].verdict.startswith("varies; its discrimination needs 3 or more configs")
    assert got["q1"].verdict == "every config passes it"
    assert item_summary(list(got.values()), 0, list(two), "hit@1")["separate_nothing"] == 2


def test_a_question_the_weaker_configs_do_better_on_is_named():
    """q5 is passed by c3 alone, the weakest config: values (0, 0, 1), the rest's means
    (3/4, 2/4, 1/4) after adding q5 to every config's row (c1 and c2 fail it)."""
    values = {c: {**v, "q5": 1.0 if c == "c3" else 0.0} for c, v in VALUES.items()}
    got = {i.id: i for i in item_statistics(values, ["q1", "q2", "q3", "q4", "q5"])[0]}
    assert got["q5"].discrimination == pytest.approx(-0.8660, abs=1e-4)
    assert got["q5"].verdict.startswith("separates the wrong way")


def test_configs_alike_elsewhere_give_no_discrimination():
    values = {"a": {"q1": 1.0, "q2": 0.0}, "b": {"q1": 0.0, "q2": 1.0},
              "c": {"q1": 1.0, "q2": 1.0}}
    got = {i.id: i for i in item_statistics(values, ["q1", "q2"])[0]}
    # q1: rest = q2's values (0, 1, 1) vary, so r exists; make the rest flat instead
    flat = {"a": {"q1": 1.0, "q2": 1.0}, "b": {"q1": 0.0, "q2": 1.0},
            "c": {"q1": 1.0, "q2": 1.0}}
    one = {i.id: i for i in item_statistics(flat, ["q1", "q2"])[0]}
    assert got["q1"].discrimination is not None
    assert one["q1"].discrimination is None
    assert one["q1"].verdict.endswith("the configs' means over the other questions are alike")


def test_inspect_of_a_compare_shows_the_question_over_its_configs(tmp_path, capsys):
    """Three configs of the demo compared; `inspect CMP QID` gives each metric's value in
    every config and the question's difficulty and discrimination, recomputed here by
    hand from the compare file's values (classical test theory, as above)."""
    import numpy as np

    from ragmark.demo.tour import demo_path

    demo = demo_path()
    for size in (30, 60):
        (tmp_path / f"c{size}.toml").write_text(
            f'name = "c{size}"\nunit = "chunk"\n[chunker]\nname = "fixed"\nsize = {size}\n'
            'overlap = 0\n')
    code, _, err = run_cli(["compare", "--dataset", str(demo / "questions.json"), "--corpus",
                            str(demo / "corpus"), "--configs", "sparse", str(tmp_path / "c30.toml"),
                            str(tmp_path / "c60.toml"), "--metrics", "mrr@10",
                            "--no-history", "--output", str(tmp_path / "cmp"), "--quiet"], capsys)
    assert code == 0, err
    per = json.loads((tmp_path / "cmp.json").read_text())["configs"]
    configs = list(per)
    qids = list(per[configs[0]]["per_query"])
    m = np.array([[per[c]["per_query"][q]["mrr@10"] for q in qids] for c in configs])
    varying = [j for j in range(len(qids)) if np.ptp(m[:, j]) > 0]
    assert varying, "the demo's configs should differ on some question"
    j = varying[0]
    rest = (m.sum(axis=1) - m[:, j]) / (len(qids) - 1)
    code, out, err = run_cli(["inspect", str(tmp_path / "cmp.json"), qids[j], "--json"], capsys)
    assert code == 0, err
    got = json.loads(out)["over_configs"]["mrr@10"]
    assert got["values"] == {c: pytest.approx(m[i, j]) for i, c in enumerate(configs)}
    assert got["difficulty"] == pytest.approx(m[:, j].mean(), abs=1e-4)
    assert np.ptp(rest) > 0  # the configs' means over the other questions differ
    assert got["discrimination"] == pytest.approx(np.corrcoef(m[:, j], rest)[0, 1],
                                                  abs=1e-4)
    code, out, err = run_cli(["inspect", str(tmp_path / "cmp.json"), qids[j]], capsys)
    assert code == 0 and "Over the compare's configs" in out
    assert f"mrr@10: {configs[0]} {m[0, j]:.3f}" in out and "difficulty" in out
