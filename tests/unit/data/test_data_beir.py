"""BEIR folders: corpus.jsonl, queries.jsonl, qrels/<split>.tsv."""

from __future__ import annotations

from ragmark.data import load_dataset
from ragmark.data.leniency import Leniency
from ragmark.types import GroundTruth


def test_beir_happy_path(files):
    folder = files.beir()
    dataset = load_dataset(folder)
    assert (dataset.name, dataset.path, dataset.format) == ("beir", str(folder), "beir")
    assert dataset.default_chunker == "whole"
    # qrels order, only the split's queries; a grade of 0 is kept as 0
    assert [s.id for s in dataset.samples] == ["q2", "q1"]
    q2 = dataset.samples[0]
    assert q2.question == "Do dogs bark?"
    assert dict(q2.truth.doc_grades) == {"d2": 2, "d3": 0}
    assert q2.truth.n_targets == 1
    assert dataset.samples[1].truth == GroundTruth(doc_grades={"d1": 1})
    assert [d.id for d in dataset.corpus.documents] == ["d1", "d2", "d3"]
    assert dataset.corpus.documents[2].title == "Only a title"


def test_header_is_optional_and_split_is_chosen(files):
    folder = files.beir(qrels="q3\td1\t1\n", split="train")
    dataset = load_dataset(folder, split="train")
    assert [(s.id, dict(s.truth.doc_grades)) for s in dataset.samples] == [("q3", {"d1": 1})]


def test_bom_and_crlf_in_every_file(files):
    folder = files.beir(
        corpus=['\ufeff{"_id": "d1", "text": "Cats."}\r'],
        queries=['\ufeff{"_id": "q1", "text": "Cats?"}\r'],
        qrels="\ufeffquery-id\tcorpus-id\tscore\r\nq1\td1\t1\r\n",
    )
    dataset = load_dataset(folder)
    assert [(s.id, s.question, dict(s.truth.doc_grades)) for s in dataset.samples] == [
        ("q1", "Cats?", {"d1": 1})
    ]


def test_scifact(scifact):
    dataset = load_dataset(scifact)
    assert len(dataset.samples) == 300
    assert len(dataset.corpus) == 5183
    first = dataset.samples[0]
    assert first.id == "1"
    assert "31715818" in first.truth.doc_grades
    assert dataset.format == "beir"
    assert dataset.name == "scifact"


def test_missing_split_lists_the_present_ones(files, error_of):
    folder = files.beir()
    files.text("beir/qrels/train.tsv", "q3\td1\t1\n")
    assert error_of(load_dataset, folder, split="dev") == (
        f'{folder / "qrels" / "dev.tsv"}: no such split "dev"; splits present: test, train'
    )


def test_missing_parts_of_the_layout(files, error_of):
    folder = files.beir()
    (folder / "queries.jsonl").unlink()
    assert error_of(load_dataset, folder) == (
        f"{folder / 'queries.jsonl'}: no such file; a BEIR folder needs corpus.jsonl, "
        "queries.jsonl (or TREC's topics.tsv) and qrels/<split>.tsv (or, in a TREC RAG "
        "folder, nuggets.jsonl)"
    )


def test_a_corpus_argument_is_refused(files, error_of):
    folder = files.beir()
    assert error_of(load_dataset, folder, corpus=files.corpus()) == (
        f"{folder}: a BEIR folder has its own corpus (corpus.jsonl); leave out --corpus"
    )


def qrels_error(files, error_of, qrels: str, strict: bool = False) -> str:
    folder = files.beir(qrels=qrels)
    return error_of(load_dataset, folder, lenient=Leniency(strict=strict)).removeprefix(
        f"{folder / 'qrels' / 'test.tsv'}, ")


def test_unknown_query_id_in_qrels(files, error_of):
    assert qrels_error(files, error_of, "q1\td1\t1\nq9\td1\t1\n") == (
        "line 2, field 'query-id': unknown query \"q9\" (not in queries.jsonl)"
    )


def test_unknown_corpus_id_in_qrels_stays_a_target_with_a_warning(files, error_of):
    folder = files.beir(qrels="query-id\tcorpus-id\tscore\nq1\tdx\t1\nq1\td1\t1\n")
    lenient = Leniency()
    ds = load_dataset(folder, lenient=lenient)
    assert dict(ds.samples[0].truth.doc_grades) == {"dx": 1, "d1": 1}
    assert ds.warnings == (
        "judged documents missing from the corpus, kept as relevant targets that are never "
        'retrieved: 1 ("dx" (test.tsv line 2))',)
    assert qrels_error(files, error_of, "query-id\tcorpus-id\tscore\nq1\tdx\t1\n",
                       strict=True) == (
        "line 2, field 'corpus-id': unknown document \"dx\" (not in corpus.jsonl) (an error "
        "because of --strict)"
    )


def test_non_integer_scores(files, error_of):
    for score in ("1.5", "0.5", "high", "", "٣", "true"):
        assert qrels_error(files, error_of, f"q1\td1\t{score}\n") == (
            f"line 1, field 'score': expected an integer, got \"{score}\""
        )


