"""Odd but unambiguous input: loaded with a warning that counts each kind and names the
first few places, or (``strict``) refused with the error of the first one.

Public collections hold things whose meaning is clear (an empty document, an integer
id, a grade written ``1.0``, a qrels line naming a document the corpus lacks); refusing
the whole collection over them helps nobody, and loading them silently hides them. The
loaders take a :class:`Leniency` and call :meth:`Leniency.warn` for each such thing.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass, field

from ragmark.errors import ConfigError, DataError

SHOWN = 3
"""Places named per kind of warning."""


@dataclass
class Leniency:
    """How loaders treat odd data, and the warnings they gave.

    ``strict``: every warning is an error instead. ``encoding``: the encoding of input
    files that are not UTF-8 (without it, such a file in a folder corpus is skipped with a
    warning, and elsewhere it is an error).
    """

    strict: bool = False
    encoding: str | None = None
    input_format: str | None = None
    """``--input-format``: read sets and logs as this format (``ragmark``, ``ragas``,
    ``deepeval``, ``llamaindex``) instead of telling it from their fields."""
    _kinds: dict[str, list[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.encoding is not None:
            try:
                codecs.lookup(self.encoding)
            except LookupError:
                raise ConfigError(f"--encoding: unknown encoding {self.encoding!r} (e.g. "
                                  "latin-1, cp1252, utf-16)") from None

    def warn(self, kind: str, place: str, error: DataError) -> None:
        """Count one case of ``kind`` at ``place`` (a file, an id, a line); with
        ``strict``, raise ``error`` (which says what the case is and where) instead."""
        if self.strict:
            raise DataError(f"{error.reason} (an error because of --strict)", file=error.file,
                            item=error.item, line=error.line, field=error.field)
        self._kinds.setdefault(kind, []).append(place)

    def note(self, kind: str, place: str) -> None:
        """Count one case of ``kind`` at ``place`` that is ordinary, not odd (an
        exporter's retry sending spans again): told with the warnings, never an error."""
        self._kinds.setdefault(kind, []).append(place)

    def count(self, kind: str) -> int:
        return len(self._kinds.get(kind, ()))

    def messages(self) -> list[str]:
        """One line per kind: ``kind: N (first places ...)``."""
        out = []
        for kind, places in self._kinds.items():
            shown = ", ".join(places[:SHOWN]) + (", ..." if len(places) > SHOWN else "")
            out.append(f"{kind}: {len(places)} ({shown})")
        return out
