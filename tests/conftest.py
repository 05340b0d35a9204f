from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT / ".." / "shared" / "data"
SCIFACT = SHARED_DATA / "scifact"


@pytest.fixture(autouse=True)
def _ragmark_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """Every cache of a test lives in a temporary RAGMARK_HOME."""
    monkeypatch.setenv("RAGMARK_HOME", str(tmp_path_factory.mktemp("ragmark_home")))


@pytest.fixture(scope="session")
def scifact() -> Path:
    if not (SCIFACT / "corpus.jsonl").exists():
        pytest.skip(f"SciFact not found at {SCIFACT} (CI has it beside the project as ../shared)")
    return SCIFACT
