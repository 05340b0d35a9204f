"""`ragmark review`: Cohen's kappa equals scikit-learn's (the oracle), the export draws a
reproducible sample, and the agreement CSV is read strictly, naming row and column."""

from __future__ import annotations

import csv
import json
import math
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score

from ragmark.analysis.inspection import load_results
from ragmark.analysis.review import (
    cohen_kappa,
    export_sample,
    join_contexts,
    kappa_band,
    parse_label,
    read_agreement,
)
from ragmark.cli import main
from ragmark.errors import ConfigError, DataError

FIXTURE = Path(__file__).parent / "run_results.json"


def sklearn_kappa(a, b):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(cohen_kappa_score(a, b))


@pytest.mark.parametrize("a, b", [
    ([1, 1, 0, 0], [1, 0, 0, 0]),
    ([True, False, True, True, False, True], [True, False, False, True, True, True]),
    (["yes", "no", "no", "yes", "no"], ["no", "yes", "yes", "no", "yes"]),  # all disagree
    (["a", "b", "c", "a", "b", "c", "a"], ["a", "b", "c", "c", "b", "a", "a"]),
    ([1, 0, 1, 0], [1, 0, 1, 0]),
    ([1, 1, 1, 1, 1], [1, 0, 1, 1, 1]),  # one rater constant: kappa 0, defined
])
def test_kappa_equals_sklearn_on_known_cases(a, b):
    got = cohen_kappa(a, b)
    assert got.value == pytest.approx(sklearn_kappa(a, b), abs=1e-12)


def test_kappa_by_hand():
    got = cohen_kappa([1, 1, 0, 0], [1, 0, 0, 0])
    assert got.value == 0.5  # p_o 0.75, p_e 0.5
    assert dict(got.details) == {"observed": 0.75, "expected": 0.5}
    assert cohen_kappa(["x", "y"], ["y", "x"]).value == -1.0


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 40).flatmap(lambda n: st.tuples(
    st.lists(st.sampled_from(["yes", "no", "maybe"]), min_size=n, max_size=n),
    st.lists(st.sampled_from(["yes", "no", "maybe"]), min_size=n, max_size=n))))
def test_kappa_equals_sklearn_on_generated_labels(pair):
    a, b = pair
    expected = sklearn_kappa(a, b)
    got = cohen_kappa(a, b)
    if math.isnan(expected):  # one label throughout from both raters
        assert got.value is None and "undefined" in (got.reason or "")
        assert len(set(a) | set(b)) == 1
    else:
        assert got.value == pytest.approx(expected, abs=1e-12)
        assert cohen_kappa(b, a).value == pytest.approx(got.value, abs=1e-12)


def test_kappa_with_one_label_throughout_is_missing_with_the_reason():
    got = cohen_kappa(["yes"] * 4, ["yes"] * 4)
    assert got.value is None
    assert got.reason == ("kappa is undefined: both raters gave all 4 items the same label "
                          "('yes'), so chance agreement is 1")
    assert dict(got.details) == {"observed": 1.0, "expected": 1.0}
    assert cohen_kappa([], []).reason == "no item has both labels"
    with pytest.raises(ValueError):
        cohen_kappa([1], [1, 0])


def test_labels_and_bands():
    assert [parse_label(c, 0.5) for c in ["Yes", " no ", "TRUE", "0.5", "0.49", "1", ""]] == [
        True, False, True, True, False, True, None]
    assert parse_label("0.7", 0.8) is False
    with pytest.raises(ValueError, match="got \"4\""):
        parse_label("4", 0.5)
    with pytest.raises(ValueError, match="got \"maybe\""):
        parse_label("maybe", 0.5)
    assert [kappa_band(k) for k in (-0.1, 0.0, 0.3, 0.5, 0.7, 0.9)] == [
        "poor", "slight", "fair", "moderate", "substantial", "almost perfect"]


def test_export_draws_a_reproducible_sample_in_file_order():
    res = load_results(FIXTURE)
    one = export_sample(res, 3, seed=7)
    assert one.metric == "faithfulness"  # the first judge metric the file has
    assert (one.eligible, one.left_out) == (6, {"faithfulness missing": 2})
    ids = [r.id for r in one.rows]
    assert ids == sorted(ids, key=lambda i: int(i[1:])) and len(ids) == 3
    assert [r.id for r in export_sample(res, 3, seed=7).rows] == ids
    draws = {tuple(r.id for r in export_sample(res, 3, seed=s).rows) for s in range(10)}
    assert len(draws) > 1
    every = export_sample(res, 50, metric="groundedness")
    assert [r.id for r in every.rows] == [f"q{i}" for i in range(1, 9)]
    assert every.rows[2].judge == 0.0
    with pytest.raises(ConfigError, match="no metric 'nope' in .* it has recall@3"):
        export_sample(res, 3, metric="nope")


