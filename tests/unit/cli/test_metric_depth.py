"""Issue 25 item 4: a metric without a cutoff on ragmark's own ranking is named with the
ranking's depth (``map`` at --top-k 3 is ``map@3``, trec_eval's ``map_cut.3``), in every
output, and a gate or a test that names ``map`` finds it."""

from __future__ import annotations

import json

import pytest
from support.beir import beir_folder
from support.cli import run_cli

UNCUT = "map,mrr,ndcg,bpref,r_precision"


def _run_file(path) -> dict[str, dict[str, float]]:
    run: dict[str, dict[str, float]] = {}
    for line in path.read_text().splitlines():
        q, _, d, _, score, _ = line.split()
        run.setdefault(q, {})[d] = float(score)
    return run


def test_metrics_without_a_cutoff_are_named_with_the_depth_they_cover(tmp_path, capsys):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    ds, qrels = beir_folder(tmp_path / "beir")
    got = {}
    for k in (3, 60):  # 60: the whole corpus, every document ranked
        out, trec = tmp_path / f"{k}.json", tmp_path / f"{k}.trec"
        code, stdout, err = run_cli(
            ["run", "--dataset", str(ds), "--skip-generation", "--top-k", str(k), "--metrics",
             UNCUT, "--fail-under", "map=0.0", "--fail-under", "bpref=0.0", "--output",
             str(out), "--run-file", str(trec), "--format", "json,md"], capsys)
        assert code == 0, err
        data = json.loads(out.read_text())
        names = [f"{m}@{k}" for m in UNCUT.split(",")]
        assert list(data["metrics"]) == names
        assert data["at_depth"] == {m: f"{m}@{k}" for m in UNCUT.split(",")}
        text = " ".join(stdout.split())
        assert (f"config 'sparse' ranks {k} items, so the metrics without a cutoff are "
                f"computed over those {k} and named so: map as map@{k}, mrr as mrr@{k}") in text
        assert f"MAP@{k}" in text and "| MAP |" not in text
        md = (tmp_path / f"{k}.md").read_text()
        assert f"map@{k}" in md or f"MAP@{k}" in md
        # trec_eval on the run file ragmark wrote, which holds the top k of each question
        run = _run_file(trec)
        lens = [len(r) for r in run.values()]
        assert max(lens) <= k and (min(lens) == 3 if k == 3 else max(lens) > 3)
        per = pytrec_eval.RelevanceEvaluator(
            qrels, {"map", "recip_rank", "ndcg", "bpref", "Rprec", f"map_cut_{k}",
                    f"ndcg_cut_{k}"}).evaluate(run)
        for name, key in (("map", "map"), ("mrr", "recip_rank"), ("ndcg", "ndcg"),
                          ("bpref", "bpref"), ("r_precision", "Rprec"), ("map", f"map_cut_{k}"),
                          ("ndcg", f"ndcg_cut_{k}")):
            for q in qrels:
                assert data["per_query"][q][f"{name}@{k}"] == pytest.approx(
                    per[q][key], abs=1e-9), (name, q)
        got[k] = data["metrics"]
    # a gate that names map finds map@3, and says so
    code, _, err = run_cli(["run", "--dataset", str(ds), "--skip-generation", "--top-k",
                               "3", "--metrics", "map", "--fail-under", "map=0.99", "--output",
                               str(tmp_path / "g.json"), "--quiet"], capsys)
    assert code == 1
    assert f"map@3 = {got[3]['map@3']:.4f} < 0.99 (--fail-under; over 25 questions)" in err
    # the depth matters: the same ranking's first 3 against all 60
    assert got[3]["ndcg@3"] != pytest.approx(got[60]["ndcg@60"])
    assert got[3]["bpref@3"] != pytest.approx(got[60]["bpref@60"])


def test_the_default_table_says_its_depth_and_compare_names_them_alike(tmp_path, capsys):
    from ragmark.config import RunConfig
    from ragmark.data import load_dataset
    from ragmark.running.compare import compare
    from ragmark.running.task import Task

    ds, _ = beir_folder(tmp_path / "beir")
    out = tmp_path / "d.json"
    code, stdout, err = run_cli(["run", "--dataset", str(ds), "--skip-generation",
                                 "--top-k", "5", "--output", str(out), "--quiet"], capsys)
    assert code == 0, err
    data = json.loads(out.read_text())
    assert {"mrr@5", "map@5", "ndcg@5"} <= set(data["metrics"])
    assert not {"mrr", "map"} & set(data["metrics"])
    assert data["at_depth"] == {"mrr": "mrr@5", "map": "map@5"}
    assert not any("without a cutoff" in n for n in data["notes"])  # the names say it
    dataset = load_dataset(ds)
    configs = [RunConfig.model_validate({"name": n, "retriever": {"name": "bm25"}, "top_k": k})
               for n, k in (("deep", 8), ("shallow", 4))]
    c = compare(dataset, configs, Task(["map", "bpref@2"], skip_generation=True))
    for r in c.reports.values():
        assert list(r.metrics) == ["map@4", "bpref@2"]
        assert r.value("map") == r.metrics["map@4"].value
        assert ("the shallowest config ('shallow') ranks 4 items, so the metrics without a "
                "cutoff are computed over those 4") in r.notes[0]
    assert c.metrics == ["map@4", "bpref@2"]


def test_evaluate_and_run_files_keep_trec_evals_names(tmp_path, capsys):
    """A run file's depth is its own: map stays map, as trec_eval computes it."""
    from ragmark import evaluate

    got = evaluate({"q": {"a": 1, "b": 1}}, {"q": {"x": 3.0, "a": 2.0, "b": 1.0}},
                   ["map", "bpref@1"])
    assert got["map"] == pytest.approx((1 / 2 + 2 / 3) / 2)
    assert got["bpref@1"] == pytest.approx(0.0)  # no relevant document in the top 1
    ds, _ = beir_folder(tmp_path / "beir")
    trec = tmp_path / "sys.trec"
    trec.write_text("q0 Q0 d1 1 1.0 sys\n")
    out = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--run-file-in", str(trec), "--dataset", str(ds),
                            "--metrics", "map", "--output", str(out), "--quiet"], capsys)
    assert code == 0, err
    assert list(json.loads(out.read_text())["metrics"]) == ["map"]
