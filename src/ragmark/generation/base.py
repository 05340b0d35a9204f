"""The Generator protocol (pure)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ragmark.types import Chunk


@runtime_checkable
class Generator(Protocol):
    """Turns a question and its ranked contexts (best first) into an answer string."""

    @property
    def name(self) -> str:
        """The registry name of the generator ("top1", "sentences", ...)."""
        ...

    def generate(self, question: str, contexts: Sequence[Chunk]) -> str: ...


@dataclass(frozen=True, slots=True)
class GenerationFailed:
    """An answer that could not be generated, and why (its answer metrics go missing)."""

    reason: str


def check_positive(what: str, value: int) -> None:
    """Raise ValueError unless ``value`` is a positive integer."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{what} must be a positive integer, got {value!r}")
