"""A context set carries the fields `ragmark testset` adds (type, difficulty, source_ids):
kept in the sample's extra fields, and checked when present."""

from __future__ import annotations

import json

import pytest

from ragmark.data import load_dataset
from ragmark.errors import DataError

ITEM = {"question": "When did the Vasa sink?",
        "ground_truth_contexts": ["The warship Vasa sank in Stockholm harbour in 1628."],
        "expected_answer": "In 1628.", "type": "factual", "difficulty": "easy",
        "source_ids": ["vasa.txt"]}


def write(tmp_path, item):
    p = tmp_path / "set.json"
    p.write_text(json.dumps([item]))
    return p


def test_the_testset_fields_are_kept(tmp_path):
    (sample,) = load_dataset(write(tmp_path, ITEM)).samples
    assert dict(sample.extra) == {"type": "factual", "difficulty": "easy",
                                  "source_ids": ["vasa.txt"]}
    assert sample.expected_answer == "In 1628."


@pytest.mark.parametrize(("field", "value", "message"), [
    ("type", 3, "field 'type': expected a non-empty string, got 3"),
    ("difficulty", " ", "field 'difficulty': expected a non-empty string"),
    ("source_ids", "vasa.txt", "field 'source_ids': expected a non-empty list of non-empty"),
    ("source_ids", ["vasa.txt", ""], "field 'source_ids[1]': expected a non-empty string"),
])
def test_bad_values_name_the_item_and_field(tmp_path, field, value, message):
    path = write(tmp_path, {**ITEM, field: value})
    with pytest.raises(DataError) as e:
        load_dataset(path)
    assert str(e.value).startswith(f"{path}, item 0, {message}")
