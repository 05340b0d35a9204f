"""Odd public data loads with a counted warning, and the metrics of a run over it equal
trec_eval's (pytrec_eval) on the collection as written: a judged document that is empty,
unreadable or absent from the corpus is a relevant target that is never retrieved."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from support.cli import run_cli

pytrec_eval = pytest.importorskip("pytrec_eval")

TREC = {"recall@3": "recall_3", "recall@10": "recall_10", "precision@5": "P_5",
        "mrr@10": "recip_rank", "ndcg@10": "ndcg_cut_10", "map@10": "map"}  # a 10-deep run
MEASURES = {"recall.3,10", "P.5", "recip_rank", "ndcg_cut.10", "map"}

DOCS = {
    "d1": ("Cats", "Cats purr when they are content and sometimes when they are hurt."),
    "d2": ("Dogs", "Dogs bark at strangers and wag their tails when happy."),
    "d3": ("Purring", "The purr of a cat comes from the larynx and the diaphragm."),
    "d4": ("Bees", "Bees make honey from the nectar of flowers in the summer."),
    "d5": ("Honey", "Honey never spoils; jars of honey were found in ancient tombs."),
    "d6": ("Wolves", "Wolves howl to talk with their pack across long distances."),
    "d7": ("Barking", "A dog may bark from fear, boredom or to warn of strangers."),
    "d8": ("Flowers", "Flowers make nectar to attract bees and other pollinators."),
}
QUERIES = {"q1": "why do cats purr", "q2": "why do dogs bark at strangers",
           "q3": "how do bees make honey from nectar"}
QRELS = [("q1", "d1", "2"), ("q1", "d3", "1"), ("q2", "d2", "1"), ("q2", "d7", "2"),
         ("q3", "d4", "1"), ("q3", "d5", "1"), ("q3", "d8", "1")]


def write_beir(root: Path, *, docs=DOCS, qrels=QRELS, trec: bool = False,
               gz: bool = False, int_ids: bool = False) -> Path:
    root.mkdir()
    (root / "qrels").mkdir()

    def ident(x: str) -> str | int:
        return int(x[1:]) if int_ids else x

    corpus = "".join(json.dumps({"_id": ident(d), "title": t, "text": x}) + "\n"
                     for d, (t, x) in docs.items())
    queries = "".join(json.dumps({"_id": ident(q), "text": t}) + "\n"
                      for q, t in QUERIES.items())
    for name, text in (("corpus.jsonl", corpus), ("queries.jsonl", queries)):
        if gz:
            with gzip.open(root / f"{name}.gz", "wt", encoding="utf-8") as f:
                f.write(text)
        else:
            (root / name).write_text(text, encoding="utf-8")
    if trec:
        lines = "".join(f"{ident(q)} 0 {ident(d)} {g}\n" for q, d, g in qrels)
        (root / "qrels" / "test.txt").write_text(lines)
    else:
        lines = "".join(f"{ident(q)}\t{ident(d)}\t{g}\n" for q, d, g in qrels)
        (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + lines)
    return root


def check_against_trec_eval(args: list[str], qrels: dict[str, dict[str, int]], tmp_path: Path,
                            capsys) -> tuple[dict, str]:
    """Run ragmark with a run file; every per-query metric equals pytrec_eval's on the
    qrels as written and ragmark's own run file."""
    out, run_file = tmp_path / "r.json", tmp_path / "run.trec"
    code, _, err = run_cli(["run", *args, "--metrics", ",".join(TREC), "--run-file",
                            str(run_file), "--output", str(out), "--include-details",
                            "--skip-generation", "--quiet"], capsys)
    assert code == 0, err
    data = json.loads(out.read_text())
    with run_file.open() as f:
        trec_run = pytrec_eval.parse_run(f)
    theirs = pytrec_eval.RelevanceEvaluator(qrels, MEASURES).evaluate(trec_run)
    ours = {q["id"]: q["metrics"] for q in data["queries"]}
    assert set(theirs) == set(ours)
    for qid, vals in theirs.items():
        for name, key in TREC.items():
            assert ours[qid][name] == pytest.approx(vals[key], abs=1e-9), (qid, name)
    return data, err


def trec_qrels(qrels=QRELS) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for q, d, g in qrels:
        out.setdefault(q, {})[d] = int(float(g))
    return out


