"""Settings of an LLM endpoint. The API key itself is never stored: only the NAME of the
environment variable that holds it (``api_key_env``), read when a request is sent."""

from __future__ import annotations

import os
import re
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ragmark.errors import ConfigError

BASE_URL_ENV = "RAGMARK_LLM_BASE_URL"
MODEL_ENV = "RAGMARK_LLM_MODEL"
API_KEY_ENV_ENV = "RAGMARK_LLM_API_KEY_ENV"
PROVIDER_ENV = "RAGMARK_LLM_PROVIDER"

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")



class LLMSettings(BaseModel):
    """One LLM endpoint: where it is, which model, and how hard to try.

    ``provider="openai"`` is any OpenAI-compatible server (``POST {base_url}/chat/completions``);
    ``"ollama"`` is Ollama's native API (``POST {base_url}/api/chat``). ``prices`` maps a
    model name to (prompt $, completion $) per million tokens. ``backoff_base`` and
    ``backoff_max`` (s) shape the exponential backoff with full jitter; a ``Retry-After``
    is honoured up to ``retry_after_max`` seconds. ``structured="auto"`` sends a judge's
    output schema in the form the endpoint accepts (:mod:`ragmark.llm.structured`);
    ``"off"`` never sends one. ``batch``: calls not in the cache go out as OpenAI Batch
    API jobs (:mod:`ragmark.llm.batch`), priced at ``1 - batch_discount`` of the
    interactive price, their status polled every ``batch_poll`` seconds.
    ``context_window`` (tokens) is the model's window when the server does not say it
    (:mod:`ragmark.llm.window`); ``max_tokens`` caps every JSON judge answer (default
    1,024; a yes/no answer keeps its cap of 16). Judge calls are fitted in the window.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", hide_input_in_errors=True)

    base_url: str
    model: str = Field(min_length=1)
    api_key_env: str | None = None
    provider: str = "openai"
    timeout: float = Field(default=60.0, gt=0)
    concurrency: int = Field(default=8, ge=1)
    max_retries: int = Field(default=4, ge=0)
    temperature: float = Field(default=0.0, ge=0)
    seed: int | None = 0
    prices: dict[str, tuple[float, float]] | None = None
    backoff_base: float = Field(default=1.0, ge=0)
    backoff_max: float = Field(default=30.0, ge=0)
    retry_after_max: float = Field(default=60.0, ge=0)
    structured: Literal["auto", "off"] = "auto"
    batch: bool = False
    batch_discount: float = Field(default=0.5, ge=0, le=1)
    batch_poll: float = Field(default=30.0, gt=0)
    context_window: int | None = Field(default=None, gt=0)
    max_tokens: int | None = Field(default=None, gt=0)

    @field_validator("base_url")
    @classmethod
    def _check_url(cls, v: str) -> str:
        v = v.strip().rstrip("/")
        parts = urlsplit(v)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError("base_url must be an http:// or https:// URL")
        return v

    @field_validator("provider")
    @classmethod
    def _check_provider(cls, v: str) -> str:
        from ragmark.llm.providers import known

        return known(v)

    @field_validator("api_key_env")
    @classmethod
    def _check_env_name(cls, v: str | None) -> str | None:
        if v is None or not v.strip():
            return None
        v = v.strip()
        if not _ENV_NAME.match(v):
            # never echo the value: it may be a key pasted by mistake
            raise ValueError(
                "api_key_env must be the NAME of an environment variable (letters, digits, "
                "underscores), not the key itself"
            )
        return v

    @property
    def display_url(self) -> str:
        """``base_url`` without any user:password part, for messages."""
        return display_url(self.base_url)

    def api_key(self) -> str | None:
        """The key from ``$api_key_env``; None when no variable is named.

        Raises ConfigError (naming the variable, never a value) when it is unset or empty.
        """
        if self.api_key_env is None:
            return None
        key = os.environ.get(self.api_key_env, "").strip()
        if not key:
            raise ConfigError(
                f"the LLM API key variable {self.api_key_env} is not set (or empty); "
                f"export {self.api_key_env}=... or change api_key_env"
            )
        return key

    def price(self) -> tuple[float, float] | None:
        """(prompt, completion) $ per million tokens of this model, when known."""
        if not self.prices:
            return None
        return self.prices.get(self.model)

    @classmethod
    def from_env(cls, **overrides: object) -> LLMSettings | None:
        """Settings from ``RAGMARK_LLM_BASE_URL``, ``RAGMARK_LLM_MODEL``,
        ``RAGMARK_LLM_API_KEY_ENV`` (and optionally ``RAGMARK_LLM_PROVIDER``); None when
        no base URL is configured. ``overrides`` set any other field."""
        base_url = os.environ.get(BASE_URL_ENV, "").strip()
        if not base_url:
            return None
        model = os.environ.get(MODEL_ENV, "").strip()
        if not model and "model" not in overrides:
            raise ConfigError(f"{BASE_URL_ENV} is set but {MODEL_ENV} is not; name the model")
        values: dict[str, object] = {"base_url": base_url, "model": model}
        key_env = os.environ.get(API_KEY_ENV_ENV, "").strip()
        if key_env:
            values["api_key_env"] = key_env
        provider = os.environ.get(PROVIDER_ENV, "").strip().lower()
        if provider:
            values["provider"] = provider
        values.update(overrides)
        try:
            return cls.model_validate(values)
        except ValueError as e:
            raise ConfigError(f"LLM settings from the environment: {e}") from None


def component_settings(component: str, **given: object) -> LLMSettings:
    """Settings of a pipeline component that calls an LLM (the ``llm`` generator or
    reranker): the parameters of its config table, the rest from ``RAGMARK_LLM_*``.

    With ``base_url`` in ``given`` the environment is not read; without either it is a
    configuration error naming the table to fill in.
    """
    given = {k: v for k, v in given.items() if v is not None}
    settings = LLMSettings.from_env(**given) if "base_url" not in given else None
    if settings is not None:
        return settings
    if "base_url" not in given:
        raise ConfigError(
            f"the {component} needs an endpoint: set base_url and model in its config "
            f"table, or {BASE_URL_ENV} and {MODEL_ENV}"
        )
    if "model" not in given:
        raise ConfigError(f"the {component} needs a model: set 'model' in its config table")
    try:
        return LLMSettings.model_validate(given)
    except ValueError as e:
        raise ConfigError(f"{component}: {e}") from None


def endpoint_settings(component: str, **given: object) -> LLMSettings:
    """Settings of a component that calls a model behind an API other than the chat LLM
    (an embedding or rerank endpoint): ``base_url`` and ``model`` must be in its own
    config table (``RAGMARK_LLM_*`` names the chat model, not this one)."""
    given = {k: v for k, v in given.items() if v is not None}
    for key in ("base_url", "model"):
        if key not in given:
            raise ConfigError(f"the {component} needs '{key}' in its config table")
    try:
        return LLMSettings.model_validate(given)
    except ValueError as e:
        raise ConfigError(f"{component}: {_first_error(e)}") from None


def _first_error(e: ValueError) -> str:
    errors = getattr(e, "errors", None)
    if errors is None:
        return str(e)
    parts = []
    for err in errors():
        where = ".".join(str(p) for p in err["loc"])
        parts.append(f"{where}: {str(err['msg']).removeprefix('Value error, ')}")
    return "; ".join(parts)


def display_url(url: str) -> str:
    """``url`` without any user:password part, for messages and results files."""
    parts = urlsplit(url)
    host = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))


def v1_hint(s: LLMSettings, status: int) -> str:
    """For a 404 from an OpenAI-compatible base URL with no version in its path: the
    likely fix (most servers serve the API under ``/v1``), else nothing."""
    from ragmark.llm.providers import provider

    if status != 404 or not provider(s.provider).versioned:
        return ""
    if re.search(r"/v\d+[a-z]*$", urlsplit(s.base_url).path.rstrip("/")):
        return ""
    return (f"; the base URL has no version path: OpenAI-compatible servers usually "
            f"serve the API under /v1 (try --llm-base-url {s.display_url.rstrip('/')}/v1)")
