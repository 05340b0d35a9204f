"""Tolerant parsing of judge output: JSON inside prose or code fences, YES/NO variants.

Pure functions; a text that cannot be read raises :class:`ParseError` with the reason.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from typing import Any

from ragmark.errors import RagmarkError

_THINK = re.compile(r"<think>.*?(</think>|$)", re.IGNORECASE | re.DOTALL)
_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_-]*)[ \t]*\n?(.*?)```", re.DOTALL)
_SMART = str.maketrans({"\u201c": '"', "\u201d": '"', "\u201e": '"', "\u2018": "'", "\u2019": "'"})
_MAX_STARTS = 50
_SNIPPET = 80


class ParseError(RagmarkError):
    """Judge output that could not be read. ``kind`` says why in words that group equal
    failures (for counts); ``reason`` adds a snippet of the output (for the re-ask)."""

    def __init__(self, kind: str, shown: str | None = None, code: str | None = None
                 ) -> None:
        reason = kind if shown is None else f"{kind}: {shown}"
        super().__init__(reason)
        self.kind = kind
        self.reason = reason
        self.code = code
        """A key for the program (a prompt's check sets it: "quote_not_in_source"),
        carried to the :class:`~ragmark.judges.outcome.JudgeFailure` when the re-ask did
        not mend it."""


def _snippet(text: str) -> str:
    one = " ".join(text.split())
    return repr(one if len(one) <= _SNIPPET else one[:_SNIPPET] + "...")


def strip_thinking(text: str) -> str:
    """``text`` without ``<think>...</think>`` blocks (reasoning models emit them)."""
    return _THINK.sub("", text)


def _outside_strings(text: str, start: int = 0) -> Iterator[tuple[int, str, bool]]:
    """(index, character, outside a JSON string) for each character from ``start``;
    quote characters count as inside."""
    in_str = False
    escaped = False
    for i in range(start, len(text)):
        c = text[i]
        if in_str:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_str = False
            yield i, c, False
        elif c == '"':
            in_str = True
            yield i, c, False
        else:
            yield i, c, True


def _drop_trailing_commas(text: str) -> str:
    """Remove commas that directly precede ``}`` or ``]``, outside strings."""
    out: list[str] = []
    n = len(text)
    for i, c, outside in _outside_strings(text):
        if outside and c == ",":
            j = i + 1
            while j < n and text[j].isspace():
                j += 1
            if j >= n or text[j] not in "}]":
                out.append(c)
        else:
            out.append(c)
    return "".join(out)


def _loads(candidate: str) -> tuple[bool, Any]:
    """(ok, value) of one candidate, trying strict JSON, then repairs."""
    candidate = candidate.strip()
    if not candidate:
        return False, None
    tries = [candidate, _drop_trailing_commas(candidate)]
    smart = candidate.translate(_SMART)
    if smart != candidate:
        tries += [smart, _drop_trailing_commas(smart)]
    for t in tries:
        try:
            return True, json.loads(t)
        except ValueError:
            pass
    for t in tries:  # a raw newline or tab inside a string (a grammar allows it)
        try:
            return True, json.loads(t, strict=False)
        except ValueError:
            pass
    # Python-literal style ({'a': True}) is common from small models; literal_eval is safe
    for t in tries:
        try:
            value = ast.literal_eval(t)
        except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
            continue
        if isinstance(value, dict | list):
            return True, value
    return False, None


def _balanced_end(text: str, start: int) -> int | None:
    """Index just past the bracket matching ``text[start]``, or None."""
    stack: list[str] = []
    closing = {"{": "}", "[": "]"}
    for i, c, outside in _outside_strings(text, start):
        if not outside:
            continue
        if c in closing:
            stack.append(closing[c])
        elif c in "}]":
            if not stack or stack[-1] != c:
                return None
            stack.pop()
            if not stack:
                return i + 1
    return None


def _embedded(text: str) -> tuple[bool, Any]:
    """The first ``{...}`` or ``[...]`` span of ``text`` that parses."""
    starts = [m.start() for m in re.finditer(r"[{\[]", text)][:_MAX_STARTS]
    for s in starts:
        end = _balanced_end(text, s)
        if end is None:
            # unbalanced (e.g. a cut-off or a stray bracket): try up to the last closer
            last = max(text.rfind("}"), text.rfind("]"))
            if last <= s:
                continue
            end = last + 1
        ok, value = _loads(text[s:end])
        if ok and isinstance(value, dict | list):
            return True, value
    return False, None


_LAST_SCALAR = re.compile(r"[-+0-9.eE]+$|[A-Za-z]+$")
_DANGLING_KEY = re.compile(r',?\s*"[^"]*"\s*:?\s*$')


def _cut_short(text: str) -> tuple[bool, Any]:
    """The JSON of an answer that stopped before its end (the token cap), closed where
    it stopped: an entry of a list cut in two is dropped (a claim or a verdict cut in two
    is not one), a string cut as an object's own value is kept as far as it went (a
    reason), a key without its value is dropped."""
    start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=-1)
    if start < 0:
        return False, None
    stack: list[tuple[str, int]] = []  # (closer, where it opened)
    opened = -1  # where the string under way began, when the text ends inside one
    escaped = False
    for i in range(start, len(text)):
        c = text[i]
        if opened >= 0:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                opened = -1
        elif c == '"':
            opened = i
        elif c in "{[":
            stack.append(("}" if c == "{" else "]", i))
        elif c in "}]" and stack:
            stack.pop()

    def closed(body: str, open_: list[tuple[str, int]]) -> list[str]:
        body = body.rstrip()
        tail = "".join(closer for closer, _ in reversed(open_))
        return [b + tail for b in (body, body.rstrip(",:"), _DANGLING_KEY.sub("", body))]

    candidates: list[str] = []
    if len(stack) >= 2 and stack[-1][0] == "}" and stack[-2][0] == "]":
        candidates += closed(text[start:stack[-1][1]].rstrip().rstrip(","), stack[:-1])
    if opened >= 0 and stack and stack[-1][0] == "]":
        candidates += closed(text[start:opened].rstrip().rstrip(","), stack)
    elif opened >= 0:
        candidates += closed(text[start:] + '"', stack) + closed(text[start:opened], stack)
    else:  # a number or a word at the very end may be cut short too: drop it
        body = text[start:].rstrip()
        word = _LAST_SCALAR.search(body)
        if word and word.group(0) not in ("true", "false", "null"):
            body = body[:word.start()]
        candidates += closed(body, stack)
    for candidate in candidates:
        ok, value = _loads(candidate)
        if ok and isinstance(value, dict | list) and value:  # {} says nothing
            return True, value
    return False, None


def extract_json(text: str) -> Any:
    """The JSON object or array in a judge's answer (the first one that parses).

    Accepts bare JSON, JSON in a ```json (or plain ```) fence, JSON with prose around
    it, trailing commas, smart quotes, Python-style literals, and JSON that stopped
    before its end (the answer's token cap): closed where it stopped. Raises ParseError.

    >>> extract_json('Sure! ```json\\n{"ok": true,}\\n``` Hope it helps.')
    {'ok': True}
    """
    if not isinstance(text, str):
        raise ParseError(f"expected text, got {type(text).__name__}")
    body = strip_thinking(text).strip()
    if not body:
        raise ParseError("the answer is empty")
    ok, value = _loads(body)
    if ok and isinstance(value, dict | list):
        return value
    for m in _FENCE.finditer(body):
        ok, value = _loads(m.group(2))
        if ok and isinstance(value, dict | list):
            return value
        ok, value = _embedded(m.group(2))
        if ok:
            return value
    first = min((i for i in (body.find("{"), body.find("[")) if i >= 0), default=-1)
    if first >= 0 and _balanced_end(body, first) is None:  # it stopped before its end
        ok, value = _cut_short(body)
        if ok:
            return value
    ok, value = _embedded(body)
    if ok:
        return value
    raise ParseError("no JSON object or array found in the answer", _snippet(text))


_TOKEN = re.compile(r"(?<![A-Za-z0-9])(yes|no|true|false|y|n)(?![A-Za-z0-9'])", re.IGNORECASE)
_POSITIVE = {"yes", "true", "y"}
_PAIR_GAP = re.compile(r"^\s*(/|\||or|and)?\s*$", re.IGNORECASE)
_MARKUP = re.compile(r"[*_`#>\"'\u201c\u201d\u2018\u2019]")


def parse_yes_no(text: str) -> bool:
    """True for a YES answer, False for NO: the first clear yes/no (or true/false) token.

    Accepts ``YES``, ``no.``, ``**Yes**``, ``Answer: NO``, ``"yes"``, ``{"answer": "no"}``.
    Raises ParseError when there is no such token, or when the first one is part of an
    echoed choice such as ``YES/NO`` or ``yes or no``. A lone ``y``/``n`` counts only
    when it is the whole answer.
    """
    if not isinstance(text, str):
        raise ParseError(f"expected text, got {type(text).__name__}")
    body = _MARKUP.sub(" ", strip_thinking(text)).strip()
    if not body:
        raise ParseError("the answer is empty")
    lone = body.strip(" .!").lower() in {"y", "n"}
    tokens = [m for m in _TOKEN.finditer(body) if lone or len(m.group(1)) > 1]
    if not tokens:
        raise ParseError("no YES or NO found in the answer", _snippet(text))
    first = tokens[0]
    polarity = first.group(1).lower() in _POSITIVE
    if len(tokens) > 1:
        nxt = tokens[1]
        if (nxt.group(1).lower() in _POSITIVE) != polarity and _PAIR_GAP.match(
            body[first.end() : nxt.start()]
        ):
            raise ParseError("ambiguous answer (both YES and NO offered)", _snippet(text))
    return polarity
