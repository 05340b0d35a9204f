"""The Generator protocol (pure)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

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


Turn = Mapping[str, Any]
"""An earlier turn of a conversation as a pipeline gets it: ``{"question", "answer"}``
(the answer None when the pipeline gave none)."""


def as_messages(history: Sequence[Turn], question: str, *, no_answer: str | None = None
                ) -> list[dict[str, str]]:
    """The conversation so far as chat messages, the turn's question last. A turn
    without an answer has no assistant message, or ``no_answer`` as its text when given
    (ragmark's own generator keeps user and assistant alternating that way).

    >>> as_messages([{"question": "Who wrote Dracula?", "answer": "Bram Stoker."}], "When?")
    ... # doctest: +NORMALIZE_WHITESPACE
    [{'role': 'user', 'content': 'Who wrote Dracula?'},
     {'role': 'assistant', 'content': 'Bram Stoker.'}, {'role': 'user', 'content': 'When?'}]
    >>> [m["role"] for m in as_messages([{"question": "Hi?", "answer": None}], "And?")]
    ['user', 'user']
    >>> as_messages([{"question": "Hi?", "answer": None}], "And?", no_answer="(none)")[1]
    {'role': 'assistant', 'content': '(none)'}
    """
    out: list[dict[str, str]] = []
    for t in history:
        out.append({"role": "user", "content": str(t.get("question") or "")})
        if t.get("answer") or no_answer is not None:
            out.append({"role": "assistant", "content": str(t.get("answer") or no_answer)})
    out.append({"role": "user", "content": question})
    return out
