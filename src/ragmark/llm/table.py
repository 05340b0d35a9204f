"""The ``[llm]`` table of a config file: the LLM endpoint its judges (and its ``llm``
generator and reranker) use, every field optional."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ragmark.llm.providers import known


class LLMTable(BaseModel):
    """The ``[llm]`` table: the endpoint of the judges, and of the ``llm`` generator and
    reranker for what their own tables do not give. Command-line flags override it; it
    overrides ``RAGMARK_LLM_*``. ``prices``: model -> [prompt, completion] $ per million
    tokens."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    base_url: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    provider: str | None = None  # an LLM provider's name (ragmark.llm.providers)
    concurrency: int | None = Field(None, ge=1)
    timeout: float | None = Field(None, gt=0)
    max_retries: int | None = Field(None, ge=0)
    prices: dict[str, tuple[float, float]] | None = None
    structured: Literal["auto", "off"] | None = None
    batch: bool | None = None
    batch_discount: float | None = Field(None, ge=0, le=1)
    batch_poll: float | None = Field(None, gt=0)
    context_window: int | None = Field(None, gt=0)
    max_tokens: int | None = Field(None, gt=0)

    @field_validator("provider")
    @classmethod
    def _known_provider(cls, v: str | None) -> str | None:
        return None if v is None else known(v)

    def endpoint(self) -> dict[str, Any]:
        """The fields that are set (the ``llm`` components' parameters; the batch
        settings, the judges' answer cap and the window they are fitted in are the
        judges' alone: the generator and rerankers stay interactive)."""
        return {k: v for k, v in self.model_dump().items()
                if v is not None and not k.startswith("batch")
                and k not in ("max_tokens", "context_window")}
