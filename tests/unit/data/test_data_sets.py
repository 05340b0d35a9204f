"""Keyword sets and context sets, as a JSON list or a JSONL file."""

from __future__ import annotations

import pytest

from ragmark.data import load_dataset
from ragmark.types import GroundTruth

KEYWORD_ITEMS = [
    {
        "id": "q1",
        "question": "What are the two main components of a RAG pipeline?",
        "expected_keywords": ["retriever", "generator"],
        "must_be_grounded_in": ["doc1.txt"],
    },
    {
        "id": "q2",
        "question": "What does a harness do?",
        "expected_keywords": ["metrics"],
        "must_be_grounded_in": ["notes/doc3.md", "./doc2.txt", "notes\\doc3.md"],
        "difficulty": "easy",
    },
]

CONTEXTS = [
    "ICD-10 code for type 2 diabetes mellitus is E11.",
    "Metformin is contraindicated in severe renal impairment.",
    "Metformin should not be used in pregnancy unless clearly necessary.",
]
CONTEXT_ITEMS = [
    {
        "question": "What is the ICD-10 code for type 2 diabetes?",
        "ground_truth_contexts": [CONTEXTS[0]],
        "expected_answer": "E11",
        "type": "factual",
        "difficulty": "easy",
        "source_ids": ["doc1"],
    },
    {
        "id": "metformin",
        "question": "When should metformin be avoided?",
        "ground_truth_contexts": [CONTEXTS[1], CONTEXTS[2]],
        "expected_answer": None,
    },
    {
        "question": "What is E11?",
        "ground_truth_contexts": [CONTEXTS[0]],
        "expected_keywords": ["diabetes"],
    },
]


# --- keyword sets -----------------------------------------------------------------


def test_keyword_set_with_corpus_folder_beside_it(files):
    files.corpus()
    path = files.json("eval_questions.json", KEYWORD_ITEMS)
    dataset = load_dataset(path)
    assert (dataset.name, dataset.path, dataset.format, dataset.default_chunker) == (
        "eval_questions",
        str(path),
        "keyword",
        "fixed",
    )
    q1, q2 = dataset.samples
    assert q1.id == "q1"
    assert q1.expected_keywords == ("retriever", "generator")
    assert q1.truth == GroundTruth(doc_grades={"doc1.txt": 1})
    assert dict(q2.truth.doc_grades) == {"notes/doc3.md": 1, "doc2.txt": 1}
    assert dict(q2.extra) == {"difficulty": "easy"}
    assert q2.expected_answer is None
    assert [d.id for d in dataset.corpus.documents] == ["doc1.txt", "doc2.txt", "notes/doc3.md"]


def test_keyword_set_with_corpus_argument_and_jsonl(files):
    corpus = files.corpus("docs")
    path = files.jsonl("sets/eval.jsonl", KEYWORD_ITEMS)
    dataset = load_dataset(path, corpus=corpus)
    assert [s.id for s in dataset.samples] == ["q1", "q2"]
    assert dataset.corpus.source == str(corpus)


def test_keyword_set_with_a_bom(files):
    files.corpus()
    path = files.text(
        "eval.json",
        "\ufeff" + '[{"question": "q?", "expected_keywords": ["a"], '
        '"must_be_grounded_in": ["doc1.txt"]}]',
    )
    dataset = load_dataset(path)
    assert dataset.samples[0].id == "q1"


def test_keyword_set_needs_a_corpus(files, error_of):
    path = files.json("eval.json", KEYWORD_ITEMS)
    assert error_of(load_dataset, path) == (
        f"{path}: a keyword set needs a corpus: pass --corpus PATH, or put the documents in "
        "a folder named 'corpus' beside this file"
    )


@pytest.mark.parametrize(
    "name", ["../secret.txt", "/etc/passwd", "notes/../../doc1.txt", "..\\x.txt", "C:/x.txt", ".."]
)
def test_names_that_escape_the_corpus_folder(files, error_of, name):
    files.corpus()
    item = {"question": "q?", "expected_keywords": ["a"], "must_be_grounded_in": ["doc1.txt", name]}
    path = files.json("eval.json", [item])
    quoted = '"' + name.replace("\\", "\\\\") + '"'
    assert error_of(load_dataset, path) == (
        f"{path}, item 0, field 'must_be_grounded_in[1]': {quoted} escapes the corpus folder"
    )


def test_escape_is_checked_before_existence(files, error_of):
    files.corpus()
    files.text("secret.txt", "outside")
    item = {"question": "q?", "expected_keywords": ["a"], "must_be_grounded_in": ["../secret.txt"]}
    path = files.json("eval.json", [item])
    assert error_of(load_dataset, path) == (
        f"{path}, item 0, field 'must_be_grounded_in[0]': \"../secret.txt\" escapes the corpus "
        "folder"
    )