def test_empty_documents_are_never_retrieved_but_stay_relevant(tmp_path, capsys):
    docs = {**DOCS, "d3": ("", ""), "d8": ("", " ")}
    folder = write_beir(tmp_path / "b", docs=docs)
    data, err = check_against_trec_eval(["--dataset", str(folder)], trec_qrels(), tmp_path,
                                        capsys)
    assert err == ("warning: empty documents left out of the index (kept in the ground "
                   'truth): 2 ("d3" (corpus.jsonl line 3), "d8" (corpus.jsonl line 8))\n')
    assert data["dataset"]["documents"] == 6
    q1 = next(q for q in data["queries"] if q["id"] == "q1")
    assert q1["metrics"]["recall@10"] == 0.5  # d3 is relevant and cannot be found


def test_judged_documents_missing_from_the_corpus(tmp_path, capsys):
    qrels = [*QRELS, ("q1", "d404", "1"), ("q2", "gone", "2")]
    folder = write_beir(tmp_path / "b", qrels=qrels)
    _, err = check_against_trec_eval(["--dataset", str(folder)], trec_qrels(qrels), tmp_path,
                                     capsys)
    assert err == ("warning: judged documents missing from the corpus, kept as relevant "
                   'targets that are never retrieved: 2 ("d404" (test.tsv line 9), "gone" '
                   "(test.tsv line 10))\n")


def test_integral_float_grades(tmp_path, capsys):
    qrels = [(q, d, f"{g}.0") for q, d, g in QRELS]
    folder = write_beir(tmp_path / "b", qrels=qrels)
    _, err = check_against_trec_eval(["--dataset", str(folder)], trec_qrels(qrels), tmp_path,
                                     capsys)
    assert err.startswith("warning: grades written as integral decimals (1.0), read as "
                          "integers: 7 (2.0 (test.tsv line 2), 1.0 (test.tsv line 3), ")


def test_integer_ids_trec_qrels_and_gzip(tmp_path, capsys):
    folder = write_beir(tmp_path / "b", int_ids=True, trec=True, gz=True)
    qrels = {q[1:]: {d[1:]: g for d, g in ds.items()} for q, ds in trec_qrels().items()}
    _, err = check_against_trec_eval(["--dataset", str(folder)], qrels, tmp_path, capsys)
    assert err == ("warning: integer ids read as strings: 11 (1 (queries.jsonl.gz line 1), "
                   "2 (queries.jsonl.gz line 2), 3 (queries.jsonl.gz line 3), ...)\n")


def test_a_folder_corpus_with_an_empty_and_a_non_utf8_file(tmp_path, capsys):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for d, (title, text) in DOCS.items():
        (corpus / f"{d}.txt").write_text(f"{title}. {text}", encoding="utf-8")
    (corpus / "d3.txt").write_text("")
    (corpus / "d4.txt").write_bytes("Bees make honey \u2014 caf\xe9".encode("cp1252"))
    items = [{"id": q, "question": text, "expected_keywords": ["x"],
              "must_be_grounded_in": [f"{d}.txt" for qq, d, _ in QRELS if qq == q]}
             for q, text in QUERIES.items()]
    ds = tmp_path / "set.json"
    ds.write_text(json.dumps(items))
    qrels = {q: {f"{d}.txt": 1 for qq, d, _ in QRELS if qq == q} for q in QUERIES}
    _, err = check_against_trec_eval(["--dataset", str(ds), "--corpus", str(corpus),
                                      "--config", str(whole(tmp_path))], qrels, tmp_path,
                                     capsys)
    assert err.splitlines() == [
        "warning: empty files left out of the index (kept in the ground truth): 1 (d3.txt)",
        "warning: files that are not UTF-8, skipped (give --encoding NAME to read them): 1 "
        "(d4.txt (byte offset 16))"]
    # with --encoding the file is read, and found
    code, _, err = run_cli(["run", "--dataset", str(ds), "--corpus", str(corpus), "--encoding",
                            "cp1252", "--metrics", "recall@10", "--skip-generation",
                            "--output", str(tmp_path / "e.json"), "--quiet"], capsys)
    assert code == 0 and "not UTF-8" not in err
    code, _, err = run_cli(["run", "--dataset", str(ds), "--corpus", str(corpus), "--strict",
                            "--quiet"], capsys)
    assert code == 2 and err == (f"error: {corpus / 'd3.txt'}: the file is empty; a document "
                                 "needs text (an error because of --strict)\n")


def whole(tmp_path: Path) -> Path:
    cfg = tmp_path / "whole.toml"
    cfg.write_text('name = "whole"\n[chunker]\nname = "whole"\n')
    return cfg
