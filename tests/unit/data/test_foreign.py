"""Other tools' files read as ragmark's (issue 24, item 1): RAGAS evaluation datasets
(JSONL and CSV, with and without responses), LlamaIndex's LabelledRagDataset and
DeepEval goldens and test cases, each file written by the real library (foreign/README.md);
odd rows load with a counted warning, --strict refuses them, a row without a question is
an error naming the row and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import run_cli
from support.doors import isolated

from ragmark.data import load_dataset
from ragmark.data.leniency import Leniency
from ragmark.data.outputs import load_outputs
from ragmark.errors import DataError

HERE = Path(__file__).parent / "foreign"
P1 = "BM25 ranks documents by term frequency and inverse document frequency."
P2 = "A reranker reorders the candidate passages with a stronger cross-encoder model."
QUESTIONS = ["What does BM25 rank documents by?", "What does a reranker reorder?"]
EXPECTED = ["term frequency and inverse document frequency", "the candidate passages"]


@pytest.mark.parametrize("name, fmt", [
    ("ragas_set.jsonl", "ragas"), ("ragas_set.csv", "ragas"),
    ("ragas_outputs.csv", "ragas"), ("rag_dataset.json", "llamaindex"),
    ("deepeval_goldens.json", "deepeval"), ("deepeval_goldens.csv", "deepeval")])
def test_an_evaluation_set_in_each_format(name, fmt):
    ds = load_dataset(HERE / name)
    assert ds.format == fmt and not ds.warnings
    assert [s.question for s in ds.samples] == QUESTIONS
    assert [s.expected_answer for s in ds.samples] == EXPECTED
    assert [list(s.truth.passages) for s in ds.samples] == [[P1], [P2]]
    # the gold contexts make the corpus, as in a context set
    assert sorted(d.text for d in ds.corpus.documents) == sorted([P1, P2])


@pytest.mark.parametrize("name", ["ragas_outputs.jsonl", "ragas_outputs.csv",
                                  "deepeval_outputs.jsonl", "deepeval_outputs.csv"])
def test_logged_outputs_in_each_format_are_scored(name, tmp_path, capsys):
    """q1 retrieved [P2, P1] with P1 gold: MRR 1/2; q2 [P2] with P2 gold: 1."""
    oset = load_outputs(HERE / name)
    assert [o.answer for o in oset.outputs.values()] == [
        "Term frequency and inverse document frequency.", "The candidate passages."]
    out = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--outputs", str(HERE / name), "--metrics",
                            "mrr,exact_match", "--output", str(out), "--no-history",
                            "--quiet"], capsys)
    assert code == 0, err
    per = json.loads(out.read_text())["per_query"]
    assert [v["mrr"] for v in per.values()] == [0.5, 1.0]
    assert [v["exact_match"] for v in per.values()] == [1.0, 1.0]


def test_a_run_on_a_ragas_set_retrieves_from_its_contexts(tmp_path, capsys):
    out = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--dataset", str(HERE / "ragas_set.csv"), "--metrics",
                            "mrr", "--top-k", "2", "--output", str(out), "--no-history",
                            "--quiet"], capsys)
    assert code == 0, err
    assert json.loads(out.read_text())["metrics"]["mrr@2"] == 1.0


def test_odd_rows_are_counted_and_strict_refuses_them(tmp_path, capsys):
    odd = tmp_path / "old_ragas.jsonl"
    odd.write_text("\n".join(json.dumps(r) for r in [
        {"question": QUESTIONS[0], "answer": "tf-idf", "contexts": P1,
         "ground_truths": [EXPECTED[0], "tf and idf"]},
        {"question": QUESTIONS[1], "answer": "passages", "contexts": [P2],
         "ground_truth": EXPECTED[1]}]) + "\n")
    oset = load_outputs(odd)
    assert [s.expected_answer for s in oset.dataset.samples] == EXPECTED
    assert [[c.text for c in o.contexts] for o in oset.outputs.values()] == [[P1], [P2]]
    warned = " ".join(oset.dataset.warnings)
    assert "a plain string where a list of texts belongs, read as one text: 1" in warned
    assert "several ground_truths, the first is the expected answer: 1" in warned
    with pytest.raises(DataError) as e:
        load_outputs(odd, Leniency(strict=True))
    assert "--strict" in str(e.value) and "old_ragas.jsonl" in str(e.value)
    code, _, err = run_cli(["run", "--outputs", str(odd), "--strict", "--no-history"],
                           capsys)
    assert code == 2 and "Traceback" not in err


def test_a_row_without_a_question_names_the_row_and_field(tmp_path, capsys):
    bad = tmp_path / "cases.csv"
    bad.write_text("input,actual_output,expected_output\n"
                   "What is BM25?,a ranking function,a ranking function\n"
                   ",an answer,\n")
    code, _, err = run_cli(["run", "--dataset", str(bad), "--no-history"], capsys)
    assert code == 2
    assert "cases.csv" in err and "line 3" in err and "input" in err
    assert "Traceback" not in err
    other = tmp_path / "table.csv"
    other.write_text("a,b\n1,2\n")
    code, _, err = run_cli(["run", "--dataset", str(other), "--no-history"], capsys)
    assert code == 2 and "not those of a format ragmark reads" in err


def test_an_embedding_qa_dataset_is_judged_by_id(tmp_path, capsys):
    """q1 -> n1; q2 -> n2, n3; q3 has none (left out, counted). BM25 over the three
    passages: q1 finds n1 first (MRR 1); q2's relevant n2 first (MRR 1), recall@1 1/2."""
    ds = load_dataset(HERE / "embedding_qa.json")
    assert ds.format == "llamaindex" and [s.id for s in ds.samples] == ["q1", "q2"]
    assert dict(ds.samples[1].truth.doc_grades) == {"n2": 1, "n3": 1}
    assert len(ds.corpus.documents) == 3
    assert any("queries without relevant documents, left out: 1" in w for w in ds.warnings)
    out = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--dataset", str(HERE / "embedding_qa.json"),
                            "--metrics", "mrr,recall@1", "--top-k", "3", "--output", str(out),
                            "--no-history", "--quiet"], capsys)
    assert code == 0, err
    per = json.loads(out.read_text())["per_query"]
    assert per["q1"]["mrr@3"] == 1.0 and per["q2"]["recall@1"] == 0.5


