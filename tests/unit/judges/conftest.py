"""Fixtures: a client pointed at the scripted local LLM server (tests/support)."""

from __future__ import annotations

import pytest
from support.fake_llm_server import FakeLLMServer

from ragmark.llm import LLMClient, LLMSettings


@pytest.fixture
def client(server: FakeLLMServer) -> LLMClient:
    settings = LLMSettings(
        base_url=server.url,
        model="test-model",
        timeout=5.0,
        max_retries=1,
        backoff_base=0.01,
        backoff_max=0.02,
    )
    return LLMClient(settings, use_cache=False)
