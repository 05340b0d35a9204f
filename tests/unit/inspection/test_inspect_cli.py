"""`ragmark inspect` on a fixed results file: the text matches golden files exactly, the
JSON holds the real values, compare files work, bad input is exit 2 with the place.

The fixture ``run_results.json`` is `ragmark run --include-details` on the demo set (see
``regenerate_fixture.py``). Regenerate the goldens after an intended change with
``RAGMARK_UPDATE_GOLDEN=1 pytest tests/unit/inspection`` and review the diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from support.cli import run_cli

from ragmark.cli import main
from ragmark.demo import demo_path

HERE = Path(__file__).parent
GOLDEN = HERE / "golden"


@pytest.fixture
def in_fixtures(monkeypatch):
    """Run from the fixture folder (paths in the output are relative), 100 columns, no
    colour."""
    monkeypatch.chdir(HERE)
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.delenv("FORCE_COLOR", raising=False)


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("RAGMARK_UPDATE_GOLDEN"):
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")


@pytest.mark.parametrize("args, golden", [
    (["q3"], "inspect_q3.txt"),
    (["--failures", "--k", "1"], "failures_k1.txt"),
])
def test_text_output_matches_golden(args, golden, in_fixtures, capsys):
    code, out, err = run_cli(["inspect", "run_results.json", *args], capsys)
    assert (code, err) == (0, "")
    check_golden(golden, out)


def test_query_json_has_truth_matches_answer_and_metrics(in_fixtures, capsys):
    code, out, _ = run_cli(["inspect", "run_results.json", "q3", "--json"], capsys)
    assert code == 0
    data = json.loads(out)
    assert data["question"] == "When is an answer flagged as ungrounded?"
    assert data["ground_truth"]["targets"] == {"answer_evaluation.txt": 1}
    assert data["ground_truth"]["found_at_rank"] == {"answer_evaluation.txt": 2}
    assert data["ground_truth"]["expected_keywords"] == ["threshold", "stop words", "retrieved"]
    first, second = data["retrieved"][:2]
    assert (first["rank"], first["relevant"], first["rule"]) == (1, False, None)
    assert (second["rank"], second["relevant"], second["rule"]) == (2, True, "id")
    assert second["targets"] == ["answer_evaluation.txt"]
    assert second["why"] == "its document is a ground-truth document"
    assert data["answer"].startswith("Bananas ripen faster")
    assert len(data["contexts"]) == 2
    assert data["metrics"]["mrr"] == 0.5
    assert data["metrics"]["groundedness"] == {"value": 0.0, "ungrounded": True}
    assert data["metrics"]["faithfulness"]["value"] == 0.0
    assert data["metrics"]["faithfulness"]["unsupported"] == [
        "Bananas ripen faster next to apples.", "Ethylene gas makes bananas ripen."]


def test_a_judge_failure_shows_its_reason_and_raw_output(in_fixtures, capsys):
    code, out, _ = run_cli(["inspect", "run_results.json", "q4"], capsys)
    assert code == 0
    flat = " ".join(out.replace("│", " ").split())  # table cells wrap over lines
    assert "missing: faithfulness.claims: unusable judge output after a re-ask" in flat
    assert "'Sorry, I cannot judge that.'" in flat


def test_text_from_the_file_is_printed_literally_and_old_files_still_work(tmp_path, capsys):
    data = json.loads((HERE / "run_results.json").read_text(encoding="utf-8"))
    q = data["queries"][3]
    q["id"], q["answer"] = "[bold]q4", "See [1] and [/INST] here."
    q["metrics"]["faithfulness"]["raw"] = "[/x] nonsense"
    del q["ground_truth"]  # written before results kept the ground truth
    p = tmp_path / "r.json"
    p.write_text(json.dumps(data))
    code, out, err = run_cli(["inspect", str(p), "[bold]q4"], capsys)
    assert (code, err) == (0, "")
    flat = " ".join(out.replace("│", " ").split())
    assert "Question [bold]q4 ·" in flat and "See [1] and [/INST] here." in flat
    assert "(judge output: '[/x] nonsense')" in flat
    assert "Ground truth not recorded in this file" in flat


def test_failures_json_counts_each_kind_with_its_cause(in_fixtures, capsys):
    code, out, _ = run_cli(["inspect", "run_results.json", "--failures", "--k", "1",
                            "--json"], capsys)
    assert code == 0
    data = json.loads(out)
    s = data["summary"]
    assert (s["no_hit"]["failures"], s["no_hit"]["checked"]) == (2, 8)
    assert s["no_hit"]["causes"] == {"ranking": 2}
    assert (s["ungrounded"]["failures"], s["ungrounded"]["causes"]) == (2, {"generation": 2})
    assert (s["low_faithfulness"]["failures"], s["low_faithfulness"]["checked"]) == (2, 6)
    assert (s["judge_failure"]["failures"], s["judge_failure"]["checked"]) == (1, 8)
    got = [(f["id"], f["kind"]) for f in data["failures"]]
    assert got == [("q3", "no_hit"), ("q3", "ungrounded"), ("q3", "low_faithfulness"),
                   ("q4", "judge_failure"), ("q5", "low_faithfulness"), ("q6", "ungrounded"),
                   ("q7", "no_hit")]
    q5 = data["failures"][4]
    assert q5["fact"] == ("faithfulness 0.333: 2 of 3 claims unsupported by the retrieved "
                          "context")


def test_thresholds_and_depth_change_what_fails(in_fixtures, capsys):
    code, out, _ = run_cli(["inspect", "run_results.json", "--failures",
                            "--faithfulness-below", "0.3", "--json"], capsys)
    data = json.loads(out)
    # k 10 but the run retrieved 5 per question: the top 5 are checked, all have a hit
    assert (data["k"], data["checked_depth"]) == (10, 5)
    assert data["summary"]["no_hit"]["failures"] == 0
    assert [f["id"] for f in data["failures"] if f["kind"] == "low_faithfulness"] == ["q3"]
    code, out, _ = run_cli(["inspect", "run_results.json", "--failures"], capsys)
    assert "the run retrieved 5 items per question: the top 5 are checked, not the top 10" \
        in out


@pytest.fixture(scope="module")
def compare_file(tmp_path_factory):
    """`ragmark compare` of two configs on the demo set (module scope: outside the
    autouse fixture, so its caches are pointed at a temporary home here)."""
    tmp = tmp_path_factory.mktemp("cmp")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RAGMARK_HOME", str(tmp / "home"))
        return _compare_file(tmp)


def _compare_file(tmp):
    weak = tmp / "weak.toml"
    weak.write_text('name = "weak"\nunit = "chunk"\n[chunker]\nname = "fixed"\nsize = 120\n'
                    'overlap = 0\n[retriever]\nname = "bm25"\nk1 = 5.0\nb = 1.0\n')
    with pytest.raises(SystemExit) as e:
        main(["compare", "--dataset", str(demo_path() / "questions.json"), "--corpus",
              str(demo_path() / "corpus"), "--configs", "sparse", str(weak), "--output",
              str(tmp / "cmp"), "--resamples", "200", "--no-history", "--quiet"])
    assert e.value.code == 0
    return tmp / "cmp.json"


def test_compare_file_defaults_to_its_baseline_and_says_so(compare_file, capsys):
    code, out, _ = run_cli(["inspect", str(compare_file), "q3", "--json"], capsys)
    data = json.loads(out)
    assert data["source"] == "config 'sparse' of a comparison of sparse (baseline), weak"
    assert data["metrics"]["mrr@10"] == 1.0
    assert "--include-details" in data["note"] and "question" not in data


def test_compare_file_failures_per_config(compare_file, capsys):
    code, out, _ = run_cli(["inspect", str(compare_file), "--failures", "--k", "1",
                            "--config-name", "weak", "--json"], capsys)
    assert code == 0
    data = json.loads(out)
    assert [(f["id"], f["fact"], f["cause"]) for f in data["failures"]] == [
        ("q3", "first relevant item at rank 2", "ranking"),
        ("q7", "first relevant item at rank 2", "ranking")]
    assert "not_checked" in data["summary"]["judge_failure"]
    code, _, err = run_cli(["inspect", str(compare_file), "--failures", "--config-name", "nope"],
                           capsys)
    assert code == 2 and "no configuration 'nope'" in err and "sparse, weak" in err


def test_a_run_without_details_asks_for_include_details(tmp_path, capsys):
    out = tmp_path / "r.json"
    code, _, _ = run_cli(["run", "--dataset", str(demo_path() / "questions.json"),
                          "--corpus", str(demo_path() / "corpus"), "--output", str(out),
                          "--quiet"], capsys)
    assert code == 0
    code, stdout, err = run_cli(["inspect", str(out), "q1"], capsys)
    assert code == 2 and stdout == ""
    assert err == (f"error: {out}: has no per-query details (questions, retrieved items, "
                   "answers); rerun `ragmark run ... --include-details` to keep them\n")


def test_bad_files_and_usage_are_exit_2_naming_the_place(tmp_path, in_fixtures, capsys):
    data = json.loads((HERE / "run_results.json").read_text(encoding="utf-8"))
    data["queries"][2]["retrieved"][1]["rank"] = "two"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    code, _, err = run_cli(["inspect", str(bad), "q1"], capsys)
    assert code == 2
    assert err == (f"error: {bad}, item queries[2], field 'retrieved[1].rank': expected an "
                   'integer, got "two"\n')
    broken = tmp_path / "broken.json"
    broken.write_text('{"metrics": {}\n"config": 1}')
    code, _, err = run_cli(["inspect", str(broken), "q1"], capsys)
    assert code == 2 and f"{broken}, line 2: invalid JSON" in err
    other = tmp_path / "other.json"
    other.write_text('[1, 2]')
    code, _, err = run_cli(["inspect", str(other), "q1"], capsys)
    assert code == 2 and "not a ragmark results file" in err
    other.write_text('{"top_k": 3, "prompt": {}, "metric_names": [], "configs": {}}')
    code, _, err = run_cli(["inspect", str(other), "q1"], capsys)
    assert code == 2 and "a `ragmark label` file holds passage labels" in err
    code, _, err = run_cli(["inspect", "run_results.json", "q99"], capsys)
    assert code == 2 and 'no question with id "q99"; the file has q1, q2' in err
    code, _, err = run_cli(["inspect", "run_results.json"], capsys)
    assert code == 2 and "give either a QUERY_ID or --failures" in err
    code, _, err = run_cli(["inspect", "run_results.json", "q1", "--k", "3"], capsys)
    assert code == 2 and "--k applies to --failures" in err
    code, _, err = run_cli(["inspect", "run_results.json", "q1", "--config", "x"], capsys)
    assert code == 2 and "is a run of config 'weak-bm25-llm'" in err
    assert "warning: --config is renamed --config-name" in err  # the old name, one release
    code, _, err = run_cli(["inspect", "run_results.json", "q1", "--config-name", "x"],
                           capsys)
    assert code == 2 and "is a run of config 'weak-bm25-llm'" in err
    assert "renamed" not in err  # the new name warns of nothing
    code, _, err = run_cli(["inspect", str(tmp_path / "none.json"), "q1"], capsys)
    assert code == 2 and "none.json: no such file" in err
    assert "Traceback" not in err
