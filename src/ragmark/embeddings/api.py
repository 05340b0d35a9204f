"""Embeddings from a model behind an API.

``provider = "openai"`` posts to ``{base_url}/embeddings`` (OpenAI, vLLM, llama.cpp's
server started with ``--embedding``, LM Studio, text-embeddings-inference's OpenAI
route); ``provider = "ollama"`` to ``{base_url}/api/embed``. Requests go through the LLM
client's code (concurrency limit, retries with backoff, Retry-After, timeouts, token
accounting), a batch of ``batch_size`` texts per request. A server that answers one
vector per token (llama.cpp's server without a pooling setting) has them mean-pooled here,
and the run's notes say so. Every vector is L2-normalised
here, whatever the server does, so an API model and a local one are compared on the
same cosine. Wrapped in :class:`~ragmark.embeddings.CachedEmbedder` (as the dense
retriever and the semantic chunker do), each text is sent once per model: the cache key
names the provider, the base URL (without credentials), the model and ``dimensions``.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ragmark.errors import ConfigError, RagmarkError
from ragmark.llm import LLMCallFailed
from ragmark.llm.factory import direct_client
from ragmark.llm.fields import endpoint_settings
from ragmark.llm.loop import LoopThread
from ragmark.llm.protocol import embed_body, embed_path, estimate_tokens, parse_embeddings
from ragmark.llm.providers import names as provider_names
from ragmark.llm.providers import providers
from ragmark.progress import Advance


def embedding_providers() -> tuple[str, ...]:
    """``local`` (a sentence-transformers model in this process) and every LLM provider
    (:mod:`ragmark.llm.providers`), whose embedding API is called."""
    return ("local", *provider_names())


def normalise(vectors: NDArray[np.float32]) -> NDArray[np.float32]:
    """Rows scaled to unit L2 norm (a zero row stays zero)."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.where(norms > 0, norms, 1.0)).astype(np.float32)


@dataclass(frozen=True, kw_only=True)
class EmbeddingModel:
    """The embedding keys of a config table (the dense retriever's, the semantic
    chunker's) as one value: which model, and where it runs. ``provider = "local"`` (the
    default) is a sentence-transformers ``model`` in this process (None: the packaged
    all-MiniLM-L6-v2), encoding ``batch_size`` texts at a time on ``threads`` CPU threads;
    any LLM provider is an embedding endpoint at ``base_url`` (``api_key_env`` names the
    variable holding the key; ``dimensions`` is sent when given, as OpenAI's
    text-embedding-3 models and Ollama shorten their vectors; ``concurrency``,
    ``max_retries`` and ``timeout`` limit the calls; ``prices`` maps the model to ($ per
    million input tokens, 0))."""

    model: str | None = None
    batch_size: int = 32
    threads: int | None = 1
    provider: str = "local"
    base_url: str | None = None
    api_key_env: str | None = None
    dimensions: int | None = None
    concurrency: int | None = None
    max_retries: int | None = None
    timeout: float | None = None
    prices: dict[str, tuple[float, float]] | None = None

    def embedding_model(self) -> EmbeddingModel:
        """The embedding keys alone (of a table that has more)."""
        return EmbeddingModel(**{f.name: getattr(self, f.name)
                                 for f in fields(EmbeddingModel)})

    def make(self) -> Any:
        """The embedder: a local sentence-transformers model or an :class:`APIEmbedder`."""
        if self.provider not in embedding_providers():
            raise ConfigError(f"embedding provider must be one of "
                              f"{', '.join(embedding_providers())}; "
                              f"got {self.provider!r}")
        if self.provider == "local":
            given = [f.name for f in fields(EmbeddingModel)
                     if f.name not in ("model", "batch_size", "threads", "provider")
                     and getattr(self, f.name) is not None]
            if given:
                either = " or ".join(f'"{n}"' for n in provider_names())
                raise ConfigError(f"{', '.join(given)} apply to an embedding endpoint: set "
                                  f"provider = {either} (the local model takes model, "
                                  "batch_size, threads)")
            from ragmark.embeddings.sentence_transformer import SentenceTransformerEmbedder

            return SentenceTransformerEmbedder(self.model, batch_size=self.batch_size,
                                               threads=self.threads)
        return APIEmbedder(self)


