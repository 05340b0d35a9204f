"""A reranker behind an API: the Cohere/Jina rerank protocol.

``POST {base_url}/rerank`` with ``query``, ``documents`` and ``top_n`` answers
``results[].index`` and ``relevance_score``; Cohere, Jina, llama.cpp's server
(``--reranking``), vLLM and text-embeddings-inference serve it. Every (endpoint, model,
query, passage) score is an entry of the LLM call cache, so a rerun or a resumed run
sends only the passages it has not scored yet; requests go through the LLM client's
concurrency limit, retries and accounting. A passage whose score could not be had (a
failed request) goes below every scored passage of its question, in retrieval order, and
the failure is counted in the run's notes, never scored as 0.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ragmark.errors import ConfigError
from ragmark.llm import LLMCallFailed
from ragmark.llm.accounting import llm_summary
from ragmark.llm.cache import cache_key
from ragmark.llm.factory import direct_client
from ragmark.llm.fields import endpoint_settings
from ragmark.llm.loop import LoopThread
from ragmark.llm.protocol import parse_rerank, rerank_body
from ragmark.retrieval.rerank import unscored_notes

RERANK_PATH = "/rerank"


def failed_below(scores: Sequence[float | None]) -> NDArray[np.float32]:
    """The scores, with each missing one (None) below every present one, in input order.

    >>> [round(float(x), 3) for x in failed_below([0.2, None, 0.9, None])]
    [0.2, -1.05, 0.9, -1.55]
    """
    present = [s for s in scores if s is not None]
    floor = (min(present) if present else 0.0) - 1.0
    n = len(scores)
    return np.asarray([s if s is not None else floor - i / n for i, s in enumerate(scores)],
                      dtype=np.float32)


class APIReranker:
    """Scores passages with a rerank endpoint; see the module docstring.

    ``base_url`` (e.g. ``https://api.jina.ai/v1`` or ``http://localhost:8080/v1``) and
    ``model`` are required; ``api_key_env`` names the variable holding the key;
    ``batch_size`` passages go in one request (a question's top_k in one request when it
    is larger); ``prices`` maps the model to ($ per million input tokens, 0).
    """

    name = "api"

    def __init__(
        self,
        base_url: str | None = None,
        model: str | None = None,
        api_key_env: str | None = None,
        concurrency: int | None = None,
        max_retries: int | None = None,
        timeout: float | None = None,
        prices: dict[str, tuple[float, float]] | None = None,
        batch_size: int = 100,
    ) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ConfigError(f"api reranker: batch_size must be a positive integer, "
                              f"got {batch_size!r}")
        self.settings = endpoint_settings(
            "api reranker", base_url=base_url, model=model, api_key_env=api_key_env,
            concurrency=concurrency, max_retries=max_retries, timeout=timeout, prices=prices)
        self.batch_size = batch_size
        self.client = direct_client(self.settings)
        self.scored = 0
        self.failures: Counter[str] = Counter()
        self._loop = LoopThread()

    def __getstate__(self) -> dict[str, Any]:
        raise TypeError("the api reranker runs where the run started (its calls are cached "
                        "there); it is not sent to an executor's workers")

    def key(self, query: str, passage: str) -> str:
        """The cache key of one (query, passage) score at this endpoint and model."""
        s = self.settings
        return cache_key("rerank", s.base_url, s.model,
                         [{"query": query, "document": passage}], {})

    async def _post(self, query: str, docs: list[str]) -> list[float]:
        got = await self.client.post(RERANK_PATH, rerank_body(self.settings.model, query, docs),
                                     lambda data: parse_rerank(data, len(docs)))
        cache = self.client.cache
        if cache is not None:
            share = got.usage.prompt_tokens // max(len(docs), 1)
            for d, sc in zip(docs, got.value, strict=True):
                cache.put(self.key(query, d), provider="rerank", model=self.settings.model,
                          text=json.dumps(sc), prompt_tokens=share, completion_tokens=0,
                          seconds=got.seconds)
        return got.value

    async def _scores(self, query: str, texts: Sequence[str]) -> list[float | None]:
        """Each passage's score (None where the request failed)."""
        cache = self.client.cache
        known: dict[str, float] = {}
        for t in dict.fromkeys(texts):
            hit = cache.get(self.key(query, t)) if cache is not None else None
            if hit is not None:
                known[t] = float(json.loads(hit.text))
        self.client.stats.cache_hits += sum(1 for t in texts if t in known)
        missing = [t for t in dict.fromkeys(texts) if t not in known]
        batches = [missing[s : s + self.batch_size]
                   for s in range(0, len(missing), self.batch_size)]
        got = await asyncio.gather(*(self._post(query, b) for b in batches),
                                   return_exceptions=True)
        for batch, result in zip(batches, got, strict=True):
            if isinstance(result, LLMCallFailed):
                self.client.stats.failures += 1
                self.failures[result.reason] += len(batch)
                continue
            if isinstance(result, BaseException):
                raise result
            known.update(zip(batch, result, strict=True))
        out = [known.get(t) for t in texts]
        self.scored += sum(1 for s in out if s is not None)
        return out

    async def _many(self, queries: Sequence[str],
                    text_lists: Sequence[Sequence[str]]) -> list[list[float | None]]:
        return list(await asyncio.gather(*(self._scores(q, ts)
                                           for q, ts in zip(queries, text_lists, strict=True))))

    def score(self, query: str, texts: Sequence[str]) -> NDArray[np.float32]:
        return self.score_many([query], [texts])[0]

    def score_many(self, queries: Sequence[str],
                   text_lists: Sequence[Sequence[str]]) -> list[NDArray[np.float32]]:
        """:meth:`score` of many questions, their requests sent concurrently."""
        work = [(q, ts) for q, ts in zip(queries, text_lists, strict=True) if ts]
        got = iter(self._loop.run(self._many([q for q, _ in work], [ts for _, ts in work]))
                   if work else [])
        return [failed_below(next(got)) if ts else np.zeros(0, dtype=np.float32)
                for ts in text_lists]

    def summary(self) -> tuple[list[str], dict[str, Any]]:
        """Notes (passages without a score) and the accounting of the reranking."""
        failed = sum(self.failures.values())
        notes = unscored_notes("api reranker", self.failures, self.scored, "got no score",
                               "scored")
        return notes, {**llm_summary(self.settings, self.client), "protocol": "rerank",
                       "passages_scored": self.scored, "passages_failed": failed}

    def close(self) -> None:
        """Close the HTTP pool and the background loop."""
        if self._loop.started:
            self._loop.run(self.client.aclose())
        self._loop.close()
