"""What a new user found (issue 25): trec_eval's mean on the command line, ..."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.beir import FRUIT, tiny_beir
from support.cli import run_cli

import ragmark


def _beir(root: Path) -> Path:
    """Three questions; q2's only judged document is not relevant."""
    return tiny_beir(root, {"q1": "apples orchard", "q2": "pears autumn",
                            "q3": "yellow bananas"},
                     {"q1": {"d1": 1}, "q2": {"d2": 0}, "q3": {"d3": 1}})


def test_mean_trec_eval_counts_a_question_without_a_relevant_document_as_zero(
        tmp_path, capsys):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    ds = _beir(tmp_path / "beir")
    args = ["run", "--dataset", str(ds), "--skip-generation", "--metrics", "mrr,map"]
    code, stdout, err = run_cli([*args, "--output", str(tmp_path / "a.json"),
                                 "--run-file", str(tmp_path / "run.trec"), "--quiet"], capsys)
    assert code == 0, err
    a = json.loads((tmp_path / "a.json").read_text())
    assert a["metrics"]["map@10"] == 1.0  # the corpus has 3 documents: map@10 is map
    assert a["counts"]["map@10"] == {"n": 2, "missing": 1,
                                  "reasons": {"no relevant target in the ground truth": 1}}
    code, stdout, err = run_cli([*args, "--mean", "trec_eval", "--output",
                                 str(tmp_path / "b.json"), "--quiet"], capsys)
    assert code == 0, err
    b = json.loads((tmp_path / "b.json").read_text())
    assert b["counts"]["map@10"] == {"n": 3, "missing": 0}
    assert b["config"]["mean"] == "trec_eval" and "mean" not in a["config"]
    # trec_eval's mean over the three judged questions, as pytrec_eval gives it
    run: dict[str, dict[str, float]] = {}
    for line in (tmp_path / "run.trec").read_text().splitlines():
        q, _, d, _, score, _ = line.split()
        run.setdefault(q, {})[d] = float(score)
    qrels = {"q1": {"d1": 1}, "q2": {"d2": 0}, "q3": {"d3": 1}}
    per = pytrec_eval.RelevanceEvaluator(qrels, {"map", "recip_rank"}).evaluate(run)
    assert set(per) == {"q1", "q2", "q3"}
    assert b["metrics"]["map@10"] == pytest.approx(sum(v["map"] for v in per.values()) / 3)
    assert b["metrics"]["mrr@10"] == pytest.approx(
        sum(v["recip_rank"] for v in per.values()) / 3)
    assert b["metrics"]["map@10"] == pytest.approx(2 / 3)
    assert ("--mean trec_eval: 1 question with judged documents but none relevant score 0 "
            "on the retrieval metrics and count in their means") in " ".join(stdout.split())


def _log(path: Path, hit: bool, n: int = 12) -> Path:
    gold = [f"Fact number {i} says the answer to question {i} is {i * 7}." for i in range(n)]
    other = "Bananas are yellow when they are ripe and ready to eat."
    path.write_text("".join(json.dumps({
        "id": f"q{i}", "question": f"What is the answer to question {i}?",
        "answer": str(i * 7), "contexts": [g if hit else other],
        "ground_truth_contexts": [g]}) + "\n" for i, g in enumerate(gold)))
    return path


