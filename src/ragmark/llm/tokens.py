"""Counting a prompt's tokens with the server's own tokenizer, where it offers one
(llama.cpp's and vLLM's ``/tokenize``, llama-cpp-python's ``/extras/tokenize/count``):
one request per distinct text, remembered; the safe estimate of
:mod:`ragmark.llm.window` where there is none or it fails.

The characters-a-token estimate is not the model's tokenizer: on SciFact abstracts
SmolLM2's runs at fewer characters a token than three, so a call fitted by the estimate
overran the window and the server refused it. Counted exactly, the answer's cap is what
the window leaves, and no call is refused for its length."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping, Sequence
from typing import Any

import httpx

from ragmark.llm.window import CHARS_PER_TOKEN, prompt_tokens

TEMPLATE_TOKENS = 8
"""Tokens the chat template adds around each message (role markers, separators: five
for ChatML), and once more for the assistant's opening; counted on the safe side."""


class ServerTokens:
    """The server's tokenizer at ``url`` (``field``: the body's key for the text)."""

    def __init__(self, url: str, field: str, model: str, headers: Mapping[str, str]) -> None:
        self.url, self.field, self.model, self.headers = url, field, model, dict(headers)
        self.known: dict[str, int] = {}
        self.requests = 0
        self.broken = False
        """Set when the endpoint failed: the estimate is used from then on."""
        self._http: httpx.AsyncClient | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def _client(self) -> httpx.AsyncClient:
        """One connection pool for the counts of an event loop (a new loop, a new pool)."""
        loop = asyncio.get_running_loop()
        if self._http is None or self._loop is not loop:
            self._http = httpx.AsyncClient(timeout=30.0, headers=self.headers)
            self._loop = loop
        return self._http

    async def aclose(self) -> None:
        """Close the pool of the running loop's counts."""
        if self._http is not None and self._loop is asyncio.get_running_loop():
            await self._http.aclose()
        self._http = self._loop = None

    async def count(self, text: str) -> int | None:
        """``text``'s tokens, or None when the server cannot say."""
        if text in self.known:
            return self.known[text]
        if self.broken:
            return None
        body: dict[str, Any] = {self.field: text}
        if self.field != "content":  # llama.cpp's takes no model; the others do
            body["model"] = self.model
        try:
            self.requests += 1
            resp = await self._client().post(self.url, json=body)
            data = resp.json() if resp.status_code == 200 else None
            n = data.get("count") if isinstance(data, Mapping) else None
            if n is None and isinstance(data, Mapping) and isinstance(data.get("tokens"), list):
                n = len(data["tokens"])
        except (httpx.HTTPError, ValueError):
            n = None
        if not isinstance(n, int) or n < 0:
            self.broken = True
            return None
        self.known[text] = n
        return n


async def measure_of(client: Any, messages: Sequence[Mapping[str, Any]]) -> Any:
    """A function that gives a prompt's tokens: exact for the texts of ``messages`` when
    the client's server counts tokens (the ``tokens`` a probe found), else None (the
    estimate). A text it has not counted (one cut to fit) is taken at the most tokens a
    character the counted texts showed, and never fewer than the estimate."""
    tokens = getattr(client, "tokens", None)
    if not isinstance(tokens, ServerTokens):
        return None
    texts = [str(m.get("content") or "") for m in messages]
    got = await asyncio.gather(*(tokens.count(t) for t in dict.fromkeys(texts)))
    if any(n is None for n in got):
        return None
    exact = {t: tokens.known[t] for t in texts}
    rate = max([1 / CHARS_PER_TOKEN] + [n / len(t) for t, n in exact.items() if len(t) >= 200])

    def measure(msgs: Sequence[Mapping[str, Any]]) -> int:
        total = TEMPLATE_TOKENS
        for m in msgs:
            text = str(m.get("content") or "")
            total += TEMPLATE_TOKENS + (exact[text] if text in exact
                                        else math.ceil(len(text) * rate))
        return max(total, 0) if exact else prompt_tokens(msgs)

    return measure