ITEMS = [{"id": "q1", "question": QUESTIONS[0], "ground_truth_contexts": [P1],
          "expected_answer": EXPECTED[0], "type": "factual", "difficulty": "easy",
          "source_ids": ["d1"]}]


def test_the_real_ragas_reads_the_export(tmp_path, ragas_home):
    """ragas (0.4.3, in the dev extra: CI runs this) reads what `ragmark testset
    --format ragas` writes."""
    from ragmark.data.formats import export as export_items
    from ragmark.report.json_writer import write_jsonl

    ragas = pytest.importorskip("ragas")
    write_jsonl(export_items(ITEMS, "ragas"), tmp_path / "r.jsonl")
    sample = ragas.EvaluationDataset.from_jsonl(str(tmp_path / "r.jsonl")).samples[0]
    assert (sample.user_input, sample.reference, sample.reference_contexts) == (
        QUESTIONS[0], EXPECTED[0], [P1])


def test_the_real_llamaindex_and_deepeval_read_the_exports(tmp_path):
    """Where llama-index-core (< 0.14: LabelledRagDataset) and deepeval are installed
    (not in CI: the dev extra's LlamaIndex is newer; checked by hand with
    llama-index-core 0.12.52 and deepeval 4.3.1), each reads what `ragmark testset
    --format` writes."""
    from ragmark.data.formats import export as export_items
    from ragmark.report.json_writer import write_json

    llama = pytest.importorskip("llama_index.core.llama_dataset")
    deepeval = pytest.importorskip("deepeval.dataset")
    write_json(export_items(ITEMS, "llamaindex", "m"), tmp_path / "rag_dataset.json")
    write_json(export_items(ITEMS, "deepeval"), tmp_path / "goldens.json")
    assert llama.LabelledRagDataset.from_json(str(tmp_path / "rag_dataset.json")).examples[
        0].reference_answer == EXPECTED[0]
    d = deepeval.EvaluationDataset()
    d.add_goldens_from_json_file(str(tmp_path / "goldens.json"), input_key_name="input",
                                 expected_output_key_name="expected_output",
                                 context_key_name="context")
    assert d.goldens[0].context == [P1]


