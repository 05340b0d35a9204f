"""What an LLM provider is to ragmark: the paths of its API and how its requests and
responses look. Each provider is one module of :mod:`ragmark.llm.providers` with a
``PROVIDER`` (third-party packages add theirs through the ``ragmark.llm_provider``
entry-point group)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragmark.llm.results import Usage

Message = Mapping[str, Any]


class ResponseError(ValueError):
    """A 200 response whose body is not the expected shape."""


@dataclass(frozen=True)
class Provider:
    """One provider's wire format.

    ``request_body(model, messages, params)``: a chat request, ``params`` in OpenAI's
    names (``max_tokens``, ``response_format``, ...); ``parse_chat(data)``: the answer's
    text (None for none) and usage; ``embed_body(model, texts, dimensions)`` and
    ``embeddings_of(data)``: an embedding request and the raw vectors (one list per text,
    or one list per token) with usage; ``model_names(data)``: the models its list
    names; ``forms``: the structured-output forms it takes, in the order tried
    (:mod:`ragmark.llm.structured`); ``versioned``: its base URLs end in a version
    (``/v1``), so a 404 from one without is worth a hint; ``window(settings, headers,
    models)``: the model's context window where the API tells it (None: unknown)."""

    name: str
    chat_path: str
    models_path: str
    embed_path: str
    forms: tuple[str, ...]
    request_body: Callable[[str, Sequence[Message], Mapping[str, Any]], dict[str, Any]]
    parse_chat: Callable[[Any], tuple[Any, Usage]]
    embed_body: Callable[[str, Sequence[str], int | None], dict[str, Any]]
    embeddings_of: Callable[[Any], tuple[list[Any], Usage]]
    model_names: Callable[[Any], set[str]]
    versioned: bool = False
    window: Callable[[Any, Mapping[str, str], Any], Awaitable[int | Served | None]] | None = None
    alternatives: Callable[[Any], Any] | None = None
    """The hesitations of a chat response (:func:`ragmark.llm.logprobs.compact`), for a
    provider whose API gives log-probabilities when asked (``logprobs``,
    ``top_logprobs``); None: it gives none, and is not asked."""


@dataclass(frozen=True)
class Served:
    """What a server says of itself when it is probed: the model's context ``window``
    (tokens), its parallel ``slots`` (llama.cpp's ``total_slots``), and where it counts
    tokens with the model's own tokenizer: ``tokenize`` is (URL, the body's field for
    the text) of an endpoint that answers ``{"tokens": [...]}`` or ``{"count": n}``."""

    window: int | None = None
    slots: int | None = None
    tokenize: tuple[str, str] | None = None
    form: str | None = None
    """The structured-output form to send first (llama.cpp: ``json_object``, whose
    schema a numbered answer's entries are pinned in, where its ``json_schema`` form
    lets a small model repeat a number)."""


def positive(value: Any) -> int | None:
    """``value`` as a positive integer, else None."""
    try:
        n = int(value)
    except (TypeError, ValueError):
        return None
    return n if n > 0 else None