def test_contexts_are_numbered_one_per_paragraph():
    assert join_contexts(["first\n\npassage ", "second"]) == "[1] first passage\n\n[2] second"


def run_cli(args, capsys):
    with pytest.raises(SystemExit) as e:
        main(args)
    out = capsys.readouterr()
    return e.value.code, out.out, out.err


def test_export_cli_writes_the_csv_and_keeps_annotations_safe(tmp_path, capsys):
    out = tmp_path / "review.csv"
    code, stdout, _ = run_cli(["review", "export", str(FIXTURE), "--rows", "2", "--seed",
                               "3", "--output", str(out)], capsys)
    assert code == 0 and "Wrote 2 answers" in stdout
    rows = list(csv.DictReader(out.open(encoding="utf-8", newline="")))
    assert list(rows[0]) == ["id", "question", "answer", "contexts", "expected_answer",
                             "metric", "judge", "human"]
    expected = export_sample(load_results(FIXTURE), 2, seed=3).rows
    assert [r["id"] for r in rows] == [r.id for r in expected]
    assert all(r["human"] == "" and r["metric"] == "faithfulness" for r in rows)
    assert [float(r["judge"]) for r in rows] == pytest.approx([r.judge for r in expected],
                                                              abs=1e-6)
    assert rows[0]["contexts"].startswith("[1] ") and "\n\n[2] " in rows[0]["contexts"]
    code, _, err = run_cli(["review", "export", str(FIXTURE), "--sample", "2", "--output",
                            str(out)], capsys)  # the former name of --rows, for one release
    assert code == 2 and "exists (it may hold annotations)" in err
    assert "warning: --sample is renamed --rows" in err
    code, _, err = run_cli(["review", "export", str(FIXTURE), "--output", str(out)], capsys)
    assert code == 2 and "Missing option '--rows'" in err


