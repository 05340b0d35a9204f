"""ragmark's own pipeline asked one question at a time, as a system that converses: the
corpus is chunked and indexed once (:meth:`OwnTurns.prepare`), then each turn is
retrieved (and reranked) with its own message and answered by the config's generator
from the top_n chunks. The LLM generator reads the conversation so far (the earlier
turns as chat messages before the question); another generator reads the turn's
contexts alone. What ``ragmark simulate`` asks when the config has no [pipeline].

The retrieval query is the turn's message as the user wrote it (no rewriting with the
earlier turns): a follow-up that says "it" retrieves what "it" retrieves, as a plain RAG
system would. The contexts a turn returns are the top_n chunks the generator read.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ragmark.case import Context, Output
from ragmark.config import RunConfig
from ragmark.generation.base import GenerationFailed
from ragmark.llm.factory import direct_client
from ragmark.progress import Progress
from ragmark.retrieval.access import visible
from ragmark.running.own import top_n_chunks, without_credentials
from ragmark.running.stages import (
    Components,
    chunk_stage,
    components,
    index_stage,
    retrieve_shard,
)
from ragmark.types import Chunk, Dataset


class OwnTurns:
    """The config's own pipeline over ``dataset``'s corpus, one turn at a time. Built
    components at once (a config that cannot be built is a ConfigError before any
    work); :meth:`prepare` chunks and indexes (with progress); ``async with`` it opens
    the LLM generator's client; :meth:`ask` answers a turn."""

    takes_history = True

    def __init__(self, dataset: Dataset, cfg: RunConfig, *, index_cache: bool = True
                 ) -> None:
        self.cfg = cfg
        seen = visible(dataset.corpus, cfg.access)
        self.dataset = dataset if seen is dataset.corpus else replace(dataset, corpus=seen)
        self.parts: Components = components(dataset, cfg, with_answers=True)
        self.index_cache = index_cache
        self.chunks: list[Chunk] = []
        self._texts: list[str] = []
        self._lock = threading.Lock()  # one retrieval at a time: retrievers share state
        self._client: Any = None
        self._opened: Any = None

    @property
    def llm_settings(self) -> Any:
        """The LLM generator's endpoint settings (None for another generator)."""
        gen = self.parts.generator
        return getattr(gen, "settings", None) if hasattr(gen, "answer") else None

    def prepare(self, prog: Progress) -> dict[str, Any]:
        """Chunk and index the corpus (the index loaded when saved before); what was done."""
        t0 = time.perf_counter()
        self.chunks, _ = chunk_stage(self.dataset, self.parts, prog)
        self._texts = [c.text for c in self.chunks]
        source, _ = index_stage(self.parts, self.chunks, prog, self.cfg.retriever.name,
                                use_cache=self.index_cache)
        return {"chunks": len(self.chunks), "index": source,
                "seconds": round(time.perf_counter() - t0, 3)}

    def describe(self) -> dict[str, Any]:
        """The config as a simulation's key and record hold it (no credentials)."""
        return without_credentials(self.cfg.model_dump(
            mode="json", exclude={"pipeline", "judges"}))

    async def __aenter__(self) -> OwnTurns:
        if self.llm_settings is not None:
            self._opened = direct_client(self.llm_settings)
            self._client = await self._opened.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._opened is not None:
            await self._opened.__aexit__(*exc)
            self._opened = self._client = None

    def retrieve(self, question: str) -> list[Chunk]:
        """The top_n chunks for ``question``, best first."""
        shared = (self.parts.retriever, self.parts.reranker, self._texts, self.cfg.top_k)
        with self._lock:
            ranked, _ = retrieve_shard(shared, ([question], None))
        return top_n_chunks(self.chunks, ranked, self.cfg.top_n)[1][0]

    async def ask(self, question: str, history: Sequence[Mapping[str, Any]] | None,
                  conversation: str | None = None) -> Output:
        """One turn: retrieved with ``question``, answered with the conversation so far."""
        t0 = time.perf_counter()
        top = await asyncio.to_thread(self.retrieve, question)
        gen = self.parts.generator
        if self._client is not None:
            got = await gen.answer(self._client, question, top, history or ())
        else:
            got = await asyncio.to_thread(gen.generate, question, top)
        took = time.perf_counter() - t0
        if isinstance(got, GenerationFailed):
            return Output.failed(f"generation failed: {got.reason}", latency_s=took)
        return Output(answer=got, contexts=tuple(Context(c.text, c.id, c.doc_id)
                                                 for c in top), latency_s=took)
