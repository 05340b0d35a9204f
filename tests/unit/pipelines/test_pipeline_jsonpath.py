from __future__ import annotations

import pytest

from ragmark.pipelines.jsonpath import JsonPath, PathError

DOC = {
    "data": {
        "answer": "BM25",
        "sources": [{"text": "first", "id": 7}, {"text": "second", "id": 8}],
    },
    "hits": [{"chunks": ["a", "b"]}, {"chunks": []}, {"chunks": ["c"]}],
    "weird key!": {"x": 1},
}


@pytest.mark.parametrize(("path", "value"), [
    ("data.answer", "BM25"),
    ("$.data.answer", "BM25"),
    ("data.sources[0].text", "first"),
    ("data.sources[-1].id", 8),
    ("data.sources[*].text", ["first", "second"]),
    ("hits[*].chunks[*]", ["a", "b", "c"]),  # a second [*] flattens
    ("hits[1].chunks[*]", []),
    ("weird key!.x", 1),
    ("$", DOC),
])
def test_paths_resolve(path, value):
    assert JsonPath.parse(path).resolve(DOC) == value


def test_a_path_can_start_with_an_index_of_a_top_level_list():
    assert JsonPath.parse("[1].a").resolve([{"a": 1}, {"a": 2}]) == 2
    assert JsonPath.parse("$[*]").resolve([1, 2]) == [1, 2]


@pytest.mark.parametrize(("path", "message"), [
    ("data.anwser", "no key 'anwser' at 'data' (keys there: 'answer', 'sources')"),
    ("data.answer.text", "'data.answer' is a string, not an object with key 'text'"),
    ("data.sources[2]", "index [2] is out of range at 'data.sources' (a list of 2)"),
    ("data[*]", "[*] needs a list at 'data', found an object"),
    ("data.sources[*].title", "no key 'title' at 'data.sources[0]' (keys there: 'text', 'id')"),
    ("answer", "no key 'answer' at the top level (keys there: 'data', 'hits', 'weird key!')"),
])
def test_errors_say_where_the_path_stopped_and_what_was_there(path, message):
    with pytest.raises(PathError) as e:
        JsonPath.parse(path).resolve(DOC)
    assert str(e.value) == message


@pytest.mark.parametrize(("path", "why"), [
    ("", "it is empty"),
    ("a..b", "a '.' at position 2 must follow a key or an index"),
    ("a.", "it ends with '.'"),
    (".a", "a '.' at position 0 must follow a key or an index"),
    ("a.[0]", "an index must follow a key, not '.', at position 2"),
    ("a[x]", "unexpected '[' at position 1"),
    ("a]", "unexpected ']' at position 1"),
    ("$a", "a '.' must come before the key 'a'"),
    ("a[0]b", "a '.' must come before the key 'b'"),
])
def test_bad_syntax_is_a_value_error_that_shows_the_syntax(path, why):
    with pytest.raises(ValueError) as e:
        JsonPath.parse(path)
    assert str(e.value).startswith(f"invalid path {path!r}: {why}; a path is dotted keys")
    assert "'data.sources[*].text'" in str(e.value)
