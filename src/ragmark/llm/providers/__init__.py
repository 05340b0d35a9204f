"""The LLM providers ragmark speaks to, one module each (``openai``: any
OpenAI-compatible server; ``ollama``: Ollama's native API). A module of this package
with a ``PROVIDER`` (:class:`~ragmark.llm.providers.base.Provider`) is a provider; so
is one that a third-party package names in the ``ragmark.llm_provider`` entry-point
group. Found on first use, never at import."""

from __future__ import annotations

import importlib
import pkgutil

from ragmark.errors import ConfigError
from ragmark.extensions import Door
from ragmark.llm.providers.base import Provider


def _built_ins() -> list[tuple[str, Provider]]:
    """The providers this package's modules declare (``PROVIDER``)."""
    found = []
    for info in pkgutil.iter_modules(__path__):
        got = getattr(importlib.import_module(f"{__name__}.{info.name}"), "PROVIDER", None)
        if isinstance(got, Provider):
            found.append((got.name, got))
    return found


def _admit(given: object, plugin: bool) -> Provider:
    if not isinstance(given, Provider):
        raise ConfigError(f"an LLM provider must be a ragmark.llm.providers.base.Provider, "
                          f"got {given!r}")
    return given


PROVIDERS: Door[Provider] = Door("ragmark.llm_provider", _built_ins, admit=_admit,
                                 name_of=lambda p: p.name, error=ConfigError)
"""The LLM providers' door (:class:`ragmark.extensions.Door`): this package's modules
and the packages' ``ragmark.llm_provider`` entry points."""


def providers() -> dict[str, Provider]:
    """Every provider by name: the modules of this package, then the plugins."""
    return PROVIDERS.load()


def names() -> list[str]:
    """The providers' names, the default (``openai``) first, the others alphabetically."""
    return sorted(providers(), key=lambda n: (n != "openai", n))


def provider(name: str) -> Provider:
    """The provider called ``name``; a ConfigError naming the known ones otherwise."""
    found = providers().get(name)
    if found is None:
        raise ConfigError(f"unknown LLM provider {name!r}; known: "
                          f"{', '.join(names())}")
    return found


def known(name: str) -> str:
    """``name`` when a provider has it; a ValueError naming the known ones otherwise (for
    the settings' validators)."""
    if name not in providers():
        raise ValueError(f"provider must be one of {', '.join(names())}, got {name!r}")
    return name