def test_the_regression_gate_does_not_ratchet_down(tmp_path, capsys):
    """Issue 25 item 6: a run that fails its gate is recorded as failed and is never
    `last`; running the same regressed system again fails again, until accepted."""
    good = _log(tmp_path / "good.jsonl", True)
    bad = _log(tmp_path / "bad.jsonl", False)
    gate = ["--name", "bot", "--fail-on-regression", "mrr", "--quiet"]
    code, _, err = run_cli(["run", "--outputs", str(good), *gate, "--output",
                            str(tmp_path / "1.json")], capsys)
    assert code == 0, err  # no baseline yet: not gated
    for i in (2, 3):  # the regressed system, twice: both fail against run 1
        code, stdout, _ = run_cli(["run", "--outputs", str(bad), *gate, "--output",
                                   str(tmp_path / f"{i}.json")], capsys)
        assert code == 1
        assert "FAIL mrr vs run 1 (bot): 1.0000 -> 0.0000" in stdout
    code, stdout, _ = run_cli(["history", "--json"], capsys)
    assert [(r["id"], r["verdict"]) for r in json.loads(stdout)] == [
        (3, "failed"), (2, "failed"), (1, "passed")]
    code, stdout, _ = run_cli(["history"], capsys)
    assert "failed" in stdout and "passed" in stdout
    # accepting a failed run makes it the baseline: the same system then passes
    code, stdout, err = run_cli(["history", "accept", "3"], capsys)
    assert code == 0 and stdout.startswith("run 3 (bot) accepted"), err
    code, stdout, _ = run_cli(["run", "--outputs", str(bad), *gate, "--output",
                               str(tmp_path / "4.json")], capsys)
    assert code == 0 and "PASS mrr vs run 3 (bot): 0.0000 -> 0.0000" in stdout
    code, _, err = run_cli(["history", "accept", "1"], capsys)
    assert code == 2 and "run 1 did not fail its gates (verdict: passed)" in err


DOCS = FRUIT


def test_contexts_without_ids_are_found_in_the_corpus_by_their_text(tmp_path):
    """Issue 25 item 1: a pipeline returning the corpus texts verbatim, without ids, on
    an id-judged dataset scored 0.0 everywhere; now each text takes its document's id,
    and texts the corpus does not hold leave the metrics missing with the reason."""
    ds = _beir(tmp_path / "beir")
    ranked = {"apples orchard": ["d1", "d2"], "pears autumn": ["d3", "d2"],
              "yellow bananas": ["d2", "d3"]}

    def with_ids(q):
        return {"answer": "x", "contexts": [{"text": DOCS[d], "id": d} for d in ranked[q]]}

    def texts_only(q):  # verbatim, white space and case changed, no ids
        return {"answer": "x", "contexts": ["  " + DOCS[d].upper() + "\n" for d in ranked[q]]}

    def paraphrased(q):
        return {"answer": "x", "contexts": [f"something about {d}" for d in ranked[q]]}

    kw = {"metrics": ["mrr", "recall@1"], "history": False}
    a = ragmark.evaluate_pipeline(with_ids, ds, **kw)
    b = ragmark.evaluate_pipeline(texts_only, ds, **kw)
    # hand-worked: q1 finds d1 at 1; q3's relevant d3 is second; q2 has no relevant
    assert a.value("mrr") == pytest.approx((1 + 0.5) / 2)
    assert (b.value("mrr"), b.value("recall@1")) == (a.value("mrr"), a.value("recall@1"))
    assert [q.retrieved[0].doc_id for q in b.queries] == ["d1", "d3", "d2"]
    assert any(n.startswith("6 contexts without an id took the id of the corpus document")
               for n in b.notes)
    c = ragmark.evaluate_pipeline(paraphrased, ds, **kw)
    assert c.value("mrr") is None
    assert c.metrics["mrr"].reasons == {
        "contexts carry no ids and the ground truth is by id (no context's text is a corpus "
        "document's)": 3}
    compared = ragmark.compare_pipelines({"ids": with_ids, "paraphrased": paraphrased}, ds,
                                         compared=["mrr"], history=False)
    (row,) = compared.rows
    assert row.p_adjusted is None  # no question has both values: not a -100%


