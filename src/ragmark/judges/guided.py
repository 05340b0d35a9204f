"""The guidance of the judge call under way (an aligned judge's examples and rules,
:mod:`ragmark.judges.guidance`): set for one call by ``guidance.aligned``, appended to
every prompt by :func:`~ragmark.judges.prompt.ask` through :func:`guided`, fitted to
the model's context window like every other text of the call (:func:`fitted`)."""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import replace
from typing import Any, TypeVar

from ragmark.case import JudgeCounts
from ragmark.judges.fit import floor_of
from ragmark.llm.window import CHARS_PER_TOKEN
from ragmark.llm.window import prompt_tokens as estimated

P = TypeVar("P")

CURRENT: ContextVar[Any] = ContextVar("ragmark_guidance", default=None)
"""The :class:`~ragmark.judges.guidance.Guidance` of the call under way, or None."""


def guided(prompt: P, guidance: Any = None) -> P:
    """``prompt`` with the guidance's text (default: the current one's) appended to its
    instruction (unchanged without one, and so are its cache keys)."""
    g = CURRENT.get() if guidance is None else guidance
    if g is None:
        return prompt
    return replace(prompt, instruction=prompt.instruction.rstrip()  # type: ignore[attr-defined, type-var]
                   + "\n\n" + g.text())


def fitted(prompt: P, item: Any, cap: int, window: int | None, counts: JudgeCounts) -> P:
    """``prompt`` guided by the current guidance, fitted to ``window``: when the whole
    guidance does not fit beside the item and an answer of the prompt's floor, it gets
    what the window leaves, and at least a third of the window (the judged texts are
    cut after, :mod:`ragmark.judges.fit`); its examples are shortened, then dropped, as
    :meth:`~ragmark.judges.guidance.Guidance.within` says, counted in ``counts``
    (``guidance_cut``, ``examples_dropped``)."""
    g = CURRENT.get()
    if g is None or window is None:
        return guided(prompt, g)
    whole = guided(prompt, g)
    floor = floor_of(prompt.output, cap)  # type: ignore[attr-defined]
    bare = estimated(prompt.render(item))  # type: ignore[attr-defined]
    if estimated(whole.render(item)) + floor <= window:  # type: ignore[attr-defined]
        return whole
    budget = max(window - floor - bare, (window - floor) // 3)
    chars = max(budget, 0) * CHARS_PER_TOKEN
    while True:  # the text joined to the instruction costs a little more than its length
        short, shortened, dropped = g.within(chars)
        over = 0 if short is None else estimated(
            guided(prompt, short).render(item)) - bare - budget  # type: ignore[attr-defined]
        if over <= 0 or chars <= 0:
            break
        chars -= over * CHARS_PER_TOKEN
    counts.guidance_cut += 1
    counts.examples_shortened += shortened
    counts.examples_dropped += dropped
    return prompt if short is None else guided(prompt, short)