def write_csv(path, rows, header=("id", "question", "answer", "contexts", "metric", "judge",
                                  "human")):
    with path.open("w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    return path


def test_agreement_binarises_scores_and_skips_empty_cells(tmp_path):
    p = write_csv(tmp_path / "a.csv", [
        ["q1", "?", "a", "[1] x\n\n[2] y", "faithfulness", "1", "yes"],
        ["q2", "?", "a", "c", "faithfulness", "0.333333", "no"],
        ["q3", "?", "a", "c", "faithfulness", "0.5", "no"],
        ["q4", "?", "a", "c", "faithfulness", "0", "No"],
        ["q5", "?", "a", "c", "faithfulness", "0.9", ""],
        ["q6", "?", "a", "c", "faithfulness", "", "yes"],
    ])
    a = read_agreement(p)
    # human yes,no,no,no against judge yes,no,yes,no
    assert (a.n, a.agree, a.raw) == (4, 3, 0.75)
    assert a.kappa.value == pytest.approx(sklearn_kappa([1, 0, 0, 0], [1, 0, 1, 0]))
    assert (a.skipped_no_human, a.skipped_no_judge) == (1, 1)
    assert a.confusion == {"human yes": {"judge yes": 1},
                           "human no": {"judge no": 2, "judge yes": 1}}
    assert read_agreement(p, threshold=0.6).agree == 4
    assert a.metrics == ["faithfulness"]


def test_agreement_cli_text_json_and_the_undefined_kappa(tmp_path, capsys):
    p = write_csv(tmp_path / "a.csv", [["q1", "?", "a", "c", "m", "1", "yes"],
                                       ["q2", "?", "a", "c", "m", "0.8", "y"]])
    code, out, _ = run_cli(["review", "agreement", str(p)], capsys)
    assert code == 0
    assert "raw agreement  1.000 (2 of 2)" in out
    assert ("Cohen's kappa  missing: kappa is undefined: both raters gave all 2 items the "
            "same label ('yes'), so chance agreement is 1") in " ".join(out.split("\n"))
    code, out, _ = run_cli(["review", "agreement", str(p), "--json"], capsys)
    data = json.loads(out)
    assert data["kappa"] is None and data["kappa_missing"].startswith("kappa is undefined")
    assert data["raw_agreement"] == 1.0 and data["rows"] == 2


def test_bad_csv_names_line_row_and_column(tmp_path, capsys):
    p = write_csv(tmp_path / "a.csv", [
        ["q1", "?", "multi\nline\nanswer", "c", "m", "1", "yes"],
        ["q2", "?", "a", "c", "m", "0.2", "maybe"],
    ])
    with pytest.raises(DataError) as e:
        read_agreement(p)
    assert str(e.value) == (f"{p}, line 5, field 'human': row 2 (id \"q2\"): expected yes/no "
                            "(correct, good, pass, relevant, supported, true, y, yes or bad, "
                            "fail, false, incorrect, irrelevant, n, no, unsupported) or a "
                            "score between 0 and 1, got \"maybe\"")
    p = write_csv(tmp_path / "b.csv", [["q1", "1", "yes"]], header=("id", "judge", "answer"))
    code, _, err = run_cli(["review", "agreement", str(p)], capsys)
    assert code == 2 and f"{p}, line 1, field 'human': no 'human' column" in err
    p = write_csv(tmp_path / "c.csv", [["q1", "1"]], header=("id", "judge", "human"))
    with pytest.raises(DataError, match="line 2: row 1 has 2 cells, the header has 3"):
        read_agreement(p)
    empty = tmp_path / "d.csv"
    empty.write_text("")
    with pytest.raises(DataError, match="the file is empty"):
        read_agreement(empty)
    quoted = tmp_path / "e.csv"
    quoted.write_text('id,judge,human\nq1,"1"x,yes\n')
    with pytest.raises(DataError, match="not a valid CSV"):
        read_agreement(quoted)


def test_export_from_a_label_file_reviews_its_passages(tmp_path, capsys, server):
    from support.fake_llm_server import Reply

    from ragmark.demo import demo_path

    def yes_for_rag(body):  # the judge says YES to passages that mention a retriever
        text = "YES" if "retriever" in body["messages"][-1]["content"] else "NO"
        return Reply(body={"id": "x", "object": "chat.completion", "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}}]})

    server.rule = yes_for_rag
    code, _, _ = run_cli(["label", "--dataset", str(demo_path() / "questions.json"),
                          "--corpus", str(demo_path() / "corpus"), "--top-k", "3",
                          "--max-queries", "3", "--output", str(tmp_path / "lab"),
                          "--llm-base-url", server.url, "--llm-model", "test-model",
                          "--quiet"], capsys)
    assert code == 0
    labels = json.loads((tmp_path / "lab.json").read_text(encoding="utf-8"))
    passages = {f"{q['id']}@{p['rank']}": p for q in labels["configs"]["sparse"]["queries"]
                for p in q["passages"]}
    out = tmp_path / "lab.csv"
    code, stdout, _ = run_cli(["review", "export", str(tmp_path / "lab.json"), "--rows",
                               "4", "--output", str(out)], capsys)
    assert code == 0 and "Wrote 4 passages" in stdout
    assert "relevance labels of config 'sparse'" in stdout
    rows = list(csv.DictReader(out.open(encoding="utf-8", newline="")))
    assert len(rows) == 4 and all(r["metric"] == "relevance_label" for r in rows)
    for r in rows:
        p = passages[r["id"]]
        assert r["judge"] == str(p["label"])
        assert r["judge"] == ("1" if "retriever" in p["text"] else "0")
        assert r["contexts"] == "[1] " + " ".join(p["text"].split())
    code, _, err = run_cli(["review", "export", str(tmp_path / "lab.json"), "--rows", "4",
                            "--metric", "faithfulness", "--output", str(tmp_path / "x.csv")],
                           capsys)
    assert code == 2 and "its judge column is the relevance label" in err
    labels["configs"]["sparse"]["queries"][1]["passages"][0]["label"] = "yes"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(labels))
    code, _, err = run_cli(["review", "export", str(bad), "--rows", "4", "--output",
                            str(tmp_path / "y.csv")], capsys)
    assert code == 2
    assert err == (f"error: {bad}, item configs.sparse.queries[1], field 'passages[0].label': "
                   'expected 0, 1 or an object with value null, got "yes"\n')
