"""Nuggets in an evaluation set and in nugget files as nuggetizer writes them (issue 38):
read as they are, bad ones refused with the place and the field."""

from __future__ import annotations

import json

import pytest

from ragmark.data.files import Where
from ragmark.data.nugget_files import MOST_NUGGETS, nuggets_of, read_nugget_file
from ragmark.errors import DataError
from ragmark.types import Nugget

HERE = Where("set.json", item=3)


def test_a_questions_nuggets_are_read_with_their_importance():
    got = nuggets_of([{"text": " Python is a language ", "importance": "VITAL"},
                      {"text": "made in 1991", "importance": "okay", "assignment": "support"}],
                     HERE)
    assert got == (Nugget("Python is a language", "vital"), Nugget("made in 1991", "okay"))


@pytest.mark.parametrize(("value", "field", "says"), [
    ([], "nuggets", "expected a non-empty list of {text, importance} objects, got an empty "
                    "list"),
    (["a fact"], "nuggets[0]", "expected an object {text, importance}"),
    ([{"text": "a", "importance": "failed"}], "nuggets[0].importance",
     'expected one of vital, okay, got "failed"'),
    ([{"text": "", "importance": "okay"}], "nuggets[0].text", "expected a non-empty string"),
    ([{"text": "A fact.", "importance": "okay"}, {"text": "a  fact.", "importance": "vital"}],
     "nuggets[1].text", "the same nugget as nuggets[0]"),
    ([{"text": f"fact {i}", "importance": "okay"} for i in range(MOST_NUGGETS + 1)],
     "nuggets", "31 nuggets; TREC RAG allows at most 30 a question"),
])
def test_bad_nuggets_are_refused_with_the_place_and_field(value, field, says):
    with pytest.raises(DataError) as e:
        nuggets_of(value, HERE)
    assert e.value.field == field and e.value.item == 3
    assert says in str(e.value)


def test_a_nuggetizer_file_is_read_by_question(tmp_path):
    path = tmp_path / "nuggets.jsonl"
    path.write_text(
        json.dumps({"query": "What is Python?", "qid": "q1", "nuggets": [
            {"text": "Python is a programming language", "importance": "vital"}]}) + "\n"
        # an older nuggetizer wrote the query as an object with its qid
        + json.dumps({"query": {"qid": 2, "text": "Who made it?"}, "nuggets": [
            {"text": "Guido van Rossum made it", "importance": "okay",
             "assignment": "support"}]}) + "\n")
    assert read_nugget_file(path) == {
        "q1": (Nugget("Python is a programming language", "vital"),),
        "2": (Nugget("Guido van Rossum made it", "okay"),)}


def test_a_question_named_twice_in_a_nugget_file_is_refused(tmp_path):
    path = tmp_path / "nuggets.jsonl"
    line = json.dumps({"qid": "q1", "nuggets": [{"text": "x y", "importance": "vital"}]})
    path.write_text(line + "\n" + line + "\n")
    with pytest.raises(DataError, match=r'question "q1" again \(first at line 1\)') as e:
        read_nugget_file(path)
    assert e.value.line == 2
    path.write_text(json.dumps({"nuggets": []}) + "\n")
    with pytest.raises(DataError, match="expected the question's id"):
        read_nugget_file(path)


def test_a_set_with_bad_nuggets_exits_2_naming_the_item(tmp_path, capsys):
    from support.cli import run_cli

    ds = tmp_path / "set.json"
    ds.write_text(json.dumps([{"id": "q1", "question": "Who?", "ground_truth_contexts": [
        "A passage long enough to be matched by a chunk."], "nuggets": [
        {"text": "someone", "importance": "high"}]}]))
    code, _, err = run_cli(["run", "--dataset", str(ds), "--metrics", "nuggets"], capsys)
    assert code == 2
    assert "set.json" in err and "item 0" in err and "nuggets[0].importance" in err
    assert "Traceback" not in err
