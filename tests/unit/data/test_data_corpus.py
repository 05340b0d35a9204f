"""load_corpus: folders of text files, JSONL documents, BEIR and Open RAG folders."""

from __future__ import annotations

from ragmark.data import load_corpus
from ragmark.data.leniency import Leniency
from ragmark.types import Document


def test_text_folder_is_recursive_sorted_and_skips_hidden_and_other_files(files):
    folder = files.corpus()
    files.text("corpus/.hidden.txt", "secret")
    files.text("corpus/.git/HEAD.txt", "ref")
    files.text("corpus/image.png", b"\x89PNG")
    files.text("corpus/UPPER.TXT", "\ufeffupper case suffix, with a BOM")
    corpus = load_corpus(folder)
    assert [d.id for d in corpus.documents] == [
        "UPPER.TXT",
        "doc1.txt",
        "doc2.txt",
        "notes/doc3.md",
    ]
    assert corpus.documents[0].text == "upper case suffix, with a BOM"
    assert corpus.documents[3] == Document(
        id="notes/doc3.md",
        text="# Harness\nA harness runs every question and records the metrics.",
    )
    assert corpus.source == str(folder)
    assert len(corpus) == 4


def test_text_folder_keeps_text_exactly(files):
    folder = files.corpus(docs={"a.txt": "line one\r\nline two\n\n"})
    assert load_corpus(folder).documents[0].text == "line one\r\nline two\n\n"


def test_jsonl_corpus_with_id_or__id(files):
    path = files.jsonl(
        "docs.jsonl",
        [
            {"id": "a", "text": "alpha", "title": "A", "metadata": {"year": 2020}},
            "",
            {"_id": "b", "text": "beta"},
            {"id": "c", "text": "", "title": "Only a title", "metadata": None, "other": 1},
        ],
    )
    corpus = load_corpus(path)
    assert [(d.id, d.title, d.text, dict(d.metadata)) for d in corpus.documents] == [
        ("a", "A", "alpha", {"year": 2020}),
        ("b", "", "beta", {}),
        ("c", "Only a title", "", {}),
    ]
    assert corpus.source == str(path)


def test_beir_folder_as_corpus(files):
    corpus = load_corpus(files.beir())
    assert [d.id for d in corpus.documents] == ["d1", "d2", "d3"]
    assert corpus.documents[0].title == "Cats"


def test_open_rag_folder_as_corpus(files):
    corpus = load_corpus(files.orb())
    assert [d.id for d in corpus.documents] == ["2401.00001v1", "2402.00002v3"]
    assert corpus.documents[0].sections == (
        "The encoder maps tokens to vectors.",
        "Table 1 has 12 rows.",
    )


def test_missing_corpus(files, error_of):
    path = files.path("nowhere")
    assert error_of(load_corpus, path) == f"{path}: no such file or folder"


def test_empty_folder(files, error_of):
    folder = files.path("corpus")
    folder.mkdir()
    assert error_of(load_corpus, folder) == (f"{folder}: the corpus is empty: no .txt or .md files")


def test_folder_without_text_files_names_what_it_found(files, error_of):
    folder = files.corpus(docs={"a.pdf": "x", "b.json": "{}", "c.pdf": "y", ".d.txt": "z"})
    assert error_of(load_corpus, folder) == (
        f"{folder}: the corpus is empty: no .txt or .md files (found only .json, .pdf files)"
    )


def test_empty_text_file_is_left_out_with_a_warning(files, error_of):
    folder = files.corpus(docs={"a.txt": "text", "b.txt": " \n", "c.txt": ""})
    lenient = Leniency()
    corpus = load_corpus(folder, lenient)
    assert [d.id for d in corpus.documents] == ["a.txt"]
    assert corpus.left_out == {"b.txt", "c.txt"}
    assert lenient.messages() == [
        "empty files left out of the index (kept in the ground truth): 2 (b.txt, c.txt)"]
    assert error_of(load_corpus, folder, Leniency(strict=True)) == (
        f"{folder / 'b.txt'}: the file is empty; a document needs text (an error because of "
        "--strict)"
    )


def test_windows_1252_text_file_is_skipped_or_read_with_encoding(files, error_of):
    folder = files.corpus(docs={"a.txt": "ok"})
    bad = files.text("corpus/b.txt", "Caf\xe9 au lait\n".encode("cp1252"))
    lenient = Leniency()
    corpus = load_corpus(folder, lenient)
    assert [d.id for d in corpus.documents] == ["a.txt"] and corpus.left_out == {"b.txt"}
    assert lenient.messages() == [
        "files that are not UTF-8, skipped (give --encoding NAME to read them): 1 "
        "(b.txt (byte offset 3))"]
    assert error_of(load_corpus, folder, Leniency(strict=True)) == (
        f"{bad}, line 1: not valid UTF-8: byte 0xe9 at offset 3; save the file as UTF-8, or "
        "give --encoding NAME (an error because of --strict)"
    )
    read = load_corpus(folder, Leniency(encoding="cp1252"))
    assert [d.text for d in read.documents] == ["ok", "Caf\xe9 au lait\n"]


