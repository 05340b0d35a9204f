"""An LLM endpoint as a component's config table gives it (the ``llm`` generator's, the
``llm`` reranker's): one frozen value whose keys are the endpoint's fields declared on
COMPONENT (:mod:`ragmark.llm.fields`), resolved into :class:`~ragmark.llm.LLMSettings`
with what it does not give taken from ``RAGMARK_LLM_*``."""

from __future__ import annotations

import os
from dataclasses import field, make_dataclass
from typing import TYPE_CHECKING, Any

from ragmark.errors import ConfigError
from ragmark.llm.config import COMPONENT, LLMSettings
from ragmark.llm.fields import MODEL_ENV, SET_ENDPOINT, given_on, resolve


class _Endpoint:
    """Where a component asks its LLM: ``base_url`` and ``model``, the variable holding
    the key (``api_key_env``), the ``provider`` (``openai``: any OpenAI-compatible
    server; ``ollama``), the limits (``concurrency``, ``max_retries``, ``timeout``),
    ``prices`` ($ per million input and output tokens by model) and the ``structured``
    output form. A key left out comes from the ``RAGMARK_LLM_*`` variable of the same
    field (``RAGMARK_LLM_TIMEOUT`` ...), as for the judges."""

    def given(self) -> dict[str, Any]:
        """The endpoint's keys this table gives."""
        return {f.name: getattr(self, f.name) for f in given_on(COMPONENT)
                if getattr(self, f.name) is not None}

    def endpoint(self) -> Endpoint:
        """The endpoint's keys alone (of a table that has more)."""
        return Endpoint(**self.given())

    def settings(self, component: str) -> LLMSettings:
        """The settings ``component`` (named in errors) calls; a ConfigError naming the
        table to fill in when there is no endpoint."""
        given = self.given()
        got = resolve(given, os.environ, scope=COMPONENT,
                      origin={k: f"{component} {k}" for k in given},
                      no_model=f"the {component} needs a model: set 'model' in its config "
                      f"table, or {MODEL_ENV}")
        if got is None:
            raise ConfigError(f"the {component} needs an endpoint: set base_url and model "
                              f"in its config table, or {SET_ENDPOINT.removeprefix('set ')}")
        return got


if TYPE_CHECKING:
    Endpoint = _Endpoint
else:
    Endpoint = make_dataclass(
        "Endpoint", [(f.name, f.info.annotation | None, field(default=None))
                     for f in given_on(COMPONENT)],
        bases=(_Endpoint,), frozen=True, kw_only=True)
    Endpoint.__module__ = __name__
    Endpoint.__doc__ = _Endpoint.__doc__

__all__ = ["Endpoint"]