def test_small_things(tmp_path, capsys, server):
    """Issue 25 item 13: the results JSON is written with the other files' permissions;
    a base URL without /v1 gets a hint with its 404; 'an answer_correctness'."""
    import os

    from ragmark.text import article

    demo = Path(__file__).resolve().parents[3] / "src" / "ragmark" / "demo"
    args = ["run", "--dataset", str(demo / "questions.json"), "--corpus", str(demo / "corpus"),
            "--quiet", "--format", "json,md", "--output", str(tmp_path / "r.json")]
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
    mode = os.stat(tmp_path / "r.json").st_mode & 0o777
    assert mode == os.stat(tmp_path / "r.md").st_mode & 0o777 and mode != 0o600
    bare = server.url.removesuffix("/v1")
    code, _, err = run_cli([*args[:-2], "--output", str(tmp_path / "j.json"), "--metrics",
                            "faithfulness", "--llm-base-url", bare, "--llm-model", "test-model",
                            "--require-llm"], capsys)
    assert code == 2
    assert (f"HTTP 404 from {bare}/models" in err and "OpenAI-compatible servers usually serve "
            f"the API under /v1 (try --llm-base-url {bare}/v1)" in " ".join(err.split()))
    assert article("answer_correctness") == "an answer_correctness"


def test_a_change_on_fewer_questions_than_the_means_says_so(tmp_path):
    """Issue 25 item 11: '0.7244 | 0.3167 (n=5/28) (+0.0%)' showed a change computed on
    the paired questions beside means over different ones."""
    from ragmark.report.markdown import comparison_markdown

    ds = _beir(tmp_path / "beir")

    def full(q):
        return {"answer": "x", "contexts": [{"text": DOCS[d], "id": d}
                                            for d in ("d1", "d3", "d2")]}

    def flaky(q):
        if q.startswith("apples"):
            raise RuntimeError("down")
        return full(q)

    c = ragmark.compare_pipelines({"full": full, "flaky": flaky}, ds, compared=["mrr"],
                                  history=False)
    md = comparison_markdown(c)
    row = next(ln for ln in md.splitlines() if ln.startswith("| flaky"))
    # full: q1 1.0, q3 0.5 (0.75 over 2 of 3); flaky: q3 0.5 over 1; paired on q3: +0.0%
    assert "0.5000 (n=1/3)" in row and "(+0.0% on the 1 question both have)" in row
    assert "both have" not in next(ln for ln in md.splitlines() if ln.startswith("| full"))


