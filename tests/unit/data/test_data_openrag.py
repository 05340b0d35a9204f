"""Open RAG Benchmark folders: queries.json, qrels.json, answers.json, corpus/*.json."""

from __future__ import annotations

from ragmark.data import load_corpus, load_dataset
from ragmark.types import GroundTruth


def test_open_rag_happy_path(files):
    folder = files.orb(answers={"q1": "It maps tokens to vectors.", "q2": None})
    files.text("orb/corpus/README.txt", "not a document")
    dataset = load_dataset(folder)
    assert (dataset.name, dataset.format, dataset.default_chunker) == (
        "orb",
        "open-rag-bench",
        "fixed",
    )
    assert [s.id for s in dataset.samples] == ["q2", "q1"]
    q2, q1 = dataset.samples
    assert q1.question == "What does the encoder do?"
    assert q1.truth == GroundTruth(sections=(("2401.00001v1", 0),))
    assert q2.truth.sections == (("2401.00001v1", 1),)
    assert q1.expected_answer == "It maps tokens to vectors."
    assert q2.expected_answer is None
    assert dict(q1.extra) == {"type": "abstractive"}
    doc = dataset.corpus.by_id()["2401.00001v1"]
    assert doc.title == "An encoder"
    assert doc.sections == ("The encoder maps tokens to vectors.", "Table 1 has 12 rows.")
    assert doc.text == "The encoder maps tokens to vectors.\n\nTable 1 has 12 rows."
    assert [d.id for d in dataset.corpus.documents] == ["2401.00001v1", "2402.00002v3"]


def test_without_answers_and_a_section_without_text(files):
    docs = {"d1": {"title": "T", "sections": [{"text": "", "tables": {}}, {"text": "B"}]}}
    dataset = load_dataset(
        files.orb(
            queries={"q1": {"query": "B?"}},
            qrels={"q1": {"doc_id": "d1", "section_id": 1}},
            docs=docs,
        )
    )
    assert dataset.samples[0].expected_answer is None
    assert dataset.corpus.documents[0].sections == ("", "B")


def test_section_out_of_range(files, error_of):
    folder = files.orb(qrels={"q1": {"doc_id": "2402.00002v3", "section_id": 1}})
    assert error_of(load_dataset, folder) == (
        f"{folder / 'qrels.json'}, item \"q1\", field 'section_id': 1 is out of range: "
        'document "2402.00002v3" has sections 0 to 0'
    )
    folder = files.orb(qrels={"q1": {"doc_id": "2401.00001v1", "section_id": -1}})
    assert error_of(load_dataset, folder) == (
        f"{folder / 'qrels.json'}, item \"q1\", field 'section_id': -1 is out of range: "
        'document "2401.00001v1" has sections 0 to 1'
    )


def test_missing_document(files, error_of):
    folder = files.orb(qrels={"q1": {"doc_id": "2499.9", "section_id": 0}})
    assert error_of(load_dataset, folder) == (
        f'{folder / "qrels.json"}, item "q1", field \'doc_id\': unknown document "2499.9" '
        "(no corpus/2499.9.json)"
    )


def test_qrels_field_errors(files, error_of):
    cases = [
        ({"doc_id": "d", "section_id": True}, "field 'section_id': expected an integer, got true"),
        ({"doc_id": "d", "section_id": 1.0}, "field 'section_id': expected an integer, got 1.0"),
        ({"doc_id": "d", "section_id": "1"}, "field 'section_id': expected an integer, got \"1\""),
        ({"doc_id": "d"}, "field 'section_id': missing; expected an integer"),
        ({"section_id": 0}, "field 'doc_id': missing; expected a non-empty string"),
        ("d/0", None),
    ]
    for value, expected in cases:
        folder = files.orb(qrels={"q1": value})
        if expected is None:
            assert error_of(load_dataset, folder) == (
                f'{folder / "qrels.json"}, item "q1": expected an object, got "d/0"'
            )
            continue
        assert error_of(load_dataset, folder) == f'{folder / "qrels.json"}, item "q1", {expected}'


def test_unknown_query_in_qrels_and_answers(files, error_of):
    folder = files.orb(qrels={"q7": {"doc_id": "2401.00001v1", "section_id": 0}})
    assert error_of(load_dataset, folder) == (
        f'{folder / "qrels.json"}, item "q7": unknown query (not in queries.json)'
    )
    folder = files.orb(answers={"q1": "a", "q8": "b"})
    assert error_of(load_dataset, folder) == (
        f'{folder / "answers.json"}, item "q8": unknown query (not in queries.json)'
    )


