"""Anchor points (Vivek et al., EACL 2024): the questions chosen to stand for the set,
weighted by the share of questions like them, estimate each config's whole-set mean.

Hand-worked: six questions of three kinds over three configs — A (1, 1, 0) three times,
B (1, 0, 0) twice, C (0, 0, 0) once. Three anchors are one question of each kind,
weighted 3/6, 2/6 and 1/6: config 1's estimate 1/2 + 1/3 = 5/6, its mean over the six
(5/6); config 2's 1/2 (3/6); config 3's 0. A random subset of three, equally weighted,
gets them right only by luck."""

from __future__ import annotations

import numpy as np
import pytest

from ragmark.analysis.anchors import anchors, left_out, random_subset

KINDS = {"A": [1, 1, 0], "B": [1, 0, 0], "C": [0, 0, 0]}
COLUMNS = ["A", "B", "A", "C", "B", "A"]
MATRIX = np.array([KINDS[k] for k in COLUMNS], dtype=np.float64).T  # configs x questions


def test_three_anchors_weighted_by_their_kind_recover_every_mean():
    pick = anchors(MATRIX, 3, seed=0)
    kinds = sorted((COLUMNS[i], round(w, 4)) for i, w in zip(pick.indices, pick.weights,
                                                              strict=True))
    assert kinds == [("A", 0.5), ("B", 0.3333), ("C", 0.1667)]
    assert [pick.estimate(row) for row in MATRIX] == pytest.approx([5 / 6, 1 / 2, 0.0])
    assert MATRIX.mean(axis=1).tolist() == pytest.approx([5 / 6, 1 / 2, 0.0])


def test_a_random_subset_is_seeded_and_equally_weighted():
    a, b = random_subset(6, 3, seed=4), random_subset(6, 3, seed=4)
    assert a == b and len(set(a.indices)) == 3 and a.weights == (1 / 3,) * 3


def test_leaving_configs_out_on_a_set_of_many_questions():
    """40 questions over 8 configs whose strength rises from 0.2 to 0.9: question j is
    passed by config c when c's strength exceeds j's difficulty (a 2-level ladder of
    difficulties 0.1 ... 0.95); 8 anchors chosen without the config they estimate rank
    the 8 configs as their means do (4 do not: 5 levels cannot order 8 configs), with a
    smaller error than 8 random questions (averaged over 10 seeds). The error is large
    here (about 0.1): without a config, the questions it alone tells apart look alike."""
    strength = np.linspace(0.2, 0.9, 8)
    difficulty = np.repeat(np.linspace(0.1, 0.95, 20), 2)
    m = (strength[:, None] > difficulty[None, :]).astype(np.float64)
    names = [f"c{i}" for i in range(8)]
    got = left_out(m, names, 8, "anchors")
    base = np.mean([left_out(m, names, 8, "random", seed=s)["mean_abs_error"]
                    for s in range(10)])
    truth = m.mean(axis=1)
    assert got["mean_abs_error"] == pytest.approx(
        np.mean([abs(got["estimates"][n] - truth[i]) for i, n in enumerate(names)]))
    assert got["kendall_tau"] == pytest.approx(1.0)
    assert got["mean_abs_error"] < base


def test_stratified_takes_the_most_typical_question_of_each_difficulty_stratum():
    """Six questions over two configs: q0 (1, 1), q1 (0, 0), q2 (1, 0), q3 (1, 1),
    q4 (0, 0), q5 (0, 1). By mean: q1 q4 (0), q2 q5 (0.5), q0 q3 (1); three strata of
    two; the member nearest each stratum's centre (the first of a tie): q1, q2, q0,
    each weighted 2/6."""
    from ragmark.analysis.anchors import stratified

    m = np.array([[1, 0, 1, 1, 0, 0], [1, 0, 0, 1, 0, 1]], dtype=np.float64)
    pick = stratified(m, 3)
    assert pick.indices == (1, 2, 0) and pick.weights == pytest.approx((1 / 3,) * 3)