def test_input_format_overrides_what_the_fields_say(tmp_path, capsys):
    """A log whose `ground_truth` field makes it look like RAGAS's: as RAGAS its
    expected answer is that field; --input-format ragmark reads it natively (the field is
    kept as an extra); --input-format deepeval names the field the row lacks."""
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps({"id": "q1", "question": QUESTIONS[0], "answer": "tf-idf",
                               "contexts": [P1], "ground_truth": EXPECTED[0]}) + "\n")
    assert load_outputs(log).dataset.samples[0].expected_answer == EXPECTED[0]
    native = load_outputs(log, Leniency(input_format="ragmark")).dataset.samples[0]
    assert native.expected_answer is None and native.extra["ground_truth"] == EXPECTED[0]
    code, _, err = run_cli(["run", "--outputs", str(log), "--input-format", "deepeval",
                            "--no-history"], capsys)
    assert code == 2 and "log.jsonl" in err and "input" in err and "Traceback" not in err
    out = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--outputs", str(log), "--input-format", "ragmark",
                            "--metrics", "groundedness", "--output", str(out),
                            "--no-history", "--quiet"], capsys)
    assert code == 0, err
    assert json.loads(out.read_text())["config"]["name"] == "log"


@pytest.mark.parametrize("name", ["ragas_hf", "ragas_outputs.parquet"])
def test_a_saved_hugging_face_dataset_and_parquet(name, tmp_path, capsys):
    """RAGAS's to_hf_dataset() saved with save_to_disk and to_parquet (datasets 5.0.1):
    an evaluation set with --dataset, logged outputs with --outputs."""
    pytest.importorskip("pyarrow")
    ds = load_dataset(HERE / name)
    assert ds.format == "ragas" and [s.question for s in ds.samples] == QUESTIONS
    assert [list(s.truth.passages) for s in ds.samples] == [[P1], [P2]]
    out = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--outputs", str(HERE / name), "--metrics", "mrr",
                            "--output", str(out), "--no-history", "--quiet"], capsys)
    assert code == 0, err
    assert [v["mrr"] for v in json.loads(out.read_text())["per_query"].values()] == [0.5, 1.0]
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"PAR1 not really")
    code, _, err = run_cli(["run", "--dataset", str(broken), "--no-history"], capsys)
    assert code == 2 and "broken.parquet" in err and "Traceback" not in err


def test_the_python_api_reads_them_too(tmp_path):
    """evaluate_pipeline on a DeepEval goldens file (named by input_format, in a stated
    language, recorded); plan_run scores RAGAS logged outputs as the CLI does."""
    import ragmark
    from ragmark.plan import RunRequest, execute, plan_run

    def pipeline(question: str) -> dict:
        return {"answer": "x", "contexts": [P1, P2] if "BM25" in question else [P1]}

    report = ragmark.evaluate_pipeline(pipeline, HERE / "deepeval_goldens.json",
                                       metrics=["mrr"], history=False,
                                       input_format="deepeval", language="de")
    assert [q.metrics["mrr"].value for q in report.queries] == [1.0, 0.0]
    assert report.config["language"] == "de"
    with pytest.raises(DataError, match=r"no question: read as RAGAS, whose question is "
                       r"'user_input' \(or 'question' in older sets\); the row has "
                       r"'actual_output', .* and 8 more"):
        ragmark.evaluate_pipeline(pipeline, HERE / "deepeval_goldens.json",
                                  history=False, input_format="ragas")
    out = execute(plan_run(RunRequest(outputs=HERE / "ragas_outputs.jsonl",
                                       metrics="mrr", no_history=True))).report
    assert [q.metrics["mrr"].value for q in out.queries] == [0.5, 1.0]


