"""Reading helpers: UTF-8 and BOM, JSON errors with positions, JSONL and line numbers."""

from __future__ import annotations

import pytest

from ragmark.data.files import describe, iter_jsonl, iter_lines, read_json, read_text


def test_read_text_drops_a_bom(files):
    path = files.text("a.txt", "\ufeffhello\nworld")
    assert read_text(path) == "hello\nworld"


def test_read_text_keeps_a_bom_that_is_not_at_the_start(files):
    path = files.text("a.txt", "a\ufeffb")
    assert read_text(path) == "a\ufeffb"


def test_windows_1252_text_is_not_utf8(files, error_of):
    path = files.text("a.txt", "first line\nna\xefve caf\xe9\n".encode("cp1252"))
    assert error_of(read_text, path) == (
        f"{path}, line 2: not valid UTF-8: byte 0xef at offset 13; save the file as UTF-8, "
        "or give --encoding NAME"
    )


def test_utf8_error_offset_counts_the_bom(files, error_of):
    path = files.text("a.txt", b"\xef\xbb\xbfab\xff")
    assert error_of(read_text, path) == (
        f"{path}, line 1: not valid UTF-8: byte 0xff at offset 5; save the file as UTF-8, "
        "or give --encoding NAME"
    )


def test_missing_file(files, error_of):
    path = files.path("nope.json")
    assert error_of(read_json, path) == f"{path}: no such file"


def test_a_folder_where_a_file_is_expected(files, error_of):
    path = files.path("sub")
    path.mkdir()
    assert error_of(read_text, path) == f"{path}: expected a file, found a folder"


def test_read_json_with_bom(files):
    path = files.text("a.json", '\ufeff[{"a": 1}]')
    assert read_json(path) == [{"a": 1}]


def test_malformed_json_gives_line_and_column(files, error_of):
    path = files.text("a.json", '[\n  {"a": 1}\n  {"b": 2}\n]')
    assert error_of(read_json, path) == (
        f"{path}, line 3: invalid JSON: Expecting ',' delimiter at column 3"
    )


def test_json_lines_in_a_json_file_get_a_hint(files, error_of):
    path = files.text("a.json", '{"a": 1}\n{"a": 2}\n')
    assert error_of(read_json, path) == (
        f"{path}, line 2: invalid JSON: Extra data at column 1 "
        "(for one JSON object a line, name the file .jsonl)"
    )


def test_empty_json_file(files, error_of):
    path = files.text("a.json", "  \n")
    assert error_of(read_json, path) == f"{path}: the file is empty"


def test_duplicate_key_in_json(files, error_of):
    path = files.text("a.json", '{"q1": {"query": "a"}, "q1": {"query": "b"}}')
    assert error_of(read_json, path) == f'{path}: duplicate key "q1" in an object'


def test_iter_lines_numbers_skip_blank_lines_and_strip_crlf(files):
    path = files.text("a.tsv", b"\xef\xbb\xbfa\tb\r\n\r\n  \nc\n")
    assert list(iter_lines(path)) == [(1, "a\tb"), (4, "c")]


def test_iter_lines_does_not_split_on_unicode_line_separators(files):
    path = files.text("a.jsonl", '{"t": "a\u2028b"}\n')
    assert [value for _, value in iter_jsonl(path)] == [{"t": "a\u2028b"}]


def test_iter_lines_utf8_error_names_line_and_file_offset(files, error_of):
    path = files.text("a.jsonl", b'{"a": 1}\n{"a": "\x93quoted\x94"}\n')
    assert error_of(lambda: list(iter_lines(path))) == (
        f"{path}, line 2: not valid UTF-8: byte 0x93 at offset 16; save the file as UTF-8, "
        "or give --encoding NAME"
    )


def test_jsonl_places_and_errors(files, error_of):
    path = files.text("a.jsonl", '{"a": 1}\n\n{"a": 2,}\n')
    assert error_of(lambda: list(iter_jsonl(path))) == (
        f"{path}, line 3: invalid JSON: Expecting property name enclosed in double quotes "
        "at column 9"
    )
    ok = files.text("b.jsonl", '\ufeff{"a": 1}\n\n{"a": 2}\n')
    assert [(w.line, v) for w, v in iter_jsonl(ok)] == [(1, {"a": 1}), (3, {"a": 2})]


def test_duplicate_key_in_jsonl_names_the_line(files, error_of):
    path = files.text("a.jsonl", '{"a": 1}\n{"id": "x", "id": "y"}\n')
    assert error_of(lambda: list(iter_jsonl(path))) == (
        f'{path}, line 2: duplicate key "id" in an object'
    )


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, "null"),
        (True, "true"),
        (False, "false"),
        (42, "42"),
        (1.5, "1.5"),
        ("", '""'),
        ("x" * 50, '"' + "x" * 37 + '..."'),
        ([1], "a list"),
        ({"a": 1}, "an object"),
    ],
)
def test_describe(value, text):
    assert describe(value) == text


def test_utf16_gets_a_hint(files, error_of):
    path = files.text("a.json", '[{"a": 1}]'.encode("utf-16"))
    assert error_of(read_json, path) == (
        f"{path}, line 1: not valid UTF-8: byte 0xff at offset 0; save the file as UTF-8 "
        "(it looks like UTF-16), or give --encoding NAME"
    )
    path = files.text("a.jsonl", '{"a": 1}\n'.encode("utf-16"))
    assert error_of(lambda: list(iter_jsonl(path))) == (
        f"{path}, line 1: not valid UTF-8: byte 0xff at offset 0; save the file as UTF-8 "
        "(it looks like UTF-16), or give --encoding NAME"
    )