def test_answer_errors(files, error_of):
    folder = files.orb(answers={"q1": ""})
    assert error_of(load_dataset, folder) == (
        f'{folder / "answers.json"}, item "q1": expected a non-empty string, got ""'
    )


def test_query_errors(files, error_of):
    folder = files.orb(queries={"q1": {"text": "wrong key"}})
    assert error_of(load_dataset, folder) == (
        f"{folder / 'queries.json'}, item \"q1\", field 'query': missing; "
        "expected a non-empty string"
    )
    folder = files.orb(queries={"q1": "What?"})
    assert error_of(load_dataset, folder) == (
        f'{folder / "queries.json"}, item "q1": expected an object, got "What?"'
    )


def test_duplicate_query_id(files, error_of):
    folder = files.orb()
    files.text("orb/queries.json", '{"q1": {"query": "a"},\n "q1": {"query": "b"}}')
    assert error_of(load_dataset, folder) == (
        f'{folder / "queries.json"}: duplicate key "q1" in an object'
    )


def test_top_level_must_be_an_object(files, error_of):
    folder = files.orb(queries=[{"query": "a"}])
    assert error_of(load_dataset, folder) == (
        f'{folder / "queries.json"}: expected an object (query id -> {{"query": text}}) '
        "at the top level, got a list"
    )
    folder = files.orb(qrels=[])
    assert error_of(load_dataset, folder) == (
        f'{folder / "qrels.json"}: expected an object (query id -> {{"doc_id", '
        '"section_id"}) at the top level, got a list'
    )


def test_empty_sets(files, error_of):
    folder = files.orb(qrels={})
    assert error_of(load_dataset, folder) == (
        f"{folder / 'qrels.json'}: no relevance judgments (the evaluation set is empty)"
    )
    folder = files.orb(queries={})
    assert error_of(load_dataset, folder) == (
        f"{folder / 'queries.json'}: no queries (the evaluation set is empty)"
    )


def test_document_errors(files, error_of):
    cases = [
        ([], 'expected an object ({"title", "sections"}) at the top level, got a list'),
        (
            {"title": "T"},
            "field 'sections': missing; expected a non-empty list of sections {\"text\"}",
        ),
        (
            {"sections": []},
            "field 'sections': expected a non-empty list of sections {\"text\"}, got an empty list",
        ),
        ({"sections": ["a"]}, "field 'sections[0]': expected an object, got \"a\""),
        ({"sections": [{"text": "a"}, {}]}, "field 'sections[1].text': missing; expected a string"),
        ({"sections": [{"text": 5}]}, "field 'sections[0].text': expected a string, got 5"),
        ({"title": None, "sections": [{"text": "a"}]}, None),
        ({"title": 1, "sections": [{"text": "a"}]}, "field 'title': expected a string, got 1"),
    ]
    for doc, expected in cases:
        folder = files.orb(docs={"2401.00001v1": doc})
        path = folder / "corpus" / "2401.00001v1.json"
        if expected is None:
            assert load_corpus(folder).documents[0].title == ""
            continue
        separator = ": " if expected.startswith("expected") else ", "
        assert error_of(load_dataset, folder) == f"{path}{separator}{expected}"
        path.unlink()


def test_missing_parts_and_empty_corpus(files, error_of):
    folder = files.orb(docs={})
    assert error_of(load_dataset, folder) == (
        f"{folder / 'corpus'}: the corpus is empty: no .json documents"
    )
    (folder / "corpus").rmdir()
    assert error_of(load_dataset, folder) == (
        f"{folder / 'corpus'}: no such folder; an Open RAG Benchmark folder needs "
        "queries.json, qrels.json and corpus/"
    )
    (folder / "queries.json").unlink()
    assert error_of(load_dataset, folder) == (
        f"{folder / 'queries.json'}: no such file; an Open RAG Benchmark folder needs "
        "queries.json, qrels.json and corpus/"
    )


def test_a_corpus_argument_is_refused(files, error_of):
    folder = files.orb()
    assert error_of(load_dataset, folder, corpus=files.corpus()) == (
        f"{folder}: an Open RAG Benchmark folder has its own corpus (corpus/); leave out --corpus"
    )


def test_windows_1252_document(files, error_of):
    folder = files.orb()
    path = files.text(
        "orb/corpus/2402.00002v3.json",
        '{"title": "Caf\xe9", "sections": [{"text": "x"}]}'.encode("cp1252"),
    )
    assert error_of(load_dataset, folder) == (
        f"{path}, line 1: not valid UTF-8: byte 0xe9 at offset 14; save the file as UTF-8, "
        "or give --encoding NAME"
    )
