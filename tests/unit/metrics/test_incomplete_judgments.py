"""bpref and judged@k through `ragmark run` on a BEIR folder whose qrels judge some
documents not relevant (grade 0): the values equal trec_eval's on the run file ragmark
writes; a context set (passages, no judgments) records them as missing with the reason."""

from __future__ import annotations

import json

import pytest
from support.beir import beir_folder
from support.cli import run_cli

pytrec_eval = pytest.importorskip("pytrec_eval")

def test_bpref_and_judged_through_a_run_equal_trec_eval(tmp_path, capsys):
    folder, qrels = beir_folder(tmp_path / "set")
    out, trec = tmp_path / "r.json", tmp_path / "run.trec"
    code, _, err = run_cli(["run", "--dataset", str(folder), "--metrics",
                            "bpref,judged@5,judged@10,map", "--top-k", "20",
                            "--skip-generation", "--output", str(out), "--run-file", str(trec),
                            "--quiet"], capsys)
    assert code == 0, err
    run: dict[str, dict[str, float]] = {}
    for line in trec.read_text().splitlines():
        q, _, d, _, score, _ = line.split()
        run.setdefault(q, {})[d] = float(score)
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"bpref", "map"}).evaluate(run)
    every = {q: {d: 1 for d in j} for q, j in qrels.items()}
    judged = pytrec_eval.RelevanceEvaluator(every, {"P.5", "P.10"}).evaluate(run)
    per_query = json.loads(out.read_text())["per_query"]
    assert len(per_query) == 25
    nonzero = 0  # queries where the judged non-relevant documents change bpref
    for q, vals in per_query.items():
        # the run file holds the top 20: bpref@20 and map@20 are trec_eval's bpref and map
        assert vals["bpref@20"] == pytest.approx(theirs[q]["bpref"], abs=1e-9), q
        assert vals["map@20"] == pytest.approx(theirs[q]["map"], abs=1e-9), q
        assert vals["judged@5"] == pytest.approx(judged[q]["P_5"], abs=1e-9), q
        assert vals["judged@10"] == pytest.approx(judged[q]["P_10"], abs=1e-9), q
        nonzero += 0 < vals["bpref@20"] < 1  # a judged non-relevant document ranked above
    assert nonzero >= 3


def test_without_judgments_they_are_missing_with_the_reason(tmp_path, capsys):
    ds = tmp_path / "ctx.json"
    ds.write_text(json.dumps([{"question": "What is alpha?",
                               "ground_truth_contexts": ["alpha is the first letter"]}]))
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.txt").write_text("alpha is the first letter of the Greek alphabet.\n")
    out = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--dataset", str(ds), "--corpus", str(corpus), "--metrics",
                            "bpref,judged@5,mrr", "--skip-generation", "--output", str(out),
                            "--allow-missing", "--quiet"], capsys)
    assert code == 0, err
    counts = json.loads(out.read_text())["counts"]
    assert counts["mrr@10"]["n"] == 1
    for name in ("bpref@10", "judged@5"):
        assert counts[name]["n"] == 0
        assert list(counts[name]["reasons"]) == [
            "needs judged documents (qrels); this ground truth names relevant passages or "
            "sections only"]