def test_integral_float_grades_become_integers_with_a_warning(files, error_of):
    ds = load_dataset(files.beir(qrels="q1\td1\t1.0\nq2\td2\t2.00\nq2\td1\t0\n"))
    assert [dict(s.truth.doc_grades) for s in ds.samples] == [{"d1": 1}, {"d2": 2, "d1": 0}]
    assert ds.warnings == ("grades written as integral decimals (1.0), read as integers: 2 "
                           "(1.0 (test.tsv line 1), 2.00 (test.tsv line 2))",)
    assert qrels_error(files, error_of, "q1\td1\t1.0\n", strict=True) == (
        "line 1, field 'score': expected an integer, got \"1.0\" (an error because of --strict)")


def test_trec_format_qrels(files):
    trec = load_dataset(files.beir("t", qrels="q2 0 d2 2\nq1 0 d1 1\nq2\t0\td3\t0\n"))
    tsv = load_dataset(files.beir("b"))
    assert [(s.id, dict(s.truth.doc_grades)) for s in trec.samples] == [
        (s.id, dict(s.truth.doc_grades)) for s in tsv.samples]
    files.text("n/qrels/test.txt", "q1 0 d1 1\n")
    files.jsonl("n/corpus.jsonl", [{"_id": "d1", "text": "x"}])
    files.jsonl("n/queries.jsonl", [{"_id": "q1", "text": "y"}])
    assert load_dataset(files.root / "n").samples[0].truth.doc_grades == {"d1": 1}


def test_negative_and_signed_scores_are_integers(files):
    dataset = load_dataset(files.beir(qrels="q1\td1\t-1\nq1\td2\t+2\n"))
    assert dict(dataset.samples[0].truth.doc_grades) == {"d1": -1, "d2": 2}


def test_a_header_only_on_the_first_line(files, error_of):
    assert qrels_error(files, error_of, "q1\td1\t1\nquery-id\tcorpus-id\tscore\n") == (
        "line 2, field 'score': expected an integer, got \"score\""
    )


def test_a_header_must_be_exact(files, error_of):
    assert qrels_error(files, error_of, "qid\tdocid\tscore\nq1\td1\t1\n") == (
        "line 1, field 'score': expected an integer, got \"score\""
    )


def test_rows_without_three_columns(files, error_of):
    expected = ("expected 3 tab-separated columns (query-id, corpus-id, score) or TREC's 4 "
                "(qid 0 docid grade), got")
    assert qrels_error(files, error_of, "q1\td1\t1\nq1 d2 1\n") == f"line 2: {expected} 1"
    assert qrels_error(files, error_of, "q1\td1\t1\t0\t5\n") == f"line 1: {expected} 5"


def test_duplicate_judgment(files, error_of):
    assert qrels_error(files, error_of, "q1\td1\t1\nq2\td2\t1\nq1\td1\t2\n") == (
        'line 3: duplicate judgment of query "q1" and document "d1" (first at line 1)'
    )


def test_empty_qrels(files, error_of):
    folder = files.beir(qrels="query-id\tcorpus-id\tscore\n")
    assert error_of(load_dataset, folder) == (
        f"{folder / 'qrels' / 'test.tsv'}: no relevance judgments (the evaluation set is empty)"
    )


def test_duplicate_query_id(files, error_of):
    queries = [{"_id": "q1", "text": "a"}, {"_id": "q2", "text": "b"}, {"_id": "q1", "text": "c"}]
    folder = files.beir(queries=queries)
    assert error_of(load_dataset, folder) == (
        f"{folder / 'queries.jsonl'}, line 3, field '_id': duplicate id \"q1\" (first at line 1)"
        " with a different text"
    )


def test_query_errors(files, error_of):
    cases = [
        ({"_id": "q1"}, "field 'text': missing; expected a non-empty string"),
        ({"_id": "q1", "text": ""}, "field 'text': expected a non-empty string, got \"\""),
        ({"_id": True, "text": "a"}, "field '_id': expected a non-empty string, got true"),
    ]
    for query, expected in cases:
        folder = files.beir(queries=[query])
        assert error_of(load_dataset, folder) == f"{folder / 'queries.jsonl'}, line 1, {expected}"


def test_queries_file_with_windows_1252(files, error_of):
    folder = files.beir()
    path = files.text("beir/queries.jsonl", '{"_id": "q1", "text": "na\xefve"}\n'.encode("cp1252"))
    assert error_of(load_dataset, folder) == (
        f"{path}, line 1: not valid UTF-8: byte 0xef at offset 25; save the file as UTF-8, "
        "or give --encoding NAME"
    )


def test_a_folder_with_a_generic_name_is_named_after_its_parent(files, tmp_path):
    """Issue 61 item 28: every BEIR folder named beir_format was "beir_format" in the
    history, and --dataset beir_format matched two datasets."""
    import shutil

    for name in ("nfcorpus", "cranfield"):
        shutil.copytree(files.beir(), tmp_path / name / "beir_format")
    got = [load_dataset(tmp_path / n / "beir_format").name for n in ("nfcorpus", "cranfield")]
    assert got == ["nfcorpus", "cranfield"]
