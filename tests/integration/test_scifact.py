"""BM25 over real SciFact: quality bar and trec_eval agreement for every metric."""

from __future__ import annotations

import json
import math

import pytest

from ragmark.cli import main
from ragmark.config import load_config
from ragmark.data import load_dataset
from ragmark.report.trec_run import trec_lines
from ragmark.running.runner import run
from ragmark.running.task import Task

pytrec_eval = pytest.importorskip("pytrec_eval")

METRICS = {
    "precision@5": "P_5", "precision@10": "P_10", "recall@3": "recall_3",
    "recall@100": "recall_100", "hit@5": "success_5", "mrr": "recip_rank",
    "ndcg@10": "ndcg_cut_10", "ndcg": "ndcg", "map": "map", "r_precision": "Rprec",
}


@pytest.fixture(scope="module")
def sparse_report(scifact):
    ds = load_dataset(scifact)
    return ds, run(ds, load_config("sparse", top_k=100), Task(list(METRICS) + ["mrr@10"]))


def test_sparse_reaches_the_bm25s_quality_bar(sparse_report):
    _, report = sparse_report
    assert report.dataset["queries"] == 300
    assert report.dataset["documents"] == 5183
    assert report.value("ndcg@10") >= 0.680
    assert report.metrics["ndcg@10"].n == 300


def test_every_metric_equals_trec_eval_on_the_written_run_file(sparse_report, tmp_path):
    ds, report = sparse_report
    run_path = tmp_path / "run.trec"
    run_path.write_text("\n".join(trec_lines(report)) + "\n")
    with open(run_path) as f:
        trec_run = pytrec_eval.parse_run(f)
    qrels = {s.id: dict(s.truth.doc_grades) for s in ds.samples}
    measures = {"P.5,10", "recall.3,100", "success.5", "recip_rank", "ndcg_cut.10", "ndcg",
                "map", "Rprec"}
    theirs = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(trec_run)
    by_id = {q.id: q for q in report.queries}
    for qid, vals in theirs.items():
        for ours, key in METRICS.items():
            # map, ndcg, mrr and r_precision on a top-100 ranking are named map@100, ...
            got = by_id[qid].metrics[report.key(ours)].value
            assert got == pytest.approx(vals[key], abs=1e-9), (qid, ours)
    # and the aggregate is the mean over the 300 queries
    mean = math.fsum(v["ndcg_cut_10"] for v in theirs.values()) / len(theirs)
    assert report.value("ndcg@10") == pytest.approx(mean, abs=1e-12)


def test_mrr_at_k_equals_trec_eval_on_the_truncated_run(sparse_report):
    ds, report = sparse_report
    qrels = {s.id: dict(s.truth.doc_grades) for s in ds.samples}
    top10 = {q.id: {r.doc_id: r.score for r in q.retrieved[:10]} for q in report.queries}
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(top10)
    for q in report.queries:
        assert q.metrics["mrr@10"].value == pytest.approx(theirs[q.id]["recip_rank"], abs=1e-9)


def test_cli_run_on_scifact_slice(scifact, tmp_path, capsys):
    out = tmp_path / "res.json"
    with pytest.raises(SystemExit) as e:
        main(["run", "--dataset", str(scifact), "--max-queries", "20", "--output", str(out),
              "--include-details", "--quiet", "--run-file", str(tmp_path / "r.trec")])
    assert e.value.code == 0
    data = json.loads(out.read_text())
    assert data["dataset"]["queries"] == 20
    assert data["counts"]["recall@10"] == {"n": 20, "missing": 0}
    q = data["queries"][0]
    assert q["id"] == "1" and q["retrieved"][0]["rank"] == 1
    assert set(q["retrieved"][0]) >= {"rank", "id", "doc_id", "score"}
    assert len((tmp_path / "r.trec").read_text().splitlines()) == 20 * 10
    text = capsys.readouterr().out
    assert "Recall@10" in text and "nDCG@10" in text and "Query counts: total 20" in text
