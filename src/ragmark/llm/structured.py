"""Structured output: send a judge's output schema in the form the endpoint accepts.

Servers differ. OpenAI and vLLM take ``response_format = {"type": "json_schema",
"json_schema": {"name", "schema", "strict"}}``; llama.cpp's Python server rejects that
and takes ``{"type": "json_object", "schema": ...}`` (both enforce it with a grammar);
Ollama takes the schema as ``format``. :class:`Forms` tries the forms of a provider in
order, and when the endpoint rejects one (HTTP 400 or 422 naming the response format or
the schema) moves to the next, down to none (today's tolerant parsing). The form found
is remembered per (provider, base URL, model) in ``$RAGMARK_HOME/llm/structured.json``,
so later runs send it at once and find their calls in the cache.
"""

from __future__ import annotations

import copy
import json
import os
import re
import threading
from pathlib import Path
from typing import Any

from ragmark.home import cache_path
from ragmark.llm.config import LLMSettings
from ragmark.llm.providers import provider

_REJECTED = re.compile(r"response_format|json_schema|schema|grammar|format", re.IGNORECASE)
_NAMED = re.compile(r"response_format|json_schema")


def strict_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A copy of a pydantic JSON schema in the shape strict structured-output modes take:
    every object lists all its properties as required and allows no others; titles and
    defaults are dropped.

    >>> strict_schema({"type": "object", "title": "T",
    ...                "properties": {"a": {"type": "integer", "default": 1}}})
    {'type': 'object', 'properties': {'a': {'type': 'integer'}}, 'required': ['a'], \
'additionalProperties': False}
    """
    def fix(node: Any) -> Any:
        if isinstance(node, dict):
            out = {k: fix(v) for k, v in node.items() if k not in ("title", "default")}
            if out.get("type") == "object" and isinstance(out.get("properties"), dict):
                out["required"] = list(out["properties"])
                out["additionalProperties"] = False
            return out
        if isinstance(node, list):
            return [fix(v) for v in node]
        return node

    return fix(copy.deepcopy(schema))  # type: ignore[no-any-return]


def pinned(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with every list held to exactly n entries numbered 1..n (``minItems`` =
    ``maxItems`` = n, an entry property with ``enum`` [1..n]; see
    :func:`ragmark.judges.prompt.exact_count`) written as a tuple (``prefixItems``) whose
    i-th entry is numbered i: a grammar built from it cannot repeat a number. For
    servers that turn the schema into a grammar (llama.cpp's ``json_object`` form);
    OpenAI's strict mode takes the portable form.

    >>> s = {"type": "array", "minItems": 2, "maxItems": 2, "items": {"type": "object",
    ...      "properties": {"n": {"type": "integer", "enum": [1, 2]}}}}
    >>> [e["properties"]["n"]["enum"] for e in pinned(s)["prefixItems"]]
    [[1], [2]]
    """
    def fix(node: Any) -> Any:
        if isinstance(node, list):
            return [fix(v) for v in node]
        if not isinstance(node, dict):
            return node
        out = {k: fix(v) for k, v in node.items()}
        n = out.get("minItems")
        entry = out.get("items")
        if (out.get("type") == "array" and isinstance(n, int) and n == out.get("maxItems")
                and isinstance(entry, dict) and isinstance(entry.get("properties"), dict)):
            nums = [k for k, p in entry["properties"].items()
                    if isinstance(p, dict) and p.get("enum") == list(range(1, n + 1))]
            if len(nums) == 1:
                tuple_ = []
                for i in range(1, n + 1):
                    one = copy.deepcopy(entry)
                    one["properties"][nums[0]] = {"type": "integer", "enum": [i]}
                    tuple_.append(one)
                out = {k: v for k, v in out.items() if k != "items"} | {"prefixItems": tuple_}
        return out

    return fix(schema)  # type: ignore[no-any-return]


