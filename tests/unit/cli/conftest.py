"""A two-question context set for the CLI's LLM tests, with no RAGMARK_LLM_* set."""

from __future__ import annotations

import json

import pytest

ITEMS = [
    {"question": "When should metformin be avoided?",
     "ground_truth_contexts": ["Metformin is contraindicated in severe renal impairment."],
     "expected_answer": "In severe renal impairment."},
    {"question": "What is the ICD-10 code for type 2 diabetes?",
     "ground_truth_contexts": ["The ICD-10 code for type 2 diabetes mellitus is E11."],
     "expected_answer": "E11"},
]


@pytest.fixture
def dataset(tmp_path, monkeypatch):
    for var in ("RAGMARK_LLM_BASE_URL", "RAGMARK_LLM_MODEL", "RAGMARK_LLM_API_KEY_ENV"):
        monkeypatch.delenv(var, raising=False)
    p = tmp_path / "set.json"
    p.write_text(json.dumps(ITEMS))
    return p
