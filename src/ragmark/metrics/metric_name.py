"""The syntax of a metric's name: its family, the options it gives and its cutoff
(``rbp(p=0.8)@10``, as ir_measures writes ``RBP(p=0.8)@10``), and the options' types.
The name as one value, :class:`ragmark.metrics.names.MetricName`, is built from these
by :func:`~ragmark.metrics.names.parse_metric` (a name a user gives) and
:func:`~ragmark.metrics.names.read_name` (a name a file holds)."""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any

from ragmark.errors import UnknownComponentError

if TYPE_CHECKING:
    from ragmark.types import MetricSpec, Param

_FORM = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*?)\s*(?:\(([^()]*)\))?\s*"
                   r"(?:(?:@|_|\.)(\d+))?\s*$")
_CANONICAL = re.compile(r"^([a-z_][a-z0-9_]*)(?:\(([^()]*)\))?(?:@(\d+))?$")
_OPTION = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*([^=,()\s]+)\s*$")
NAME = re.compile(r"[a-z_][a-z0-9_]*")
"""What a metric's own name (and an option's) may be: what a parse reads back whole."""
TYPES = (bool, int, float, str)
"""The types an option may have."""

Option = tuple[str, Any]


def canonical(text: str) -> tuple[str, tuple[Option, ...], int | None] | None:
    """``(family, options as text, cutoff)`` of a name in its canonical form (as results
    files and the history hold it); None when ``text`` is not one."""
    m = _CANONICAL.match(text)
    if m is None:
        return None
    try:
        opts = tuple(_option(o, text) for o in commas(m.group(2))) if m.group(2) else ()
    except UnknownComponentError:
        return None
    return m.group(1), opts, int(m.group(3)) if m.group(3) else None


def commas(text: str) -> list[str]:
    """``text`` split at the commas outside parentheses (``rbp(p=0.9,rel=2)@10,mrr``)."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    return [*parts, text[start:]]


def split(text: str) -> tuple[str, str, str | None] | None:
    """``(family, options text, cutoff text)`` of a name a user typed (any case; the
    cutoff after ``@``, ``_`` or ``.``: ``NDCG_cut_10``); None when it is not of that
    form."""
    m = _FORM.match(text)
    return None if m is None else (m.group(1).lower(), m.group(2) or "", m.group(3))


def _option(text: str, name: str) -> Option:
    m = _OPTION.match(text)
    if m is None:
        raise UnknownComponentError(f"metric {name!r}: {text.strip()!r} is not an option "
                                    "(name=value, e.g. 'rbp(p=0.8)@10')")
    return m.group(1).lower(), m.group(2)


def typed(spec: MetricSpec, text: str, given: str) -> tuple[Option, ...]:
    """The options ``given`` (``p=0.8,rel=2``) as ``spec`` declares them: each turned
    into its type, those equal to their default dropped, in declared order."""
    if not given.strip():
        return ()
    declared = {p.name: p for p in spec.options}
    got: dict[str, Any] = {}
    for name, raw in (_option(o, text) for o in commas(given)):
        p = declared.get(name)
        if p is None:
            takes = (f"it takes {described(spec.options)}" if spec.options else
                     "it takes none")
            raise UnknownComponentError(f"metric {text!r}: no option {name!r}; {takes}")
        if name in got:
            raise UnknownComponentError(f"metric {text!r}: option {name!r} given twice")
        got[name] = _value(p, raw, text)
    return tuple((p.name, got[p.name]) for p in spec.options
                 if p.name in got and got[p.name] != p.default)


def _value(p: Param, raw: str, text: str) -> Any:
    try:
        if p.dtype is bool:
            if raw.lower() not in ("true", "false", "1", "0"):
                raise ValueError(raw)
            return raw.lower() in ("true", "1")
        value = p.dtype(raw)
        if p.dtype is float and not math.isfinite(value):
            raise ValueError(raw)
        return value
    except ValueError:
        raise UnknownComponentError(f"metric {text!r}: option {p.name!r} must be "
                                    f"{_article(p.dtype)}, got {raw!r}") from None


def _article(t: type) -> str:
    return {bool: "true or false", int: "an integer", float: "a number",
            str: "a text"}.get(t, t.__name__)


def show(v: Any) -> str:
    """An option's value as a name writes it."""
    return ("true" if v else "false") if isinstance(v, bool) else str(v)


def described(options: tuple[Param, ...]) -> str:
    """``p (a number, default 0.8)``, for messages and the catalogue."""
    return ", ".join(f"{p.name} ({_article(p.dtype)}, default {show(p.default)})"
                     for p in options)


def check_options(spec: MetricSpec) -> None:
    """A spec's options can be given and read back: names of the name's form, a type
    of :data:`TYPES`, a default of that type, each once."""
    seen: set[str] = set()
    for p in spec.options:
        if not NAME.fullmatch(p.name) or p.name in seen:
            raise UnknownComponentError(f"metric {spec.name!r}: option {p.name!r} must be "
                                        "lower-case letters, digits and '_', given once")
        if p.dtype not in TYPES or type(p.default) is not p.dtype and not (
                p.dtype is float and type(p.default) is int):
            raise UnknownComponentError(f"metric {spec.name!r}: option {p.name!r} needs a "
                                        "type of bool, int, float or str and a default "
                                        "of it")
        if p.dtype is str and not re.fullmatch(r"[^=,()\s]+", str(p.default)):
            raise UnknownComponentError(f"metric {spec.name!r}: option {p.name!r}'s "
                                        "default cannot be written in a name")
        seen.add(p.name)

