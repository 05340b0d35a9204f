"""What a RAG system gave for one question (its answer and the contexts it was made
from), as a pipeline returns it or a log records it, and the checks of its shape."""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from ragmark.case import Context, Output  # noqa: F401 (the readers' names for them)
from ragmark.data.files import kind_of

_EMPTY: Mapping[str, Any] = MappingProxyType({})
CONTEXT_ITEM = "a non-empty string or an object with a non-empty string 'text'"


class ShapeError(ValueError):
    """A value that does not have the shape of an answer or of its contexts.

    ``field`` is where in the value (``contexts[2].text``), for error messages.
    """

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message if field is None else f"{field}: {message}")
        self.message = message
        self.field = field


_THUMBS = {"up": 1.0, "thumbs_up": 1.0, "positive": 1.0, "good": 1.0, "yes": 1.0, "+1": 1.0,
           "true": 1.0, "\N{THUMBS UP SIGN}": 1.0, "like": 1.0, "down": 0.0,
           "thumbs_down": 0.0, "negative": 0.0, "bad": 0.0, "no": 0.0, "-1": 0.0,
           "false": 0.0, "\N{THUMBS DOWN SIGN}": 0.0, "dislike": 0.0}


def number(v: Any) -> float | None:
    """A number, or a string that is one, as a float; None otherwise (a bool too)."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int | float):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            return None
    return None


def thumb(value: Any) -> float | None:
    """Feedback as a number: a thumb (True, "up", "thumbs_down", ...) as 1 or 0, a score
    as given; None when it is neither.

    >>> thumb(True), thumb("thumbs_down"), thumb(4), thumb("4.5"), thumb("meh")
    (1.0, 0.0, 4.0, 4.5, None)
    """
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, str) and value.strip().lower() in _THUMBS:
        return _THUMBS[value.strip().lower()]
    return number(value)



class Logged(dict[str, Output]):
    """Outputs by sample id, with where they came from (``source``: ``outputs`` for a
    logged outputs file, ``run_file`` for a TREC run file), as the results record it."""

    def __init__(self, items: Mapping[str, Output], source: str = "outputs") -> None:
        super().__init__(items)
        self.source = source
        self.lines: dict[str, str] = {}
        """A log joined to a dataset: question id -> the id of the log line it joined."""


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ShapeError(f"expected {CONTEXT_ITEM}, got {kind_of(value)}", where)
    return value


def _ident(value: Any, where: str) -> str | None:
    if value is None:
        return None
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise ShapeError(f"expected a non-empty string or an integer, got {kind_of(value)}", where)


def parse_context(value: Any, where: str) -> Context:
    """A context from a string, or from an object with ``text`` (and optionally ``id``,
    ``doc_id``, ``score``)."""
    if isinstance(value, str):
        return Context(_text(value, where))
    if not isinstance(value, Mapping):
        raise ShapeError(f"expected {CONTEXT_ITEM}, got {kind_of(value)}", where)
    if "text" not in value:
        keys = ", ".join(repr(k) for k in value) or "none"
        raise ShapeError(f"an object context needs a 'text'; its keys: {keys}", where)
    score = value.get("score")
    if score is not None and (isinstance(score, bool) or not isinstance(score, int | float)):
        raise ShapeError(f"expected a number, got {kind_of(score)}", f"{where}.score")
    return Context(
        _text(value["text"], f"{where}.text"),
        _ident(value.get("id"), f"{where}.id"),
        _ident(value.get("doc_id"), f"{where}.doc_id"),
        None if score is None else float(score),
    )


def parse_contexts(value: Any, where: str = "contexts") -> tuple[Context, ...]:
    """A list (possibly empty) of contexts; each a string or an object with ``text``."""
    if not isinstance(value, list | tuple):
        raise ShapeError(f"expected a list of contexts, got {kind_of(value)}", where)
    return tuple(parse_context(v, f"{where}[{i}]") for i, v in enumerate(value))


def parse_hops(value: Any, where: str = "hops"
               ) -> tuple[tuple[Context, ...], tuple[tuple[str, int], ...]]:
    """Retrieval in steps: a list of ``{"name"?: str, "contexts": [...]}``, each step's
    contexts best first. Returns every step's contexts in turn (the ranking, merged in
    step order) and each step's name (default ``hop N``) and number of contexts."""
    if not isinstance(value, list | tuple) or not value:
        raise ShapeError(f"expected a non-empty list of steps ({{\"name\", \"contexts\"}}), "
                         f"got {kind_of(value)}", where)
    contexts: list[Context] = []
    steps: list[tuple[str, int]] = []
    for i, step in enumerate(value):
        here = f"{where}[{i}]"
        if not isinstance(step, Mapping) or "contexts" not in step:
            raise ShapeError("expected an object with 'contexts' (and an optional 'name')",
                             here)
        name = step.get("name", f"hop {i + 1}")
        if not isinstance(name, str) or not name.strip():
            raise ShapeError(f"expected a non-empty string, got {kind_of(name)}",
                             f"{here}.name")
        got = parse_contexts(step["contexts"], f"{here}.contexts")
        contexts += got
        steps.append((name, len(got)))
    return tuple(contexts), tuple(steps)


