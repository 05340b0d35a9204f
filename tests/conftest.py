from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings
from support.fake_llm_server import FakeLLMServer

pytest_plugins = ["pytester"]

# the RAGAS library the comparisons import sends usage events unless told not to
os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT / ".." / "shared" / "data"
SCIFACT = SHARED_DATA / "scifact"

# No per-example deadline: on a loaded two-core machine a first example that takes 276 ms
# failed a property that holds (hypothesis's default deadline is 200 ms).
settings.register_profile("ragmark", deadline=None)
settings.load_profile("ragmark")


@pytest.fixture(autouse=True)
def _ragmark_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """Every cache of a test lives in a temporary RAGMARK_HOME, and its run history in a
    temporary file (never in the project folder)."""
    monkeypatch.setenv("RAGMARK_HOME", str(tmp_path_factory.mktemp("ragmark_home")))
    monkeypatch.setenv("RAGMARK_HISTORY",
                       str(tmp_path_factory.mktemp("history") / "history.sqlite"))


@pytest.fixture(autouse=True)
def _criteria_forgotten():
    """The judges a test's config defined ([judges.NAME] criteria) are forgotten after
    it: another test's catalogue (``--metrics all``) does not hold them."""
    yield
    import sys

    names = sys.modules.get("ragmark.metrics.names")
    if names is None:
        return
    door = names.METRICS
    for name, source in list(door.sources.items()):
        if source.startswith("config"):
            door.forget(name)


@pytest.fixture
def ragas_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
               ) -> None:
    """The RAGAS library writes a user id file into the user's data folder even when told
    not to track: a test's goes to a temporary one (XDG_DATA_HOME)."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("xdg_data")))


@pytest.fixture(scope="session")
def scifact() -> Path:
    if not (SCIFACT / "corpus.jsonl").exists():
        pytest.skip(f"SciFact not found at {SCIFACT} (CI has it beside the project as ../shared)")
    return SCIFACT


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    """A scripted local server speaking the OpenAI chat-completions protocol."""
    s = FakeLLMServer("openai").start()
    yield s
    s.stop()


@pytest.fixture
def ollama_server() -> Iterator[FakeLLMServer]:
    """A scripted local server speaking Ollama's native API."""
    s = FakeLLMServer("ollama").start()
    yield s
    s.stop()
