"""Numbers and exit codes a user can trust: cutoffs deeper than the ranking, passages that
can never match, TREC ids with white space, output paths checked before any work, and the
gates (implicit, --fail-under, --max-missing)."""

from __future__ import annotations

import json
from pathlib import Path

from support.cli import run_cli

DEMO = Path(__file__).resolve().parents[3] / "src" / "ragmark" / "demo"
DEMO_ARGS = ["--dataset", str(DEMO / "questions.json"), "--corpus", str(DEMO / "corpus")]


def test_a_cutoff_deeper_than_top_k_is_refused_before_any_work(tmp_path, capsys):
    out = tmp_path / "r.json"
    code, stdout, err = run_cli(["run", *DEMO_ARGS, "--top-k", "3", "--metrics",
                                 "recall@3,recall@5,ndcg@10,mrr", "--output", str(out),
                                 "--quiet"], capsys)
    assert code == 2 and stdout == "" and not out.exists()
    assert err == (
        "error: config 'sparse' retrieves top_k = 3 items, but recall@5, ndcg@10 cut at 5, "
        "10\n"
        "such a metric would be computed on a ranking shorter than its cutoff and silently "
        "equal a shallower one. Fix: retrieve deeper (--top-k 10, or top_k = 10 in the "
        "config), ask for cutoffs within top_k (--metrics), or pass --allow-short-rankings to "
        "compute them anyway, marked in every output\n")


def test_allow_short_rankings_marks_the_metrics_everywhere(tmp_path, capsys):
    out = tmp_path / "r.json"
    code, stdout, _ = run_cli(["run", *DEMO_ARGS, "--top-k", "3", "--metrics",
                               "recall@3,recall@5,mrr", "--allow-short-rankings",
                               "--output", str(out), "--quiet"], capsys)
    assert code == 0
    data = json.loads(out.read_text())
    assert data["short_metrics"] == {"recall@5": 3}
    assert data["metrics"]["recall@5"] == data["metrics"]["recall@3"]
    note = ("recall@5 computed on rankings of top_k = 3 items, shorter than the cutoff "
            "(--allow-short-rankings): a cutoff past the ranking adds nothing, so these equal "
            "the metric at the ranking's depth")
    assert note in data["notes"]
    assert "Recall@5 †" in stdout and "Recall@3 †" not in stdout
    assert "† computed on rankings shorter than the cutoff (top_k = 3" in stdout


def test_a_grid_with_a_short_top_k_is_refused_before_the_first_config_runs(tmp_path, capsys):
    grid = tmp_path / "grid.toml"
    grid.write_text('name = "bm25"\n[grid]\ntop_k = [5, 10]\n')
    args = ["compare", *DEMO_ARGS, "--configs", str(grid), "--metrics", "mrr,ndcg@10",
            "--output", str(tmp_path / "c"), "--quiet"]
    code, _, err = run_cli(args, capsys)
    assert code == 2 and not (tmp_path / "c.json").exists()
    assert err.startswith("error: config 'bm25[top_k=5]' retrieves top_k = 5 items, but "
                          "ndcg@10 cuts at 10\n")
    code, stdout, _ = run_cli([*args, "--allow-short-rankings"], capsys)
    assert code == 0
    md = (tmp_path / "c.md").read_text()
    row = next(ln for ln in md.splitlines() if ln.startswith("| bm25[top_k=5] (baseline)"))
    assert row.split("|")[3].strip().endswith("†")  # nDCG@10, the second metric
    assert "`†` computed on rankings shorter than the cutoff (--allow-short-rankings; " \
           "bm25[top_k=5]: top_k = 5)." in md
    data = json.loads((tmp_path / "c.json").read_text())
    assert data["configs"]["bm25[top_k=5]"]["short_metrics"] == {"ndcg@10": 5}
    assert "short_metrics" not in data["configs"]["bm25[top_k=10]"]


