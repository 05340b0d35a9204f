"""Fixtures: a scripted local LLM server (see fake_server.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fake_server import FakeLLMServer


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    s = FakeLLMServer("openai").start()
    yield s
    s.stop()


@pytest.fixture
def ollama_server() -> Iterator[FakeLLMServer]:
    s = FakeLLMServer("ollama").start()
    yield s
    s.stop()
