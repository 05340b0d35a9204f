"""ragmark's exceptions. The CLI prints any RagmarkError without a traceback, exit 2."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


class RagmarkWarning(UserWarning):
    """Something the library computed as documented but a caller may not expect (NaN
    scores ranked last, queries left out of a mean); the message counts them."""


class RagmarkError(Exception):
    """Base of every error ragmark raises on purpose."""

    exit_code = 2


class GateFailed(RagmarkError):
    """One or more gates failed; ``lines`` says which (one line each). Exit code 1."""

    exit_code = 1

    def __init__(self, lines: Sequence[str]) -> None:
        self.lines = list(lines)
        super().__init__("\n".join(self.lines))


class DataError(RagmarkError):
    """Bad input data: the message names the file, the item or line, the field, and
    what was expected."""

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        item: int | str | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.file = file
        self.item = item
        self.line = line
        self.field = field
        self.reason = message
        where = []
        if file is not None:
            where.append(str(file))
        if line is not None:
            where.append(f"line {line}")
        if item is not None:
            where.append(f"item {item}")
        if field is not None:
            where.append(f"field '{field}'")
        super().__init__(f"{', '.join(where)}: {message}" if where else message)


class ConfigError(RagmarkError):
    """A configuration (built-in name, TOML file, flag) that cannot be used."""


class UnknownComponentError(ConfigError):
    """A name that no registry knows; the message lists the known names."""


class EndpointGone(RagmarkError):
    """An endpoint stopped answering mid-work (calls in a row could not reach it): the
    work stops, saying how far it got; what came back is kept (the call cache), so a
    rerun asks only the rest. Exit code 1: the answers failed."""

    exit_code = 1


class MissingExtraError(RagmarkError):
    """An optional dependency is not installed; the message names the extra."""

    def __init__(self, package: str, extra: str) -> None:
        super().__init__(
            f"this needs the optional package '{package}': pip install 'ragmark-eval[{extra}]'"
        )



@dataclass(frozen=True)
class Problem:
    """One problem of a validation error: where (``loc``, the keys from the top), what
    (``msg``, in ragmark's words), pydantic's error ``type``, and ``shown``: the value
    given as text, or "" when it is not a short scalar or its field may hold a secret."""

    loc: tuple[str | int, ...]
    msg: str
    type: str
    shown: str


def validation_problems(error: Exception, secret: frozenset[str] = frozenset()
                        ) -> list[Problem]:
    """A pydantic ``ValidationError`` as :class:`Problem` values, the message without
    pydantic's "Value error, "; a value of a field in ``secret`` (one that may hold a key
    pasted by mistake) is never shown. Anything else: its text, no location. The one
    reader of validation errors; callers say where the value came from."""
    errors = getattr(error, "errors", None)
    if errors is None:
        return [Problem((), str(error), "", "")]
    out = []
    for e in errors():
        loc = tuple(e["loc"])
        value = e.get("input")
        shown = repr(value) if (
            isinstance(value, str | int | float) and not isinstance(value, bool)
            and not secret.intersection(map(str, loc)) and len(str(value)) <= 80) else ""
        out.append(Problem(loc, str(e["msg"]).removeprefix("Value error, "), str(e["type"]),
                           shown))
    return out