def test_select_writes_a_set_that_runs_with_the_means_it_promised(tmp_path, capsys):
    """Three BM25 configs compared on the demo set; 3 of its 8 questions chosen by
    mrr@10 and written as the set is (the same objects, JSON); `ragmark run` on the
    written set gives each config the mean select says the chosen questions have."""
    import json
    import shutil

    from support.cli import run_cli

    from ragmark.demo.tour import demo_path

    demo = demo_path()
    shutil.copy(demo / "questions.json", tmp_path / "set.json")
    for name, size in (("chunky", 120), ("tiny", 40)):
        (tmp_path / f"{name}.toml").write_text(
            f'name = "{name}"\nunit = "chunk"\n[chunker]\nname = "fixed"\nsize = {size}\n'
            'overlap = 0\n')
    hist = str(tmp_path / "h.sqlite")
    code, _, err = run_cli(["compare", "--dataset", str(tmp_path / "set.json"), "--corpus",
                            str(demo / "corpus"), "--configs", "sparse",
                            str(tmp_path / "chunky.toml"), str(tmp_path / "tiny.toml"),
                            "--history", hist, "--output", str(tmp_path / "cmp"),
                            "--quiet"], capsys)
    assert code == 0, err
    args = ["testset", "select", str(tmp_path / "set.json"), "--corpus", str(demo / "corpus"),
            "--budget", "3", "--metric", "mrr", "--history", hist]
    code, out, err = run_cli([*args, "--output", str(tmp_path / "small.json"), "--json"],
                             capsys)
    assert code == 0, err
    got = json.loads(out)
    assert got["metric"] == "mrr@10" and len(got["chosen"]) == 3
    original = {i["id"]: i for i in json.loads((tmp_path / "set.json").read_text())}
    written = json.loads((tmp_path / "small.json").read_text())
    assert [i["id"] for i in written] == [i for i in original if i in got["chosen"]]
    assert all(i == original[i["id"]] for i in written)
    per = json.loads((tmp_path / "cmp.json").read_text())["configs"]
    for c in ("sparse", "chunky", "tiny"):
        values = per[c]["per_query"]
        assert got["whole_set_means"][c] == pytest.approx(
            np.mean([v["mrr@10"] for v in values.values()]))
        assert got["subset_means"][c] == pytest.approx(
            np.mean([values[q]["mrr@10"] for q in got["chosen"]]))
    code, _, err = run_cli(["compare", "--dataset", str(tmp_path / "small.json"), "--corpus",
                            str(demo / "corpus"), "--configs", "sparse",
                            str(tmp_path / "chunky.toml"), str(tmp_path / "tiny.toml"),
                            "--metrics", "mrr@10", "--no-history", "--output",
                            str(tmp_path / "small_cmp"), "--quiet"], capsys)
    assert code == 0, err
    again = json.loads((tmp_path / "small_cmp.json").read_text())["configs"]
    for c in ("sparse", "chunky", "tiny"):
        assert again[c]["metrics"]["mrr@10"] == pytest.approx(got["subset_means"][c])
    assert [m["method"] for m in got["left_out_configs"]] == [
        "stratified", "random (mean of 10 seeds)"]
    # the pairs the whole set separates are named, each measure says how many it keeps
    from ragmark.analysis.anchors import separated_pairs

    configs = got["configs"]
    m = np.array([[per[c]["per_query"][q]["mrr@10"] for q in per[c]["per_query"]]
                  for c in configs])
    assert got["separated_pairs"] == [[configs[i], configs[j]]
                                      for i, j in separated_pairs(m)]
    for measure in got["left_out_configs"]:
        assert measure["pairs_separated"] == len(got["separated_pairs"])
    code, out, err = run_cli([*args, "--output", str(tmp_path / "small2.json")], capsys)
    assert code == 0 and f"separates {len(got['separated_pairs'])} of 3 pairs" in out
    # never replaces a file; a budget as large as the set is refused
    code, _, err = run_cli([*args, "--output", str(tmp_path / "small.json")], capsys)
    assert code == 2 and "exists" in err
    code, _, err = run_cli([*args[:-6], "--budget", "8", "--metric", "mrr", "--history",
                            hist, "--output", str(tmp_path / "x.json")], capsys)
    assert code == 2 and "a budget must be smaller" in err
    # a share of the questions: 40% of 8 is 3.2, so 3 — the same choice as --budget 3
    code, out, err = run_cli([*args[:-6], "--budget", "40%", "--metric", "mrr", "--history",
                              hist, "--output", str(tmp_path / "share.json"), "--json"],
                             capsys)
    assert code == 0, err
    assert json.loads(out)["chosen"] == got["chosen"] and json.loads(out)["budget"] == 3
    for bad in ("0", "0%", "100%", "ten", "-3"):
        code, _, err = run_cli([*args[:-6], "--budget", bad, "--metric", "mrr", "--history",
                                hist, "--output", str(tmp_path / "bad.json")], capsys)
        assert code == 2 and f"--budget {bad}: expected a count" in err, (bad, err)
        assert "Traceback" not in err and not (tmp_path / "bad.json").exists()


def test_the_pairs_the_whole_set_separates_and_those_the_estimates_keep():
    """20 questions, three configs: A passes all 20, B the first 10, C the first 9. A
    and B differ by 1 on 10 questions: mean 0.5, standard deviation sqrt(20 x 0.25 /
    19) = 0.513, t = 0.5 / (0.513 / sqrt(20)) = 4.36 on 19 degrees of freedom, p =
    0.00034; A and C by 1 on 11: t = 4.82, p = 0.00012; B and C on one question: mean
    0.05, sd sqrt(20 x 0.05 x 0.95 / 19) = 0.224, t = 1.0, p = 0.33. Holm over three
    pairs: 0.00036, 0.00068, 0.33. So the whole set separates (A, B) and (A, C), not
    (B, C). Estimates 0.9, 0.95, 0.5 keep (A, C) in order and reverse (A, B): one of
    the two."""
    from ragmark.analysis.anchors import pairs_kept, separated_pairs

    m = np.zeros((3, 20))
    m[0, :] = 1
    m[1, :10] = 1
    m[2, :9] = 1
    assert separated_pairs(m) == [(0, 1), (0, 2)]
    assert pairs_kept([0.9, 0.95, 0.5], m.mean(axis=1).tolist(), [(0, 1), (0, 2)]) == 1
    assert pairs_kept([0.9, 0.9, 0.5], m.mean(axis=1).tolist(), [(0, 1)]) == 0  # a tie
    names = ["A", "B", "C"]
    got = left_out(m, names, 4, "stratified", pairs=[(0, 1), (0, 2)])
    truth = m.mean(axis=1)
    est = [got["estimates"][n] for n in names]
    assert got["pairs_separated"] == 2
    assert got["pairs_kept"] == pytest.approx(
        sum((est[i] - est[j]) * (truth[i] - truth[j]) > 0 for i, j in [(0, 1), (0, 2)]) / 2)
    assert "pairs_kept" not in left_out(m, names, 4, "stratified")
    assert left_out(m, names, 4, "stratified", pairs=[])["pairs_kept"] is None
