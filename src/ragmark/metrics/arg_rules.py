"""Argument rules in the style of the Berkeley Function Calling Leaderboard's checker
(``bfcl_eval``'s AST checker for its simple, multiple and parallel categories), for an
item whose ``tool_args_match`` is ``rules``: each expected argument gives the list of
values it may take, ``""`` among them when it may be left out.

A call's arguments match the rules when every argument it gives is one the rules name,
every argument the rules require is given, and each given value is one of the
acceptable ones:

- strings compared after BFCL's normalisation (lower-cased; spaces and ``, . / - _ * ^``
  removed; single quotes as double quotes);
- numbers equal within a relative tolerance of 1e-12 (float noise, as 0.1 + 0.2 for
  0.3; an integer where a float is acceptable, or the other way round, counts);
- lists element by element, in order, each element by the same rules; objects key by
  key, each value against its own list of acceptable values when the rules give one;
- anything else exactly.

Differences from BFCL's checker (it has the function's schema; an item gives only the
acceptable values): types are not checked against a schema (a number given as a string
does not match a number), so what BFCL refuses for its type alone ragmark refuses for
its value; ``tests`` name them where they show.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

_DROP = re.compile(r"[ ,./\-_*^]")
TOLERANCE = 1e-12
"""Relative tolerance of a number's match."""


def normalised(text: str) -> str:
    """A string as BFCL compares it."""
    return _DROP.sub("", text).lower().replace("'", '"')


def _number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def same(given: Any, acceptable: Any) -> bool:
    """Whether a given value is an acceptable one (see the module)."""
    if isinstance(given, str) and isinstance(acceptable, str):
        return normalised(given) == normalised(acceptable)
    if _number(given) and _number(acceptable):
        return math.isclose(given, acceptable, rel_tol=TOLERANCE, abs_tol=0.0)
    if isinstance(given, list) and isinstance(acceptable, list):
        return len(given) == len(acceptable) and all(
            same(g, a) for g, a in zip(given, acceptable, strict=True))
    if isinstance(given, Mapping) and isinstance(acceptable, Mapping):
        return matches(given, {k: v if isinstance(v, list) else [v]
                               for k, v in acceptable.items()})
    return bool(given == acceptable)


def matches(given: Mapping[str, Any] | None, rules: Mapping[str, Any] | None) -> bool:
    """Whether a call's arguments match the rules (argument -> acceptable values)."""
    if given is None or rules is None:
        return False
    if any(k not in rules for k in given):
        return False
    for name, options in rules.items():
        options = options if isinstance(options, list) else [options]
        if name not in given:
            if "" not in options:
                return False
            continue
        if not any(same(given[name], o) for o in options):
            return False
    return True