def test_numpy_array_cells_are_the_lists_they_print(tmp_path, capsys):
    """A RAGAS results frame whose list columns hold numpy arrays, written by
    ``to_csv()``: each cell is ``str(array)`` — ``['first' 'second']``, no commas, long
    lines wrapped — which ``ast.literal_eval`` glues into one text (issue 33, item 5)."""
    import csv

    import numpy as np

    long_1 = "BM25 ranks documents by term frequency and inverse document frequency, " * 2
    rows = [("What does BM25 rank documents by?",
             np.array([long_1.strip(), "A reranker's model reorders passages."], dtype=object),
             "Term frequency."),
            ("What does a reranker reorder?", np.array(["Passages.", "Candidates."]),
             "The candidate passages.")]
    assert "\n" in str(rows[0][1]) and "," not in str(rows[1][1])  # numpy's own print
    log = tmp_path / "ragas_results.csv"
    with log.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["user_input", "retrieved_contexts", "response"])
        for q, contexts, answer in rows:
            w.writerow([q, str(contexts), answer])
    lenient = Leniency(strict=True, input_format="ragas")
    oset = load_outputs(log, lenient)
    got = [[c.text for c in oset.outputs[s.id].contexts] for s in oset.dataset.samples]
    assert got == [[long_1.strip(), "A reranker's model reorders passages."],
                   ["Passages.", "Candidates."]]
    # a list cell that mixes the forms cannot be read unambiguously: refused, named
    with log.open("a", newline="") as f:
        csv.writer(f).writerow(["Why?", "['a' 'b', 'c']", "So."])
    code, _, err = run_cli(["run", "--outputs", str(log), "--no-history", "--quiet"], capsys)
    assert code == 2 and "ragas_results.csv" in err and "line 5" in err  # lines, not rows
    assert "retrieved_contexts" in err and "numpy" in err


@pytest.mark.parametrize("rows", [
    {"examples": [{"query": "What is TruthfulQA?", "reference_contexts": None,
                   "reference_answer": "A benchmark."}]},  # LlamaHub's MiniTruthfulQA shape
    [{"input": "What is TruthfulQA?", "expected_output": "A benchmark."}],  # DeepEval goldens
])
def test_a_set_without_contexts_says_what_to_give(tmp_path, capsys, rows):
    """Issue 33, item 16: not "chunker 'whole' produced no chunks", but that the file
    holds no contexts and what to give instead; with --corpus it runs."""
    path = tmp_path / "set.json"
    path.write_text(json.dumps(rows))
    code, _, err = run_cli(["run", "--dataset", str(path), "--no-history", "--quiet"], capsys)
    assert code == 2 and "set.json: the file holds no contexts" in err
    assert "--corpus" in err and "--outputs" in err and "chunker" not in err
    corpus = tmp_path / "docs"
    corpus.mkdir()
    (corpus / "t.txt").write_text("TruthfulQA is a benchmark of truthful answers.")
    code, _, err = run_cli(["run", "--dataset", str(path), "--corpus", str(corpus),
                            "--no-history", "--quiet", "--metrics", "token_f1"], capsys)
    assert code == 0, err


