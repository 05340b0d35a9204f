"""A small path language that says where a value is in a JSON response. Pure.

A path is dotted keys, each optionally followed by indexes:

- ``data.answer``: key ``answer`` of the object under key ``data``;
- ``results[0].text``: ``[n]`` is the n-th item of a list (from 0; ``[-1]`` is the last);
- ``data.sources[*].text``: ``[*]`` is every item of a list; the path then gives a list,
  one value per item (a second ``[*]`` flattens: ``hits[*].chunks[*].text``);
- a leading ``$`` is the whole response (optional: ``$.data.answer`` is ``data.answer``;
  ``$`` alone, or ``$[0]``, start at the top).

Keys are any characters but ``.``, ``[`` and ``]``. Resolving a path that does not fit
the response raises :class:`PathError` saying where it stopped and what was there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ragmark.data.files import kind_of

SYNTAX = ("dotted keys with [n] (n from 0; negative from the end) and [*] (every item), "
          "e.g. 'data.sources[*].text'")
_TOKEN = re.compile(r"\[(?P<index>\*|-?\d+)\]|(?P<dot>\.)|(?P<key>[^.\[\]]+)")


class PathError(ValueError):
    """A path that does not resolve in a given response."""


def _at(location: str) -> str:
    return "the top level" if not location else repr(location)


@dataclass(frozen=True, slots=True)
class Step:
    """One step of a path: a key, an index, or every item (``[*]``)."""

    key: str | None = None
    index: int | None = None

    @property
    def every(self) -> bool:
        return self.key is None and self.index is None

    def __str__(self) -> str:
        if self.key is not None:
            return self.key
        return "[*]" if self.index is None else f"[{self.index}]"


@dataclass(frozen=True, slots=True)
class JsonPath:
    """A parsed path. ``many``: it has a ``[*]``, so it resolves to a list."""

    text: str
    steps: tuple[Step, ...]

    @property
    def many(self) -> bool:
        return any(s.every for s in self.steps)

    @classmethod
    def parse(cls, text: str) -> JsonPath:
        """Parse ``text``; a ValueError says what is wrong and shows the syntax."""
        src = text.strip()

        def bad(why: str) -> ValueError:
            return ValueError(f"invalid path {text!r}: {why}; a path is {SYNTAX}")

        if not src:
            raise bad("it is empty")
        pos, prev, steps = 0, "start", []
        if src.startswith("$"):
            pos, prev = 1, "root"
        while pos < len(src):
            m = _TOKEN.match(src, pos)
            if m is None:
                raise bad(f"unexpected {src[pos]!r} at position {pos}")
            if m.group("key") is not None:
                if prev not in ("start", "dot"):
                    raise bad(f"a '.' must come before the key {m.group('key')!r}")
                steps.append(Step(key=m.group("key")))
                prev = "step"
            elif m.group("dot") is not None:
                if prev not in ("step", "root"):
                    raise bad(f"a '.' at position {pos} must follow a key or an index")
                prev = "dot"
            else:
                if prev == "dot":
                    raise bad(f"an index must follow a key, not '.', at position {pos}")
                idx = m.group("index")
                steps.append(Step() if idx == "*" else Step(index=int(idx)))
                prev = "step"
            pos = m.end()
        if prev == "dot":
            raise bad("it ends with '.'")
        return cls(text, tuple(steps))

    def resolve(self, doc: Any) -> Any:
        """The value at this path in ``doc`` (a list of values when the path has ``[*]``)."""
        values: list[tuple[str, Any]] = [("", doc)]
        for step in self.steps:
            nxt: list[tuple[str, Any]] = []
            for loc, v in values:
                if step.key is not None:
                    if not isinstance(v, dict):
                        raise PathError(f"{_at(loc)} is {kind_of(v)}, not an object with "
                                        f"key {step.key!r}")
                    if step.key not in v:
                        keys = ", ".join(repr(k) for k in list(v)[:10]) or "none"
                        raise PathError(f"no key {step.key!r} at {_at(loc)} "
                                        f"(keys there: {keys})")
                    nxt.append((f"{loc}.{step.key}" if loc else step.key, v[step.key]))
                elif not isinstance(v, list):
                    raise PathError(f"{step} needs a list at {_at(loc)}, found {kind_of(v)}")
                elif step.index is None:
                    nxt.extend((f"{loc}[{i}]", item) for i, item in enumerate(v))
                elif -len(v) <= step.index < len(v):
                    nxt.append((f"{loc}[{step.index}]", v[step.index]))
                else:
                    raise PathError(f"index {step} is out of range at {_at(loc)} "
                                    f"(a list of {len(v)})")
            values = nxt
        return [v for _, v in values] if self.many else values[0][1]