def test_passages_too_short_to_match_warn_and_leave_retrieval_missing(tmp_path, capsys):
    items = [
        {"id": "tiny", "question": "What code?", "ground_truth_contexts": ["E11", "type 2"]},
        {"id": "mixed", "question": "When is metformin avoided?",
         "ground_truth_contexts": ["Metformin is avoided in severe renal impairment.", "E11"]},
        {"id": "fine", "question": "Which code is type 2 diabetes?",
         "ground_truth_contexts": ["The ICD-10 code for type 2 diabetes mellitus is E11."]},
    ]
    ds = tmp_path / "set.json"
    ds.write_text(json.dumps(items))
    out = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--dataset", str(ds), "--skip-generation", "--output",
                            str(out), "--include-details", "--quiet"], capsys)
    assert code == 0
    warning = ("ground-truth passages under 20 characters, which no chunk can match; "
               "questions with one: 2 (tiny, mixed)")
    assert err == f"warning: {warning}\n"
    data = json.loads(out.read_text())
    why = ("every ground-truth passage is under 20 characters, so none can match (the "
           "containment rule needs 20)")
    q = {x["id"]: x["metrics"] for x in data["queries"]}
    assert q["tiny"]["mrr@10"] == {"value": None, "reason": why}
    assert q["mixed"]["mrr@10"] == 1.0 and q["mixed"]["recall@10"] == 0.5  # "E11" never found
    assert data["counts"]["mrr@10"] == {"n": 2, "missing": 1, "reasons": {why: 1}}
    assert data["dataset"]["warnings"] == [warning]
    code, _, err = run_cli(["run", "--dataset", str(ds), "--strict", "--quiet"], capsys)
    assert code == 2 and err == (
        f"error: {ds}, item 0, field 'ground_truth_contexts[0]': ground-truth passage 0 has "
        "under 20 characters, so no chunk can match it (an error because of --strict)\n")


def test_trec_ids_with_white_space_are_refused_before_any_work(tmp_path, capsys):
    items = [{"id": "what is e11", "question": "Which code is type 2 diabetes?",
              "ground_truth_contexts": ["The ICD-10 code for type 2 diabetes is E11."]},
             {"id": "q 2", "question": "Renal?",
              "ground_truth_contexts": ["Metformin is avoided in severe renal impairment."]}]
    ds = tmp_path / "set.json"
    ds.write_text(json.dumps(items))
    out, run_file = tmp_path / "r.json", tmp_path / "run.trec"
    code, stdout, err = run_cli(["run", "--dataset", str(ds), "--run-file", str(run_file),
                                 "--output", str(out), "--quiet"], capsys)
    assert code == 2 and stdout == "" and not out.exists() and not run_file.exists()
    assert err == (
        "error: --run-file: 2 question ids contain white space or are empty, which a TREC run "
        "file cannot hold (trec_eval reads six columns split on white space): 'what is e11', "
        "'q 2'. Give them ids without spaces, or leave out --run-file\n")
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "renal notes.txt").write_text("Metformin is avoided in severe renal impairment.")
    (corpus / "codes.txt").write_text("The ICD-10 code for type 2 diabetes is E11.")
    ok = tmp_path / "ok.json"
    ok.write_text(json.dumps([dict(it, id=f"q{i}") for i, it in enumerate(items)]))
    code, _, err = run_cli(["run", "--dataset", str(ok), "--corpus", str(corpus),
                            "--run-file", str(run_file), "--quiet"], capsys)
    assert code == 2 and "1 document id contain white space" in err
    assert "'renal notes.txt'" in err and not run_file.exists()