def test_a_packages_format_cannot_take_over_ragmarks_own_rows(tmp_path, capsys, monkeypatch):
    """Issue 61 item 30: a CSV format added by a package, told by the fields 'question'
    and 'answer', read ragmark's own JSONL outputs as its own and the retrieval metrics
    vanished with no error. A format reads the suffixes it declares (``reads``); one that
    claims ragmark's rows anyway makes the file ambiguous, refused naming both."""
    from ragmark.data import formats
    from ragmark.data.foreign import item_of, with_logged

    isolated(monkeypatch, formats.FORMATS)

    def row(r, where, lenient):
        return with_logged(item_of(fmt, r, where, "question", None, None), r, where,
                           lenient, "answer", "contexts", "|")

    fmt = formats.RowFormat("csvlog", "a CSV log", "'question'", "question, answer",
                            lambda keys: {"question", "answer"} <= keys, row,
                            lambda items, model: items, suffix=".csv", reads=(".csv",))
    formats.register(fmt)
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps({"id": "q1", "question": QUESTIONS[0], "answer": "tf-idf",
                               "contexts": [P1]}) + "\n")
    assert load_outputs(log).dataset.format == "outputs"  # a .jsonl: not the CSV format's
    greedy = formats.RowFormat("greedy", "a greedy log", "'question'", "question",
                               lambda keys: "question" in keys, row,
                               lambda items, model: items)
    formats.register(greedy)
    code, _, err = run_cli(["run", "--outputs", str(log), "--no-history", "--quiet"], capsys)
    assert code == 2 and "Traceback" not in err
    assert ("log.jsonl: the rows' fields fit several input formats (ragmark's own, greedy): "
            "say which with --input-format") in err
    out = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--outputs", str(log), "--input-format", "ragmark",
                            "--output", str(out), "--no-history", "--quiet"], capsys)
    assert code == 0, err


def test_a_format_declares_what_it_claims_and_export_is_optional(tmp_path, capsys,
                                                                  monkeypatch):
    """Issue 62 item 4: a read-only CSV format in one declaration — the fields its rows
    need and the suffix it reads, no detect function, no export: a .csv log is read as
    it, the same rows as .jsonl are ragmark's own, a second format claiming the same file
    is refused naming both, ``testset`` does not offer it, and a format that claims
    nothing is refused when it is registered."""
    import csv

    from ragmark.data import formats
    from ragmark.data.foreign import item_of, with_logged

    isolated(monkeypatch, formats.FORMATS)

    def row(r, where, lenient):
        return with_logged(item_of(fmt, r, where, "query", None, None), r, where,
                           lenient, "response", "passages", "|")

    fmt = formats.RowFormat("csvlog", "a CSV log", "'query'", "query, response, passages",
                            None, row, reads=(".csv",),
                            needs=frozenset({"query", "response", "passages"}))
    formats.register(fmt)
    rows = [{"id": f"q{i}", "query": q, "response": "tf-idf", "passages": P1,
             "ground_truth_contexts": P1} for i, q in enumerate(QUESTIONS[:2])]
    log = tmp_path / "log.csv"
    with log.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    got = load_outputs(log)
    assert [(o.answer, [c.text for c in o.contexts]) for o in got.outputs.values()] == [
        ("tf-idf", [P1]), ("tf-idf", [P1])]  # read by the CSV format's row
    same = tmp_path / "log.jsonl"
    same.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(DataError):  # not the CSV format's: ragmark's own, with no question
        load_outputs(same)
    assert "csvlog" not in formats.writable() and "ragas" in formats.writable()
    with pytest.raises(DataError, match="'csvlog' is read only"):
        formats.export([], "csvlog")
    code, _, err = run_cli(["testset", "--corpus", str(tmp_path), "--size", "1",
                            "--output-format", "csvlog"], capsys)
    assert code == 2 and "'csvlog' is not one of" in err
    formats.register(formats.RowFormat("other", "another CSV", "'query'", "query", None,
                                       row, reads=(".csv",), needs=frozenset({"query"})))
    with pytest.raises(DataError, match=r"several input formats \(csvlog, other\)"):
        load_outputs(log)
    with pytest.raises(DataError, match="'nothing' claims nothing"):
        formats.register(formats.RowFormat("nothing", "?", "'q'", "q", None, row))