class APIEmbedder:
    """An :class:`~ragmark.embeddings.Embedder` that asks the embedding endpoint an
    :class:`EmbeddingModel` names; see the module docstring."""

    remote = True

    def __init__(self, spec: EmbeddingModel) -> None:
        provider, dimensions, batch_size = spec.provider, spec.dimensions, spec.batch_size
        if provider not in providers():
            raise ConfigError(f"embedding provider must be one of "
                              f"{', '.join(embedding_providers())}; "
                              f"got {provider!r}")
        for name, value in (("dimensions", dimensions), ("batch_size", batch_size)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                      or value < 1):
                raise ConfigError(f"embedding endpoint: {name} must be a positive integer, "
                                  f"got {value!r}")
        self.settings = endpoint_settings(
            f"{provider} embedding endpoint", provider=provider, base_url=spec.base_url,
            model=spec.model, api_key_env=spec.api_key_env, concurrency=spec.concurrency,
            max_retries=spec.max_retries, timeout=spec.timeout, prices=spec.prices)
        self.dimensions = dimensions
        self.batch_size = batch_size
        self.client = direct_client(self.settings, use_cache=False)
        self._loop = LoopThread()
        self._dim: int | None = dimensions
        self.pooled = 0
        """Texts whose vector the endpoint gave per token, mean-pooled here."""

    def __getstate__(self) -> dict[str, Any]:
        """Pickled (a retriever sent to an executor's workers, which need no vectors from
        it) without the HTTP client and its loop."""
        return {**self.__dict__, "client": None, "_loop": None}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.client = direct_client(self.settings, use_cache=False)
        self._loop = LoopThread()

    @property
    def model_id(self) -> str:
        s = self.settings
        mid = f"{s.provider}:{s.display_url}:{s.model}"
        return mid + (f"/dimensions={self.dimensions}" if self.dimensions else "")

    @property
    def dim(self) -> int:
        """The vector length (one request for a short text when ``dimensions`` is not
        given and nothing was embedded yet)."""
        if self._dim is None:
            self.encode(["dimension"])
        return self._dim  # type: ignore[return-value]

    async def _embed(self, texts: list[str]) -> NDArray[np.float32]:
        s = self.settings
        got = await self.client.post(
            embed_path(s.provider), embed_body(s.provider, s.model, texts, self.dimensions),
            lambda data: parse_embeddings(s.provider, data, len(texts)))
        vectors = np.asarray(got.value[0], dtype=np.float32)
        self.pooled += got.value[1]
        if not np.isfinite(vectors).all():
            raise LLMCallFailed(f"{self.model_id} returned non-finite values",
                                retryable=False)
        if self._dim is None:
            self._dim = vectors.shape[1]
        elif vectors.shape[1] != self._dim:
            raise LLMCallFailed(f"{self.model_id} returned {vectors.shape[1]} dimensions, "
                                f"earlier {self._dim}", retryable=False)
        return normalise(vectors)

    def encode_concurrent(self, batches: Sequence[Sequence[str]],
                          on_done: Callable[[int, NDArray[np.float32]], None]) -> None:
        """Send every batch at once (up to ``concurrency`` in flight) and call
        ``on_done(i, vectors)`` in this thread as each completes; after the others have
        finished, raises RagmarkError for the first batch that failed."""
        futures = {self._loop.submit(self._embed(list(b))): i for i, b in enumerate(batches)}
        failed: list[str] = []
        try:
            for fut in concurrent.futures.as_completed(futures):
                try:
                    vectors = fut.result()
                except LLMCallFailed as e:
                    self.client.stats.failures += 1
                    failed.append(e.reason)
                    continue
                on_done(futures[fut], vectors)
        finally:
            for fut in futures:
                fut.cancel()
            self.close()  # the loop's thread ends; the next call starts another
        if failed:
            raise RagmarkError(
                f"embedding endpoint {self.settings.display_url} ({self.settings.model}): "
                f"{len(failed)} of {len(batches)} batches failed: {failed[0]}; the vectors "
                "received are kept in the embedding cache, so a rerun sends only the rest")

    def encode(self, texts: Sequence[str], progress: Advance | None = None
               ) -> NDArray[np.float32]:
        """Unit-norm vectors of ``texts`` in order (batches sent concurrently)."""
        texts = list(texts)
        batches = [texts[s : s + self.batch_size] for s in range(0, len(texts), self.batch_size)]
        parts: dict[int, NDArray[np.float32]] = {}

        def done(i: int, vectors: NDArray[np.float32]) -> None:
            parts[i] = vectors
            if progress is not None:
                progress(len(vectors))

        self.encode_concurrent(batches, done)
        if not parts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        return np.concatenate([parts[i] for i in range(len(batches))])

    def estimate(self, texts: Sequence[str]) -> dict[str, Any]:
        """What embedding ``texts`` would need: requests, texts, and input tokens
        estimated as characters / 4 (not a tokenizer), with their cost when priced."""
        tokens = sum(estimate_tokens([{"content": t}]) - 4 for t in texts)
        price = self.settings.price()
        return {"endpoint": self.settings.display_url, "model": self.settings.model,
                "calls": -(-len(texts) // self.batch_size), "texts": len(texts),
                "estimated_prompt_tokens": tokens,
                "estimated_cost": None if price is None else tokens * price[0] / 1e6}

    def summary(self) -> dict[str, Any]:
        """The accounting of the requests made: endpoint, model, calls, retries, failed
        calls, input tokens and their estimated cost."""
        st = self.client.stats
        return {"endpoint": self.settings.display_url, "model": self.settings.model,
                "calls": st.calls, "retries": st.retries, "failures": st.failures,
                "prompt_tokens": st.prompt_tokens, "completion_tokens": 0,
                "estimated_cost": st.estimated_cost(), "token_vectors_pooled": self.pooled}

    def close(self) -> None:
        """Close the HTTP pool and the background loop."""
        if self._loop.started:
            self._loop.run(self.client.aclose())
        self._loop.close()
