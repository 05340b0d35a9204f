"""Settings of an LLM endpoint. The API key itself is never stored: only the NAME of the
environment variable that holds it (``api_key_env``), read when a request is sent."""

from __future__ import annotations

import os
import re
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
)

from ragmark.errors import ConfigError
from ragmark.llm.providers import known, provider

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

# Where a field of the endpoint can be given (ragmark.llm.fields makes each from this):
FLAG = "flag"            # the --llm-NAME option of every command that calls a model
ENV = "env"              # the RAGMARK_LLM_NAME environment variable
TABLE = "table"          # the NAME key of a config's [llm] table
COMPONENT = "component"  # the NAME key of an llm generator's or reranker's own table
EVERYWHERE = (FLAG, ENV, TABLE, COMPONENT)


def _on(*where: str) -> dict[str, Any]:
    return {"on": list(where)}


def check_url(v: str | None) -> str | None:
    """An http(s) URL without a trailing slash."""
    if v is None:
        return None
    v = v.strip().rstrip("/")
    parts = urlsplit(v)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError("base_url must be an http:// or https:// URL")
    return v


def check_provider(v: str | None) -> str | None:
    """A known provider's name."""
    return None if v is None else known(v)


def check_env_name(v: str | None) -> str | None:
    """The NAME of an environment variable (None when blank); never echoes the value."""
    if v is None or not v.strip():
        return None
    v = v.strip()
    if not _ENV_NAME.match(v):
        raise ValueError(
            "api_key_env must be the NAME of an environment variable (letters, digits, "
            "underscores), not the key itself")
    return v


VALIDATORS = {"base_url": check_url, "provider": check_provider,
              "api_key_env": check_env_name}
"""The checks of a field beyond its type, shared by the settings and the ``[llm]`` table."""


class LLMSettings(BaseModel):
    """One LLM endpoint: where it is, which model, and how hard to try. The one
    declaration of the endpoint's fields: each field's type, default, limits and help,
    and where a user can give it (``json_schema_extra["on"]``). The ``--llm-*`` options,
    the ``[llm]`` table, the keys of an ``llm`` component's table, the ``RAGMARK_LLM_*``
    variables and the one resolver are made from it in :mod:`ragmark.llm.fields`.

    ``provider="openai"`` is any OpenAI-compatible server (``POST {base_url}/chat/completions``);
    ``"ollama"`` is Ollama's native API (``POST {base_url}/api/chat``). ``backoff_base`` and
    ``backoff_max`` (s) shape the exponential backoff with full jitter; a ``Retry-After``
    is honoured up to ``retry_after_max`` seconds. ``batch``: calls not in the cache go
    out as OpenAI Batch API jobs (:mod:`ragmark.llm.batch`), priced at
    ``1 - batch_discount`` of the interactive price. ``context_window``: see
    :mod:`ragmark.llm.window`.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", hide_input_in_errors=True)

    base_url: str = Field(description="OpenAI-compatible or Ollama base URL.",
                          json_schema_extra=_on(*EVERYWHERE))
    model: str = Field(min_length=1, description="Model name.",
                       json_schema_extra=_on(*EVERYWHERE))
    api_key_env: str | None = Field(
        default=None, description="NAME of the variable holding the API key.",
        json_schema_extra=_on(*EVERYWHERE))
    provider: str = Field(
        default="openai", description="Protocol of the endpoint (openai: any "
        "OpenAI-compatible server).", json_schema_extra=_on(*EVERYWHERE))
    concurrency: int = Field(default=8, ge=1, description="Calls in flight at once.",
                             json_schema_extra=_on(*EVERYWHERE))
    timeout: float = Field(default=60.0, gt=0, description="Seconds per call before it "
                           "is retried.", json_schema_extra=_on(*EVERYWHERE))
    max_retries: int = Field(default=4, ge=0, description="Retries of a call after a "
                             "timeout, 429 or 5xx.", json_schema_extra=_on(*EVERYWHERE))
    temperature: float = Field(default=0.0, ge=0)
    seed: int | None = 0
    prices: dict[str, tuple[float, float]] | None = Field(
        default=None, description="'PROMPT,COMPLETION[,BATCH_DISCOUNT]': $ per million "
        "tokens of the model, for the cost estimate, and the share a provider batch job "
        "takes off (default 0.5).", json_schema_extra=_on(FLAG, TABLE, COMPONENT))
    backoff_base: float = Field(default=1.0, ge=0)
    backoff_max: float = Field(default=30.0, ge=0)
    retry_after_max: float = Field(default=60.0, ge=0)
    structured: Literal["auto", "off"] = Field(
        default="auto", description="Send the judges' output schema in the form the "
        "endpoint takes, falling back when it refuses (auto), or never (off).",
        json_schema_extra=_on(*EVERYWHERE))
    batch: bool = Field(
        default=False, description="Send the judge calls not in the cache as OpenAI Batch "
        "API jobs (about half the price, answers within 24 h); stop and rerun to pick a "
        "job up.", json_schema_extra=_on(FLAG, TABLE))
    batch_discount: float = Field(
        default=0.5, ge=0, le=1, description="The share of the interactive price a batch "
        "job takes off.", json_schema_extra=_on(TABLE))
    batch_poll: float = Field(default=30.0, gt=0, description="Seconds between polls of "
                              "a batch job.", json_schema_extra=_on(ENV, TABLE))
    context_window: int | None = Field(
        default=None, gt=0, description="The model's context window in tokens, when the "
        "server does not say it (/models, /props, Ollama's num_ctx); judge calls are "
        "fitted in it, their texts cut when needed (counted in a note).",
        json_schema_extra=_on(FLAG, ENV, TABLE))
    max_tokens: int | None = Field(
        default=None, gt=0, description="Cap on each judge's JSON answer, in tokens "
        "(1,024 when not given; a yes/no answer keeps its cap of 16; lowered to what the "
        "context window leaves after the prompt).", json_schema_extra=_on(FLAG, ENV, TABLE))

    @field_validator(*VALIDATORS)
    @classmethod
    def _check(cls, v: Any, info: ValidationInfo) -> Any:
        return VALIDATORS[str(info.field_name)](v)

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

    def repeat(self, repeat: int, temperature: float | None = None) -> LLMSettings:
        """The settings of repeat ``repeat`` (0, 1, ...) of a judge asked again: the seed
        plus ``repeat`` (so each repeat is its own call, cached apart), at
        ``temperature`` when given."""
        return self.model_copy(update={
            "seed": (self.seed or 0) + repeat,
            **({"temperature": temperature} if temperature is not None else {})})


def display_url(url: str) -> str:
    """``url`` without any user:password part, for messages and results files."""
    parts = urlsplit(url)
    host = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))


def v1_hint(s: LLMSettings, status: int) -> str:
    """For a 404 from an OpenAI-compatible base URL with no version in its path: the
    likely fix (most servers serve the API under ``/v1``), else nothing."""
    if status != 404 or not provider(s.provider).versioned:
        return ""
    if re.search(r"/v\d+[a-z]*$", urlsplit(s.base_url).path.rstrip("/")):
        return ""
    return (f"; the base URL has no version path: OpenAI-compatible servers usually "
            f"serve the API under /v1 (try --llm-base-url {s.display_url.rstrip('/')}/v1)")