def test_unknown_grounding_file(files, error_of):
    corpus = files.corpus()
    item = {"question": "q?", "expected_keywords": ["a"], "must_be_grounded_in": ["doc1.text"]}
    path = files.json("eval.json", [KEYWORD_ITEMS[0], item])
    assert error_of(load_dataset, path) == (
        f"{path}, item 1, field 'must_be_grounded_in[0]': \"doc1.text\" is not a document of "
        f'the corpus {corpus}; did you mean "doc1.txt"?'
    )
    item["must_be_grounded_in"] = ["zzzzzz"]
    path = files.json("eval.json", [item])
    assert error_of(load_dataset, path) == (
        f"{path}, item 0, field 'must_be_grounded_in[0]': \"zzzzzz\" is not a document of "
        f"the corpus {corpus}"
    )


def test_duplicate_keyword_set_ids_name_both_items(files, error_of):
    files.corpus()
    items = [KEYWORD_ITEMS[0], KEYWORD_ITEMS[1], dict(KEYWORD_ITEMS[1], id="q1")]
    path = files.json("eval.json", items)
    assert error_of(load_dataset, path) == (
        f"{path}, item 2, field 'id': duplicate id \"q1\" (first at item 0)"
    )


def test_duplicate_default_id(files, error_of):
    files.corpus()
    items = [
        dict(KEYWORD_ITEMS[0], id="q2"),
        {k: v for k, v in KEYWORD_ITEMS[1].items() if k != "id"},
    ]
    path = files.json("eval.json", items)
    assert error_of(load_dataset, path) == (
        f'{path}, item 1: duplicate id "q2", the default for this item (first at item 0); '
        "give the item an 'id'"
    )


def test_keyword_item_errors(files, error_of):
    files.corpus()
    good = {
        "id": "a",
        "question": "q?",
        "expected_keywords": ["k"],
        "must_be_grounded_in": ["doc1.txt"],
    }
    cases = [
        ({"id": 3.5}, "field 'id': expected a non-empty string, got 3.5"),
        ({"id": ""}, "field 'id': expected a non-empty string, got \"\""),
        ({"question": 42}, "field 'question': expected a non-empty string, got 42"),
        ({"question": "  "}, "field 'question': expected a non-empty string, got \"  \""),
        ({"question": None}, "field 'question': expected a non-empty string, got null"),
        (
            {"expected_keywords": []},
            "field 'expected_keywords': expected a non-empty list of "
            "non-empty strings, got an empty list",
        ),
        (
            {"expected_keywords": "retriever"},
            "field 'expected_keywords': expected a non-empty "
            'list of non-empty strings, got "retriever"',
        ),
        (
            {"expected_keywords": ["a", ""]},
            "field 'expected_keywords[1]': expected a non-empty string, got \"\"",
        ),
        (
            {"must_be_grounded_in": [1]},
            "field 'must_be_grounded_in[0]': expected a non-empty string, got 1",
        ),
        (
            {"must_be_grounded_in": None},
            "field 'must_be_grounded_in': expected a non-empty list of non-empty strings, got null",
        ),
    ]
    for change, expected in cases:
        path = files.json("eval.json", [good | {"id": "first"}, good | change])
        assert error_of(load_dataset, path) == f"{path}, item 1, {expected}"
    for name in ("question", "expected_keywords", "must_be_grounded_in"):
        item = {k: v for k, v in good.items() if k != name}
        path = files.json("eval.json", [item])
        expected = (
            "a non-empty string"
            if name == "question"
            else ("a non-empty list of non-empty strings")
        )
        assert error_of(load_dataset, path) == (
            f"{path}, item 0, field '{name}': missing; expected {expected}"
        )


# --- context sets -----------------------------------------------------------------


def test_context_set_builds_its_corpus_from_the_passages(files):
    path = files.json("bench.json", CONTEXT_ITEMS)
    dataset = load_dataset(path)
    assert (dataset.name, dataset.format, dataset.default_chunker) == ("bench", "context", "whole")
    a, b, c = dataset.samples
    assert [a.id, b.id, c.id] == ["q1", "metformin", "q3"]
    assert a.truth == GroundTruth(passages=(CONTEXTS[0],))
    assert b.truth.passages == (CONTEXTS[1], CONTEXTS[2])
    assert (a.expected_answer, b.expected_answer) == ("E11", None)
    assert (a.expected_keywords, c.expected_keywords) == (None, ("diabetes",))
    assert dict(a.extra) == {"type": "factual", "difficulty": "easy", "source_ids": ["doc1"]}
    assert dict(b.extra) == {}
    corpus = dataset.corpus
    assert [(d.id, d.text) for d in corpus.documents] == [
        ("p1", CONTEXTS[0]),
        ("p2", CONTEXTS[1]),
        ("p3", CONTEXTS[2]),
    ]
    assert corpus.source == f"ground-truth passages of {path}"


