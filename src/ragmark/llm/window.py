"""The model's context window: where it comes from, and what fits in it.

A judge call asks for a completion of up to ``max_tokens`` tokens on top of its prompt,
and a server refuses (HTTP 400) a call whose prompt and completion do not fit the
model's window. The window comes, in this order, from ``[llm] context_window``
(``--llm-context-window``); from what the server says about itself when the endpoint is
probed before the first call: an OpenAI-compatible ``/models`` entry's
``max_model_len`` (vLLM), ``context_length`` (OpenRouter, LM Studio) or
``context_window``, llama.cpp's ``/props`` (``n_ctx``) when the models list is
llama.cpp's, Ollama's ``/api/show`` (the model's ``num_ctx`` parameter); and
last from the refusal itself, whose text names the window on vLLM and OpenAI ("maximum
context length is 2048 tokens"), llama-cpp-python ("exceed context window of 2048") and
llama.cpp ("available context size (2048 tokens)").

Tokens are estimated without the model's tokenizer, on the safe side: characters / 3
(+4 a message). English runs at about 4 characters a token, so the estimate leaves room.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

from ragmark.llm.protocol import estimate_tokens
from ragmark.llm.providers import provider
from ragmark.llm.providers.base import Served

CHARS_PER_TOKEN = 3
"""Characters per token of the safe estimate (English is about 4)."""

_REFUSALS = (
    re.compile(r"maximum context length is (\d+)", re.I),  # OpenAI, vLLM
    re.compile(r"context window of (\d+)", re.I),  # llama-cpp-python
    re.compile(r"context size \((\d+) tokens\)", re.I),  # llama.cpp server
    re.compile(r"context length of (?:only )?(\d+)", re.I),
    re.compile(r"\bn_ctx(?:_slot)?\s*[=:]\s*(\d+)", re.I),
)


def prompt_tokens(messages: Sequence[Mapping[str, Any]]) -> int:
    """The safe estimate of a prompt's tokens: characters / 3, plus 4 per message."""
    return estimate_tokens(messages, CHARS_PER_TOKEN)


def window_in_refusal(text: str) -> int | None:
    """The context window a server's refusal names ("maximum context length is 2048
    tokens"), or None."""
    for pattern in _REFUSALS:
        m = pattern.search(text)
        if m and int(m.group(1)) > 0:
            return int(m.group(1))
    return None


def known_window(client: Any) -> int | None:
    """The window the client has now, without asking the server: the settings', else
    one learnt earlier (from the server or a refusal)."""
    settings = getattr(client, "settings", None)
    if settings is not None and getattr(settings, "context_window", None):
        return int(settings.context_window)
    got = getattr(client, "window", None)
    return got if isinstance(got, int) and got > 0 else None


@asynccontextmanager
async def fitting_slot(client: Any) -> AsyncIterator[None]:
    """A place among the calls being fitted and sent, as many as the client sends at
    once: a judge call is fitted to the window known when its turn to be sent comes, not
    when it was made (made together, every call would be fitted before the first refusal
    named the window, and each would be refused once). A client without places (a dry
    run, a batch job's) fits at once."""
    slots = getattr(client, "fitting_slots", None)
    sem = slots() if callable(slots) else None
    if sem is None:
        yield
        return
    async with sem:
        yield


def learn(client: Any, window: int) -> None:
    """Remember ``window`` on the client (a refusal named it)."""
    client.window = window


async def from_probe(client: Any, models: Any) -> None:
    """Learn what the server says of itself when the probe found it answering: the
    window from its models list (``models``, the JSON of ``/models``), else llama.cpp's
    ``/props`` when the list is llama.cpp's, or Ollama's ``/api/show``; llama.cpp's
    parallel slots (``client.slots``); and its tokenizer endpoint, where it has one
    (``client.tokenize``: where; :mod:`ragmark.llm.tokens` counts with it). What it does
    not say stays unknown."""
    settings = client.settings
    if getattr(client, "probed", False):
        return
    ask = provider(settings.provider).window
    try:
        found = None if ask is None else await ask(settings, client._headers(), models)
    except Exception:  # a server that says nothing useful: it stays unknown
        found = None
    client.probed = True
    served = found if isinstance(found, Served) else Served(window=found or None)
    if served.window and known_window(client) is None:
        client.window = served.window
    client.slots = served.slots
    client.tokenize = served.tokenize
    forms = getattr(client, "forms", None)
    if served.form is not None and forms is not None and not forms.known(settings):
        forms.confirm(settings, served.form)
