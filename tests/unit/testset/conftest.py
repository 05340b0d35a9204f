"""The testset tests' corpus: a folder of eight short documents, with no endpoint
variables set."""

from __future__ import annotations

import pytest
from testset_support import write_corpus


@pytest.fixture
def corpus(tmp_path, monkeypatch):
    for var in ("RAGMARK_LLM_BASE_URL", "RAGMARK_LLM_MODEL", "RAGMARK_LLM_API_KEY_ENV",
                "RAGMARK_LLM_PROVIDER"):
        monkeypatch.delenv(var, raising=False)
    return write_corpus(tmp_path / "corpus")
