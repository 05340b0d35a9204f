"""The guidance of the judge call under way (an aligned judge's examples and rules,
:mod:`ragmark.judges.guidance`): set for one call by ``guidance.aligned``, appended to
every prompt by :func:`~ragmark.judges.prompt.ask` through :func:`guided`."""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import replace
from typing import Any, TypeVar

P = TypeVar("P")

CURRENT: ContextVar[Any] = ContextVar("ragmark_guidance", default=None)
"""The :class:`~ragmark.judges.guidance.Guidance` of the call under way, or None."""


def guided(prompt: P) -> P:
    """``prompt`` with the current guidance's text appended to its instruction
    (unchanged without one, and so are its cache keys)."""
    g = CURRENT.get()
    if g is None:
        return prompt
    return replace(prompt, instruction=prompt.instruction.rstrip()  # type: ignore[attr-defined, type-var]
                   + "\n\n" + g.text())
