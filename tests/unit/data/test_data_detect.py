"""load_dataset tells the format from files and fields, and explains what it expected."""

from __future__ import annotations

from ragmark.data import load_dataset

FORMATS = (
    "expected a BEIR folder (corpus.jsonl, queries.jsonl, qrels/<split>.tsv), an Open RAG "
    "Benchmark folder (queries.json, qrels.json, corpus/), a keyword or context set, or a "
    "conversation set (.json, .jsonl or .jsonl.gz), or a RAGAS, DeepEval or LlamaIndex "
    "evaluation set (.json, .jsonl, .csv)"
)


def test_formats_are_told_apart(files):
    files.corpus()
    keyword = files.json(
        "kw.json",
        [{"question": "q?", "expected_keywords": ["a"], "must_be_grounded_in": ["doc1.txt"]}],
    )
    context = files.json("ctx.json", [{"question": "q?", "ground_truth_contexts": ["a b c"]}])
    assert load_dataset(keyword).format == "keyword"
    assert load_dataset(context).format == "context"
    assert load_dataset(files.beir()).format == "beir"
    assert load_dataset(files.orb()).format == "open-rag-bench"
    assert load_dataset(str(files.orb())).format == "open-rag-bench"


def test_missing_path(files, error_of):
    path = files.path("nope.json")
    assert error_of(load_dataset, path) == f"{path}: no such file or folder"


def test_a_folder_that_is_no_dataset(files, error_of):
    folder = files.corpus()
    assert error_of(load_dataset, folder) == f"{folder}: not a dataset folder; {FORMATS}"


def test_a_file_of_another_kind(files, error_of):
    path = files.text("questions.tsv", "question\tanswer\n")
    assert error_of(load_dataset, path) == f"{path}: not a dataset; {FORMATS}"
    path = files.text("questions.csv", "question,answer\n")
    assert error_of(load_dataset, path) == (
        f"{path}: no rows (the CSV file is empty or has only a header)")


def test_items_without_the_fields_of_any_set(files, error_of):
    path = files.json("out.json", [{"question": "q?", "answer": "a", "contexts": ["c"]}])
    assert error_of(load_dataset, path) == (
        f"{path}: cannot tell the set's format: no item has 'expected_keywords' (keyword set), "
        "'ground_truth_contexts' (context set) or 'expected_tool_calls' (an agent's set); "
        "its items have 'answer' and 'contexts': "
        "score them as logged outputs with --outputs. The formats --dataset reads: a keyword "
        "set, a context set, a BEIR folder, an Open RAG Benchmark folder; --outputs reads "
        "logged outputs ({question, answer, contexts}), --run-file-in a TREC run file (with "
        "--dataset)"
    )


def test_one_item_decides_for_all(files, error_of):
    files.corpus()
    path = files.json(
        "kw.json",
        [{"question": "q?"}, {"question": "q?", "expected_keywords": ["a"]}],
    )
    assert error_of(load_dataset, path) == (
        f"{path}, item 0, field 'expected_keywords': missing; expected a non-empty list of "
        "non-empty strings"
    )