def test_output_paths_are_checked_before_any_data_is_read(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    missing_data = str(tmp_path / "nowhere.json")  # never read: the path check comes first
    code, _, err = run_cli(["run", "--dataset", str(DEMO / "questions.json"), "--corpus",
                            str(DEMO / "corpus"), "--output", str(blocker / "r.json")],
                           capsys)
    assert code == 2
    assert err == f"error: --output {blocker / 'r.json'}: {blocker} is a file, not a folder\n"
    code, _, err = run_cli(["run", *DEMO_ARGS, "--output", str(tmp_path), "--quiet",
                            "--no-history"], capsys)
    assert code == 0 and (tmp_path / "results.json").is_file()  # as compare's DIR/eval.json
    code, _, err = run_cli(["run", *DEMO_ARGS, "--output", ""], capsys)
    assert code == 2 and err == "error: --output: the path is empty; give a file path\n"
    code, _, err = run_cli(["run", *DEMO_ARGS, "--run-file", str(blocker / "x" / "run.trec")],
                           capsys)
    assert code == 2 and err.startswith(f"error: --run-file {blocker / 'x' / 'run.trec'}: ")
    code, _, err = run_cli(["compare", "--dataset", missing_data, "--output",
                            str(blocker / "c")], capsys)
    assert code == 2  # click checks --dataset exists first; still no traceback
    assert "Traceback" not in err


def test_a_folder_where_no_file_can_be_made_is_refused_before_work(tmp_path, capsys,
                                                                    monkeypatch):
    """``os.access`` may say yes where nothing can be created (root on /proc): the check
    makes a temporary file to be sure."""
    import tempfile

    def refuse(*a, **kw):
        raise PermissionError("no")

    monkeypatch.setattr(tempfile, "TemporaryFile", refuse)
    out = tmp_path / "sub" / "r.json"
    code, _, err = run_cli(["run", *DEMO_ARGS, "--output", str(out)], capsys)
    assert code == 2
    assert err == (f"error: --output {out}: cannot write in the folder {tmp_path} "
                   "(permission denied)\n")
    assert not (tmp_path / "sub").exists()


def test_compare_output_dir_writes_files_inside_it(tmp_path, capsys):
    out_dir = tmp_path / "results"
    code, stdout, _ = run_cli(["compare", *DEMO_ARGS, "--output", f"{out_dir}/", "--quiet"],
                              capsys)
    assert code == 0
    assert sorted(p.name for p in out_dir.iterdir()) == ["eval.json", "eval.md"]
    assert (f"Results written to {out_dir / 'eval.json'} and {out_dir / 'eval.md'}"
            in " ".join(stdout.split()))


def test_fail_under_and_max_missing_gates(tmp_path, capsys):
    out = tmp_path / "r.json"
    args = ["run", *DEMO_ARGS, "--output", str(out), "--quiet"]
    code, _, err = run_cli([*args, "--fail-under", "mrr=0.5", "--max-missing",
                            "groundedness=0.5"], capsys)
    assert (code, err) == (0, "")
    # a gated metric is computed even when not a default: token_f1 needs expected answers
    # the keyword set lacks, so it got no value at all: the implicit gate fails
    code, _, err = run_cli([*args, "--max-missing", "token_f1=1"], capsys)
    assert code == 1 and err == ("gate failed: token_f1 got no value for any of 8 questions: "
                                 "no expected answer (8 questions)\n")
    data = json.loads(out.read_text())
    assert data["counts"]["token_f1"]["missing"] == 8
    kw = data["metrics"]["keyword_coverage"]
    code, _, err = run_cli([*args, "--fail-under", "keyword_coverage=0.9", "--fail-under",
                            "P@5=0.9", "--max-missing", "exact_match=0.1",
                            "--allow-missing"], capsys)
    assert code == 1 and out.exists()
    assert err.splitlines() == [
        f"gate failed: keyword_coverage = {kw:.4f} < 0.9 (--fail-under; over 8 questions)",
        f"gate failed: precision@5 = {data['metrics']['precision@5']:.4f} < 0.9 "
        "(--fail-under; over 8 questions)",
        "gate failed: exact_match is missing for 8 of 8 questions (100.0% > 10.0%, "
        "--max-missing): no expected answer (8 questions)"]
    code, _, err = run_cli([*args, "--fail-under", "mrr"], capsys)
    assert code == 2 and "--fail-under 'mrr': expected METRIC=VALUE" in err
    code, _, err = run_cli([*args, "--max-missing", "mrr=2"], capsys)
    assert code == 2 and "the fraction must be between 0 and 1" in err
    code, _, err = run_cli([*args, "--fail-under", "mrr=x"], capsys)
    assert code == 2 and "'x' is not a number" in err


def test_compare_gates_per_config(tmp_path, capsys):
    flat = tmp_path / "flat.toml"
    flat.write_text('[retriever]\nname = "bm25"\nb = 0.0\n')
    args = ["compare", *DEMO_ARGS, "--configs", "sparse", str(flat), "--output",
            str(tmp_path / "c"), "--quiet"]
    code, _, err = run_cli([*args, "--fail-under", "flat:mrr=1.01"], capsys)
    assert code == 1 and (tmp_path / "c.json").exists()
    assert err.startswith("gate failed: config 'flat': mrr@10 = ")
    assert len(err.splitlines()) == 1  # the gate named one config only
    code, _, err = run_cli([*args, "--fail-under", "mrr=1.01"], capsys)
    assert code == 1 and len(err.splitlines()) == 2
    code, _, err = run_cli([*args, "--fail-under", "nope:mrr=0.1"], capsys)
    assert code == 2 and "no config named 'nope'; the configs: sparse, flat" in err


def test_compare_output_with_json_suffix_is_the_stem(tmp_path, capsys):
    code, _, _ = run_cli(["compare", *DEMO_ARGS, "--output", str(tmp_path / "cmp.json"),
                          "--quiet"], capsys)
    assert code == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cmp.json", "cmp.md"]
