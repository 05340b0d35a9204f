"""How a judge's answer lists its items: numbered verdicts, one per item of the input
(:class:`Numbered`, held to the exact count by the schema), and lists drawn from a text
(:class:`Listed`, bounded by the schema, repeats kept once)."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


def one_verdict_each(got: Sequence[int], n: int, what: str) -> str | None:
    """None when ``got`` numbers each of 1..n exactly once, else what is wrong."""
    if sorted(got) != list(range(1, n + 1)):
        return f"expected one verdict for each {what} 1..{n}, got {what}s {sorted(got)}"
    return None


def in_order(flags: Mapping[int, bool], n: int) -> list[bool]:
    """The verdicts numbered 1..n (checked by :func:`one_verdict_each`), in order."""
    return [flags[i] for i in range(1, n + 1)]


@dataclass(frozen=True, slots=True)
class Numbered:
    """How a judge's answer numbers the items of its input: the output's list field
    (``verdicts``), the number field of each entry (``claim``), and the input's list
    field it counts (``claim``). The per-call schema then allows exactly one entry per
    input item, numbered 1..n."""

    output_list: str
    number: str
    input_list: str

    def check(self, item: Any, out: Any) -> str | None:
        """None when ``out`` numbers each item of ``item`` exactly once, else what is
        wrong (for servers that ignore the schema)."""
        got = [getattr(v, self.number) for v in getattr(out, self.output_list)]
        return one_verdict_each(got, len(getattr(item, self.input_list)), self.number)


def exact_count(schema: dict[str, Any], numbered: Numbered, n: int) -> dict[str, Any]:
    """``schema`` with the numbered list held to exactly ``n`` entries (``minItems`` =
    ``maxItems`` = n) and each entry's number one of 1..n (an ``enum``), so a grammar
    that enforces the schema cannot give the wrong count or a number out of range.

    >>> s = {"type": "object", "properties": {"verdicts": {"type": "array", "items": {
    ...     "type": "object", "properties": {"claim": {"type": "integer"}}}}}}
    >>> v = exact_count(s, Numbered("verdicts", "claim", "claim"), 2)["properties"]["verdicts"]
    >>> v["minItems"], v["maxItems"], v["items"]["properties"]["claim"]
    (2, 2, {'type': 'integer', 'enum': [1, 2]})
    """
    out = copy.deepcopy(schema)
    defs = out.get("$defs", {})
    lst = out["properties"][numbered.output_list]
    lst.update(minItems=n, maxItems=n)
    entry = lst["items"]
    if "$ref" in entry:  # inline the entry so that its number can be held to 1..n
        entry = copy.deepcopy(defs[entry["$ref"].rsplit("/", 1)[-1]])
        lst["items"] = entry
    entry["properties"][numbered.number] = {"type": "integer", "enum": list(range(1, n + 1))}
    used = json.dumps({k: v for k, v in out.items() if k != "$defs"})
    if defs:
        out["$defs"] = {k: v for k, v in defs.items() if f"#/$defs/{k}" in used}
        if not out["$defs"]:
            del out["$defs"]
    return out


@dataclass(frozen=True, slots=True)
class Listed:
    """An answer that lists what it finds in one text of the input (the claims of an
    answer, the statements or entities of an expected answer): the output's list field
    (``claims``), the input's text field it reads (``answer``) and, when the entries are
    objects, the entry's field that names what was found (``statement``).

    Each call's schema holds the list to at most :func:`most_listed` entries of that
    text, so a small model that repeats itself under a grammar stops and closes its JSON
    instead of running to the token cap; an entry the answer repeats (same text, case
    and spacing aside) is kept once, the first time."""

    output_list: str
    input_text: str
    key: str | None = None

    def bound(self, schema: dict[str, Any], item: Any) -> dict[str, Any]:
        """``schema`` with the list held to :func:`most_listed` entries of ``item``."""
        out = copy.deepcopy(schema)
        out["properties"][self.output_list]["maxItems"] = most_listed(
            str(getattr(item, self.input_text) or ""))
        return out

    def once(self, out: Any) -> Any:
        """``out`` with each repeated entry of the list kept once (the first)."""
        seen: set[str] = set()
        kept = []
        for entry in getattr(out, self.output_list):
            text = entry if self.key is None else getattr(entry, self.key)
            norm = same_entry(str(text))
            if norm not in seen:
                seen.add(norm)
                kept.append(entry)
        return out.model_copy(update={self.output_list: kept})


def same_entry(text: str) -> str:
    """What two listed entries share when they are the same (case, spacing and a
    closing full stop aside).

    >>> same_entry("  The  tower. ") == same_entry("the tower")
    True
    """
    return " ".join(text.casefold().split()).rstrip(" .;")


def most_listed(text: str) -> int:
    """The most entries a list drawn from ``text`` is allowed: a claim or a statement
    takes a few words, so a quarter of the words and two more, at most 64.

    >>> most_listed("Dracula was written by Bram Stoker. He published it in 1897.")
    5
    """
    return min(64, -(-len(text.split()) // 4) + 2)