def test_a_trec_run_file_is_scored_against_the_datasets_qrels(tmp_path, capsys):
    """Issue 25 item 12: score a TREC run file against qrels from the CLI."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    ds = _beir(tmp_path / "beir")
    lines = ["q1 Q0 d2 1 0.5 sys", "q1 Q0 d1 2 0.5 sys",  # a tie: d2 > d1 ranks first
             "q3 Q0 d2 1 2.0 sys", "q3 Q0 d3 2 1.0 sys", "q9 Q0 d1 1 1.0 sys"]
    run_file = tmp_path / "bm25.trec"
    run_file.write_text("\n".join(lines) + "\n")
    out = tmp_path / "r.json"
    code, stdout, err = run_cli(["run", "--run-file-in", str(run_file), "--dataset", str(ds),
                                 "--metrics", "mrr,ndcg@10,recall@1", "--output", str(out),
                                 "--quiet"], capsys)
    assert code == 0, err
    data = json.loads(out.read_text())
    assert data["config"]["name"] == "bm25" and data["config"]["source"] == "run_file"
    qrels = {"q1": {"d1": 1}, "q2": {"d2": 0}, "q3": {"d3": 1}}
    run = {"q1": {"d2": 0.5, "d1": 0.5}, "q3": {"d2": 2.0, "d3": 1.0}}
    per = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank", "ndcg_cut_10", "recall_1"}
                                         ).evaluate(run)
    for name, key in (("mrr", "recip_rank"), ("ndcg@10", "ndcg_cut_10"),
                      ("recall@1", "recall_1")):
        assert data["per_query"]["q1"][name] == pytest.approx(per["q1"][key], abs=1e-12)
        assert data["per_query"]["q3"][name] == pytest.approx(per["q3"][key], abs=1e-12)
    assert data["metrics"]["mrr"] == pytest.approx(0.5)  # q1 and q3 each 1/2
    notes = " ".join(data["notes"])
    assert "1 question of the run file are not in the dataset" in notes
    assert "1 of 3 questions retrieved nothing (the run file has no line for it)" in notes
    # bad lines name the file and line
    run_file.write_text("q1 Q0 d1 1 high sys\n")
    code, _, err = run_cli(["run", "--run-file-in", str(run_file), "--dataset", str(ds),
                            "--output", str(out), "--quiet"], capsys)
    assert code == 2 and f"{run_file}, line 1, field 'score': expected a number" in err
    code, _, err = run_cli(["run", "--run-file-in", str(run_file), "--output", str(out)],
                           capsys)
    assert code == 2 and "give --dataset" in err


def test_a_file_of_another_shape_is_named(tmp_path, capsys):
    run_file = tmp_path / "r.trec"
    run_file.write_text("q1 Q0 d1 1 1.0 x\n")
    code, _, err = run_cli(["run", "--dataset", str(run_file)], capsys)
    assert code == 2 and "this looks like a TREC run file: score it against a dataset with " \
        "--run-file-in FILE --dataset DATASET" in err
    logged = tmp_path / "log.jsonl"
    logged.write_text(json.dumps({"question": "q", "answer": "a", "contexts": ["c"]}) + "\n")
    code, _, err = run_cli(["run", "--dataset", str(logged)], capsys)
    assert code == 2 and "score them as logged outputs with --outputs" in err
    assert "--run-file-in a TREC run file (with --dataset)" in err


def test_logged_outputs_are_scored_against_a_datasets_ground_truth(tmp_path, capsys):
    """Issue 25 item 12: `--outputs LOG --dataset SET` joins the log to the set's
    questions (by id, else question text) and scores it with the set's qrels."""
    ds = tiny_beir(tmp_path / "beir", {"q1": "apples orchard", "q2": "pears autumn",
                                       "q3": "yellow bananas"},
                   {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 1, "d1": 0}})
    log = tmp_path / "today.jsonl"
    log.write_text("".join(json.dumps(x) + "\n" for x in [
        {"id": "q1", "question": "what grows in the orchard", "answer": "apples",
         "contexts": [{"text": "pears", "id": "d2"}, {"text": "apples", "id": "d1"}]},
        {"question": "  Yellow   BANANAS? ", "answer": "bananas",  # no id: by its text
         "contexts": [FRUIT["d1"], FRUIT["d3"]]},  # no ids: the corpus's, by their text
        {"question": "what is eggnog", "answer": "a drink", "contexts": []},
    ]))
    out = tmp_path / "r.json"
    code, stdout, err = run_cli(["run", "--outputs", str(log), "--dataset", str(ds),
                                 "--metrics", "mrr,recall@1", "--output", str(out),
                                 "--include-details", "--quiet", "--allow-missing"], capsys)
    assert code == 0, err
    data = json.loads(out.read_text())
    assert data["per_query"]["q1"]["mrr"] == 0.5  # d1 second
    assert data["per_query"]["q3"]["mrr"] == 0.5  # d3 second, found by its text
    assert data["per_query"]["q2"]["mrr"] is None
    assert data["counts"]["mrr"] == {"n": 2, "missing": 1, "reasons": {
        "the log has no output for this question": 1}}
    assert data["config"]["name"] == "today" and data["dataset"]["format"] == "beir"
    notes = " ".join(data["notes"])
    assert ("2 of 3 logged outputs joined the dataset's questions (1 by their question "
            "text, the rest by id); the dataset's ground truth scores them") in notes
    assert ("1 of 3 questions of the dataset have no logged output (the first: 'q2')"
            in notes)
    assert "1 logged output is left out: 1 join no question of the dataset" in notes
    assert "2 contexts without an id took the id of the corpus document" in notes
    # a log that joins nothing names the first question of each
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"question": "what is eggnog", "answer": "", "contexts": []})
                     + "\n")
    code, _, err = run_cli(["run", "--outputs", str(other), "--dataset", str(ds),
                            "--output", str(out), "--quiet"], capsys)
    assert code == 2 and "no line of the log joins a question of the dataset" in err
    assert "'apples orchard'" in err and "'what is eggnog'" in err