def sketch(schema: dict[str, Any]) -> str:
    """What an answer to ``schema`` looks like, in a line a model reads more easily (and
    in fewer tokens) than the schema: each value a placeholder, a list its first entry
    and ``...``, a field's description beside it.

    >>> sketch({"type": "object", "properties": {"verdicts": {"type": "array", "items":
    ...     {"type": "boolean"}}, "why": {"type": "string", "description": "one line"}}})
    '{"verdicts": [true or false, ...], "why": "<text: one line>"}'
    >>> sketch({"type": "object", "properties": {"v": {"enum": ["yes", "no"]}}})
    '{"v": "yes" or "no"}'
    """
    defs = schema.get("$defs", {})

    def one(node: dict[str, Any]) -> str:
        if "$ref" in node:
            return one(defs[node["$ref"].rsplit("/", 1)[-1]])
        if "enum" in node:
            return " or ".join(json.dumps(v) for v in node["enum"])
        kind = node.get("type")
        if kind == "object":
            return "{" + ", ".join(f"{json.dumps(k)}: {one(v)}"
                                   for k, v in node.get("properties", {}).items()) + "}"
        if kind == "array":
            return f"[{one(node.get('items', {}))}, ...]"
        if kind == "boolean":
            return "true or false"
        said = {"string": "text", "integer": "integer", "number": "number"}.get(
            str(kind), "value")
        about = node.get("description")
        text = f"<{said}: {about}>" if about else f"<{said}>"
        return f'"{text}"' if kind == "string" else text

    return one(schema)


def wire(form: str, name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The request parameters that carry ``schema`` in ``form`` (``{}`` for ``off``)."""
    if form == "json_schema":
        return {"response_format": {"type": "json_schema", "json_schema": {
            "name": name, "schema": schema, "strict": True}}}
    if form == "json_object":
        return {"response_format": {"type": "json_object", "schema": pinned(schema)}}
    if form == "format":  # Ollama: request_body maps it to "format"
        return {"response_format": {"type": "json_schema", "json_schema": {"schema": schema}}}
    return {}


def rejected(reason: str) -> bool:
    """Whether a failed call's reason reads as the endpoint refusing the output format:
    a 400 or 422 that names it, or a 500 that names ``response_format`` or
    ``json_schema`` (llama.cpp's Python server answers its validation error so), not a
    failure of the call itself."""
    m = re.search(r"HTTP (400|422|500)\b", reason)
    if m is None:
        return False
    body = reason[m.end():]
    pattern = _REJECTED if m.group(1) != "500" else _NAMED
    return bool(pattern.search(body))


class Forms:
    """The structured-output form to send to each endpoint, learnt and remembered."""

    def __init__(self, path: Path | None = None) -> None:
        self._path = path
        self._known: dict[str, str] | None = None
        self._lock = threading.Lock()

    @property
    def path(self) -> Path:
        if self._path is None:
            self._path = cache_path("llm", "structured.json")
        return self._path

    @staticmethod
    def _key(s: LLMSettings) -> str:
        return f"{s.provider} {s.display_url} {s.model}"

    def _load(self) -> dict[str, str]:
        if self._known is None:
            try:
                data = json.loads(self.path.read_text("utf-8"))
                self._known = {str(k): str(v) for k, v in data.items()} if isinstance(
                    data, dict) else {}
            except (OSError, ValueError):
                self._known = {}
        return self._known

    def current(self, s: LLMSettings) -> str:
        """The form to send now (the first of the provider's forms until one is
        rejected; ``off`` when the settings turn structured output off)."""
        if s.structured == "off":
            return "off"
        forms = provider(s.provider).forms
        with self._lock:
            form = self._load().get(self._key(s), forms[0])
        return form if form in forms else forms[0]

    def known(self, s: LLMSettings) -> bool:
        """Whether this endpoint's form is settled (it answered one, or it is off)."""
        if s.structured == "off":
            return True
        with self._lock:
            return self._key(s) in self._load()

    def confirm(self, s: LLMSettings, form: str) -> None:
        """The endpoint answered a call sent with ``form``: remember it."""
        if s.structured != "off" and not self.known(s):
            self._store(s, form)

    def reject(self, s: LLMSettings, form: str) -> str:
        """Record that the endpoint refused ``form``; the next form to try."""
        forms = provider(s.provider).forms
        nxt = forms[min(forms.index(form) + 1, len(forms) - 1)] if form in forms else "off"
        self._store(s, nxt)
        return nxt

    def _store(self, s: LLMSettings, form: str) -> None:
        with self._lock:
            known = self._load()
            known[self._key(s)] = form
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                tmp = self.path.with_suffix(f".{os.getpid()}.tmp")
                tmp.write_text(json.dumps(known, indent=1, sort_keys=True), "utf-8")
                tmp.replace(self.path)
            except OSError:
                pass  # remembered for this process only