def test_not_a_corpus_file(files, error_of):
    path = files.text("docs.csv", "id,text\n")
    assert error_of(load_corpus, path) == (
        f"{path}: not a corpus; expected a folder of .txt or .md files, a JSONL file of "
        "{id, text} documents (.jsonl or .jsonl.gz), a BEIR folder (corpus.jsonl) or an "
        "Open RAG Benchmark "
        "folder (corpus/)"
    )


def test_empty_jsonl_corpus(files, error_of):
    path = files.text("docs.jsonl", "\n\n")
    assert error_of(load_corpus, path) == f"{path}: the corpus is empty: no documents"


def test_jsonl_document_errors(files, error_of):
    cases = [
        ('["a"]', "line 1: expected an object, got a list"),
        (
            '{"text": "t"}',
            "line 1, field 'id': missing; expected a non-empty string (or '_id' as in BEIR, "
            "'docid' as in MS MARCO's segments)",
        ),
        ('{"_id": 7.5, "text": "t"}', "line 1, field '_id': expected a non-empty string, "
         "got 7.5"),
        ('{"id": "", "text": "t"}', "line 1, field 'id': expected a non-empty string, got \"\""),
        ('{"id": "a"}', "line 1, field 'text': missing; expected a string"),
        ('{"id": "a", "text": null}', "line 1, field 'text': expected a string, got null"),
        ('{"id": "a", "text": "t", "title": 3}', "line 1, field 'title': expected a string, got 3"),
        (
            '{"id": "a", "text": "t", "metadata": [1]}',
            "line 1, field 'metadata': expected an object, got a list",
        ),
    ]
    for line, expected in cases:
        path = files.text("docs.jsonl", line + "\n")
        assert error_of(load_corpus, path) == f"{path}, {expected}"


def test_jsonl_duplicate_document_id_names_both_lines(files, error_of):
    path = files.jsonl(
        "docs.jsonl",
        [{"_id": "a", "text": "x"}, "", {"_id": "b", "text": "y"}, {"_id": "a", "text": "z"}],
    )
    assert error_of(load_corpus, path) == (
        f"{path}, line 4, field '_id': duplicate id \"a\" (first at line 1) with a different "
        "text"
    )


def test_jsonl_duplicate_with_the_same_text_loads_once_with_a_warning(files, error_of):
    path = files.jsonl("docs.jsonl", [{"_id": "a", "text": "x"}, {"_id": "a", "text": "x"}])
    lenient = Leniency()
    assert [d.id for d in load_corpus(path, lenient).documents] == ["a"]
    assert lenient.messages() == [
        'documents repeated with the same id and text, loaded once: 1 ("a" (docs.jsonl line 2))']
    assert error_of(load_corpus, path, Leniency(strict=True)) == (
        f"{path}, line 2, field '_id': duplicate id \"a\" (first at line 1) (an error because "
        "of --strict)")


def test_integer_ids_are_read_as_strings_with_a_warning(files, error_of):
    path = files.jsonl("docs.jsonl", [{"_id": 7, "text": "t"}, {"_id": "8", "text": "u"},
                                      {"_id": 9, "text": "v"}])
    lenient = Leniency()
    assert [d.id for d in load_corpus(path, lenient).documents] == ["7", "8", "9"]
    assert lenient.messages() == [
        "integer ids read as strings: 2 (7 (docs.jsonl line 1), 9 (docs.jsonl line 3))"]
    assert error_of(load_corpus, path, Leniency(strict=True)) == (
        f"{path}, line 1, field '_id': expected a non-empty string, got the integer 7 (an "
        "error because of --strict)")


def test_empty_documents_are_left_out_with_a_warning(files, error_of):
    folder = files.beir(corpus=[{"_id": "d1", "title": "", "text": ""},
                                {"_id": "d2", "title": "T", "text": ""},
                                {"_id": "d3", "title": " ", "text": "\n"}])
    lenient = Leniency()
    corpus = load_corpus(folder, lenient)
    assert [d.id for d in corpus.documents] == ["d2"] and corpus.left_out == {"d1", "d3"}
    assert lenient.messages() == [
        "empty documents left out of the index (kept in the ground truth): 2 "
        '("d1" (corpus.jsonl line 1), "d3" (corpus.jsonl line 3))']
    assert error_of(load_corpus, folder, Leniency(strict=True)) == (
        f"{folder / 'corpus.jsonl'}, line 1, field 'text': document \"d1\" is empty: expected "
        "a non-empty string (or a non-empty 'title'), got \"\" (an error because of --strict)"
    )
    only = files.beir(corpus=[{"_id": "d1", "title": "", "text": ""}])
    assert error_of(load_corpus, only) == (
        f"{only / 'corpus.jsonl'}: the corpus is empty: no documents (1 empty ones)")
