"""An LLM endpoint as a component's config table gives it (the ``llm`` generator's, the
``llm`` reranker's): one frozen value, resolved into :class:`~ragmark.llm.LLMSettings`
with what it does not give taken from ``RAGMARK_LLM_*``."""

from __future__ import annotations

from dataclasses import dataclass, fields

from ragmark.llm.config import LLMSettings, component_settings


@dataclass(frozen=True, kw_only=True)
class Endpoint:
    """Where a component asks its LLM: ``base_url`` and ``model``, the variable holding
    the key (``api_key_env``), the ``provider`` (``openai``: any OpenAI-compatible
    server; ``ollama``), the limits (``concurrency``, ``max_retries``, ``timeout``),
    ``prices`` ($ per million input and output tokens by model) and the ``structured``
    output form. A key left out comes from ``RAGMARK_LLM_*`` unless ``base_url`` is
    given."""

    base_url: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    provider: str | None = None
    concurrency: int | None = None
    max_retries: int | None = None
    timeout: float | None = None
    prices: dict[str, tuple[float, float]] | None = None
    structured: str | None = None

    def endpoint(self) -> Endpoint:
        """The endpoint's keys alone (of a table that has more)."""
        return Endpoint(**{f.name: getattr(self, f.name) for f in fields(Endpoint)})

    def settings(self, component: str) -> LLMSettings:
        """The settings ``component`` (named in errors) calls; a ConfigError naming the
        table to fill in when there is no endpoint."""
        return component_settings(component, **{f.name: getattr(self, f.name)
                                                 for f in fields(Endpoint)})
