"""The only code that talks to an LLM: settings, an on-disk call cache, and an async
client for OpenAI-compatible servers and Ollama (concurrency limit, retries, costs)."""

from __future__ import annotations

from ragmark.llm.cache import LLMCache, cache_key
from ragmark.llm.client import LLMClient
from ragmark.llm.config import LLMSettings
from ragmark.llm.factory import open_client
from ragmark.llm.results import Estimate, LLMCallFailed, LLMResult, Stats, Usage

__all__ = [
    "Estimate",
    "LLMCache",
    "LLMCallFailed",
    "LLMClient",
    "LLMResult",
    "LLMSettings",
    "Stats",
    "Usage",
    "cache_key",
    "open_client",
]
