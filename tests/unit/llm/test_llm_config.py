"""LLMSettings and the cache key."""

from __future__ import annotations

import pytest

from ragmark.errors import ConfigError
from ragmark.llm import LLMSettings, cache_key
from ragmark.llm.fields import resolve


def test_resolve_none_without_base_url() -> None:
    assert resolve({}, {"RAGMARK_LLM_MODEL": "m"}) is None


def test_resolve_reads_variables_under_what_is_given() -> None:
    env = {"RAGMARK_LLM_BASE_URL": "http://localhost:8000/v1/", "RAGMARK_LLM_MODEL": "qwen",
           "RAGMARK_LLM_API_KEY_ENV": "MY_KEY", "RAGMARK_LLM_CONCURRENCY": "3"}
    s = resolve({"concurrency": 2}, env)
    assert s is not None
    assert (s.base_url, s.model, s.api_key_env, s.provider) == (
        "http://localhost:8000/v1",
        "qwen",
        "MY_KEY",
        "openai",
    )
    assert (s.timeout, s.concurrency, s.max_retries, s.temperature) == (60.0, 2, 4, 0.0)


def test_resolve_without_model_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="RAGMARK_LLM_MODEL"):
        resolve({}, {"RAGMARK_LLM_BASE_URL": "http://localhost:8000/v1"})


def test_a_variable_of_the_wrong_type_names_the_variable() -> None:
    env = {"RAGMARK_LLM_BASE_URL": "http://h", "RAGMARK_LLM_MODEL": "m"}
    with pytest.raises(ConfigError, match="^RAGMARK_LLM_CONCURRENCY: expected a whole "
                       "number, got 'many'$"):
        resolve({}, {**env, "RAGMARK_LLM_CONCURRENCY": "many"})
    with pytest.raises(ConfigError, match="^RAGMARK_LLM_TIMEOUT: expected a number, got "
                       "'soon'$"):
        resolve({}, {**env, "RAGMARK_LLM_TIMEOUT": "soon"})
    with pytest.raises(ConfigError, match="^RAGMARK_LLM_STRUCTURED: expected one of auto, "
                       "off, got 'maybe'$"):
        resolve({}, {**env, "RAGMARK_LLM_STRUCTURED": "maybe"})


def test_bad_url_is_refused() -> None:
    with pytest.raises(ValueError, match="http"):
        LLMSettings(base_url="localhost:8000", model="m")


def test_display_url_hides_credentials() -> None:
    s = LLMSettings(base_url="https://user:pw@host.example/v1", model="m")
    assert s.display_url == "https://host.example/v1"


def test_cache_key_is_canonical_and_keyed_by_endpoint() -> None:
    m = [{"role": "user", "content": "hi"}]
    url = "http://a.example/v1"
    a = cache_key("openai", url, "m", m, {"temperature": 0.0, "max_tokens": 5})
    b = cache_key(
        "openai", url + "/", "m", [{"content": "hi", "role": "user"}],
        {"max_tokens": 5, "temperature": 0.0},
    )
    assert a == b and len(a) == 64
    assert a != cache_key("ollama", url, "m", m, {"temperature": 0.0, "max_tokens": 5})
    assert a != cache_key("openai", url, "m", m, {"temperature": 0.0, "max_tokens": 6})
    assert a != cache_key("openai", url, "m2", m, {"temperature": 0.0, "max_tokens": 5})
    # another server with the same model name is another cache entry
    assert a != cache_key("openai", "http://b.example/v1", "m", m,
                          {"temperature": 0.0, "max_tokens": 5})
    # credentials never enter the key: the same server with or without them is one entry
    assert a == cache_key("openai", "http://user:secret@a.example/v1", "m", m,
                          {"temperature": 0.0, "max_tokens": 5})
