"""The packaged demo data: corpus size, a valid keyword set, answerable questions."""

from __future__ import annotations

import json
from pathlib import Path

from ragmark.demo import demo_path
from ragmark.text import normalise


def test_demo_path_is_a_real_folder() -> None:
    root = demo_path()
    assert isinstance(root, Path) and root.is_dir()
    assert (root / "questions.json").is_file()
    files = sorted(p.name for p in (root / "corpus").glob("*.txt"))
    assert 4 <= len(files) <= 5
    for name in files:
        words = len((root / "corpus" / name).read_text(encoding="utf-8").split())
        assert 150 <= words <= 300, (name, words)


def test_demo_questions_are_a_valid_answerable_keyword_set() -> None:
    root = demo_path()
    items = json.loads((root / "questions.json").read_text(encoding="utf-8"))
    assert 6 <= len(items) <= 8
    assert len({item["id"] for item in items}) == len(items)
    for item in items:
        assert set(item) == {"id", "question", "expected_keywords", "must_be_grounded_in"}
        assert item["question"].strip() and item["expected_keywords"]
        gold = " ".join(
            (root / "corpus" / name).read_text(encoding="utf-8")
            for name in item["must_be_grounded_in"]
        )
        for keyword in item["expected_keywords"]:
            assert normalise(keyword) in normalise(gold), (item["id"], keyword)