def contexts_or_hops(value: Mapping[str, Any]
                     ) -> tuple[tuple[Context, ...], tuple[tuple[str, int], ...]]:
    """The contexts of a result that gives ``contexts``, or ``hops`` (retrieval in steps,
    merged in step order); both is an error."""
    if "hops" in value and value["hops"] is not None:
        if "contexts" in value:
            raise ShapeError("give 'contexts' or 'hops' (retrieval in steps, merged in step "
                             "order), not both", "hops")
        return parse_hops(value["hops"])
    return parse_contexts(value["contexts"]), ()


def parse_confidence(value: Mapping[str, Any], where: str = "confidence") -> dict[str, float]:
    """``{"confidence": x}`` of a result that gives a finite number as its confidence
    (any scale, higher more confident), else ``{}``."""
    c = value.get("confidence")
    if c is None:
        return {}
    if isinstance(c, bool) or not isinstance(c, int | float) or not math.isfinite(c):
        raise ShapeError(f"expected a finite number, got {kind_of(c)}", where)
    return {"confidence": float(c)}


def parse_answer(value: Any, where: str = "answer") -> str:
    """The answer: a string; null counts as an empty answer (its metrics are missing)."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ShapeError(f"expected a string, got {kind_of(value)}", where)
    return value


def parse_result(value: Any) -> tuple[str, tuple[Context, ...], tuple[tuple[str, int], ...]]:
    """(answer, contexts, retrieval steps) from what a Python pipeline returned: a mapping
    ``{"answer": ..., "contexts": [...]}`` (or ``"hops": [{"name", "contexts"}, ...]``
    instead of ``contexts``: retrieval in steps) or a pair ``(answer, contexts)``."""
    if isinstance(value, Mapping):
        missing = [k for k in ("answer", "contexts") if k not in value and not (
            k == "contexts" and ("hops" in value or "messages" in value
                                 or "tool_calls" in value))]
        if missing:
            keys = ", ".join(repr(k) for k in value) or "none"
            raise ShapeError(f"the returned mapping has no {' and no '.join(map(repr, missing))}"
                             f" (its keys: {keys}); expected {{'answer': str, 'contexts': list}}")
        contexts, hops = contexts_or_hops(value) if "contexts" in value or "hops" in value \
            else ((), ())  # an agent's: its search calls may be its retrieval
        return parse_answer(value["answer"]), contexts, hops
    if isinstance(value, tuple | list) and len(value) == 2:
        return (parse_answer(value[0], "[0] (answer)"),
                parse_contexts(value[1], "[1] (contexts)"), ())
    raise ShapeError("expected a mapping {'answer': str, 'contexts': [...]} or a pair "
                     f"(answer, contexts), got {kind_of(value)}")
