"""The data's language, told to a judge once: whoever judges a case sets it
(:func:`speaking`), and :func:`ragmark.judges.prompt.ask` tells every prompt it sends
(:func:`in_language`)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import replace
from typing import Any, Protocol, TypeVar, cast

from ragmark.languages import language_name


class _Instructed(Protocol):
    """A prompt as far as the language is concerned (:class:`ragmark.judges.prompt.Prompt`)."""

    @property
    def instruction(self) -> str: ...

    @property
    def writes(self) -> str | None: ...


P = TypeVar("P", bound=_Instructed)


LANGUAGE: ContextVar[str | None] = ContextVar("ragmark_judged_language", default=None)
"""The language of the case being judged: set once for a case by whoever judges it
(:func:`speaking`: the run's judging, the refusal judge, the label runs), read by
:func:`ask`, which tells every prompt (:func:`in_language`)."""


@contextmanager
def speaking(language: str | None) -> Iterator[None]:
    """Judge in ``language`` (the data's) inside the block; None: no language stated."""
    token = LANGUAGE.set(language)
    try:
        yield
    finally:
        LANGUAGE.reset(token)


def shared_language(configs: Iterable[Any]) -> str | None:
    """The data's language for work over several configs at once (a compare's pairwise
    judging, the label runs): the one their ``language`` states, None when they state
    none or differ."""
    stated = {getattr(c, "language", None) for c in configs}
    return stated.pop() if len(stated) == 1 else None


W = TypeVar("W", bound=Callable[..., Any])


def in_their_language(work: W) -> W:
    """``work(plan, ...)`` over several configs (``plan.configs``) judged in their
    data's language (:func:`shared_language`): how the label runs and a compare's
    pairwise judging are told it."""

    @functools.wraps(work)
    def told(plan: Any, *args: Any, **kwargs: Any) -> Any:
        with speaking(shared_language(plan.configs)):
            return work(plan, *args, **kwargs)

    return cast(W, told)


def in_language(prompt: P, language: str | None) -> P:
    """``prompt`` told that the texts are in ``language`` (the data's) and to judge them
    as they are; a prompt that ``writes`` (e.g. "the claims") told to write those in it
    too, whatever the language of its examples. Without a language the prompt is
    unchanged (and so are its cache keys)."""
    if language is None:
        return prompt
    name = language_name(language)
    note = (f" The texts are in {name}: judge them as they are, in {name} (being in "
            f"{name} is no defect).")
    if prompt.writes is not None:
        note += f" Write {prompt.writes} in {name}, whatever the language of the examples."
    return cast(P, replace(cast(Any, prompt), instruction=prompt.instruction + note))