def test_context_set_jsonl_with_a_text_corpus(files):
    corpus = files.corpus("docs")
    path = files.jsonl("bench.jsonl", CONTEXT_ITEMS)
    dataset = load_dataset(path, corpus=corpus)
    assert dataset.default_chunker == "fixed"
    assert dataset.corpus.source == str(corpus)
    assert [s.id for s in dataset.samples] == ["q1", "metformin", "q3"]


def test_context_set_with_a_beir_corpus_chunks_whole(files):
    dataset = load_dataset(files.json("bench.json", CONTEXT_ITEMS), corpus=files.beir())
    assert dataset.default_chunker == "whole"


def test_context_item_errors(files, error_of):
    good = {"question": "q?", "ground_truth_contexts": ["a passage"]}
    cases = [
        ({"question": ""}, "field 'question': expected a non-empty string, got \"\""),
        ({"question": ["q?"]}, "field 'question': expected a non-empty string, got a list"),
        (
            {"ground_truth_contexts": []},
            "field 'ground_truth_contexts': expected a non-empty "
            "list of non-empty strings, got an empty list",
        ),
        (
            {"ground_truth_contexts": "a passage"},
            "field 'ground_truth_contexts': expected a "
            'non-empty list of non-empty strings, got "a passage"',
        ),
        (
            {"ground_truth_contexts": ["ok", " "]},
            "field 'ground_truth_contexts[1]': expected a non-empty string, got \" \"",
        ),
        (
            {"ground_truth_contexts": [{"text": "x"}]},
            "field 'ground_truth_contexts[0]': expected a non-empty string, got an object",
        ),
        ({"expected_answer": ""}, "field 'expected_answer': expected a non-empty string, got \"\""),
        ({"expected_answer": 11}, "field 'expected_answer': expected a non-empty string, got 11"),
        (
            {"expected_answer": False},
            "field 'expected_answer': expected a non-empty string, got false",
        ),
        ({"id": True}, "field 'id': expected a non-empty string, got true"),
    ]
    for change, expected in cases:
        path = files.json("bench.json", [good, good, good | change])
        assert error_of(load_dataset, path) == f"{path}, item 2, {expected}"
        path = files.jsonl("bench.jsonl", [good, "", good | change])
        assert error_of(load_dataset, path) == f"{path}, line 3, {expected}"
    path = files.json("bench.json", [good, {"ground_truth_contexts": ["x"]}])
    assert error_of(load_dataset, path) == (
        f"{path}, item 1, field 'question': missing; expected a non-empty string"
    )
    path = files.json("bench.json", [good, {"question": "q?"}])
    assert error_of(load_dataset, path) == (
        f"{path}, item 1, field 'ground_truth_contexts': missing; expected a non-empty list of "
        "non-empty strings"
    )


def test_duplicate_context_ids_in_jsonl_name_both_lines(files, error_of):
    good = {"question": "q?", "ground_truth_contexts": ["a passage"]}
    path = files.jsonl("bench.jsonl", [good | {"id": "x"}, good, good | {"id": "x"}])
    assert error_of(load_dataset, path) == (
        f"{path}, line 3, field 'id': duplicate id \"x\" (first at line 1)"
    )


def test_items_that_are_not_objects(files, error_of):
    good = {"question": "q?", "ground_truth_contexts": ["a passage"]}
    path = files.json("bench.json", [good, "q?"])
    assert error_of(load_dataset, path) == f'{path}, item 1: expected an object, got "q?"'
    path = files.jsonl("bench.jsonl", [good, [1, 2]])
    assert error_of(load_dataset, path) == f"{path}, line 2: expected an object, got a list"


def test_top_level_must_be_a_list(files, error_of):
    path = files.json("bench.json", {"questions": []})
    assert error_of(load_dataset, path) == (
        f"{path}: expected a list of question objects at the top level, got an object"
    )


def test_empty_sets(files, error_of):
    path = files.json("bench.json", [])
    assert error_of(load_dataset, path) == f"{path}: no items (the evaluation set is empty)"
    path = files.text("bench.jsonl", "\n \n")
    assert error_of(load_dataset, path) == f"{path}: no items (the evaluation set is empty)"


def test_windows_1252_set(files, error_of):
    path = files.text("bench.json", '[\n  {"question": "caf\xe9"}\n]'.encode("cp1252"))
    assert error_of(load_dataset, path) == (
        f"{path}, line 2: not valid UTF-8: byte 0xe9 at offset 21; save the file as UTF-8, "
        "or give --encoding NAME"
    )


def test_malformed_set(files, error_of):
    path = files.text("bench.json", '[{"question": "q?", "ground_truth_contexts": ["a"],}]')
    assert error_of(load_dataset, path) == (
        f"{path}, line 1: invalid JSON: Expecting property name enclosed in double quotes at "
        "column 52"
    )
