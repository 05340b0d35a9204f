"""Embedding endpoints against the scripted server (OpenAI /embeddings and Ollama's
/api/embed): unit vectors in input order, batches sent concurrently, retried and counted,
one request per text per model through the embedding cache (keyed by provider, base URL,
model and dimensions), failures kept apart from what was received."""

from __future__ import annotations

import numpy as np
import pytest
from support.fake_llm_server import Reply, embed_tokens, fake_vector

from ragmark.embeddings.api import APIEmbedder, EmbeddingModel, normalise
from ragmark.embeddings.cache import CachedEmbedder
from ragmark.errors import ConfigError, RagmarkError

TEXTS = ["alpha beta", "gamma", "delta epsilon zeta", "eta", "theta iota"]


def unit(text: str, dim: int = 8) -> np.ndarray:
    v = np.asarray(fake_vector(text, dim), dtype=np.float64)
    return v / np.linalg.norm(v)


def test_openai_vectors_are_unit_length_in_input_order(server, monkeypatch):
    monkeypatch.setenv("EMB_KEY", "sk-emb")
    emb = APIEmbedder(EmbeddingModel(provider="openai", base_url=server.url, model="emb-model",
                                     api_key_env="EMB_KEY", batch_size=2))
    got = emb.encode(TEXTS)
    assert got.dtype == np.float32 and got.shape == (5, 8)
    assert np.allclose(got, [unit(t) for t in TEXTS], atol=1e-6)
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-6)
    assert len(server.requests) == 3  # batches of 2, 2, 1
    first = server.requests[0]
    assert first.path == "/v1/embeddings"
    assert first.headers["Authorization"] == "Bearer sk-emb"
    assert set(first.body) == {"model", "input", "encoding_format"}
    acct = emb.summary()
    assert acct["calls"] == 3 and acct["prompt_tokens"] == sum(embed_tokens(t) for t in TEXTS)


def test_dimensions_are_sent_and_enter_the_model_id(server):
    emb = APIEmbedder(EmbeddingModel(provider="openai", base_url=server.url, model="emb-model",
                                     dimensions=4, batch_size=64))
    assert emb.encode(["one text"]).shape == (1, 4)
    assert server.requests[0].body["dimensions"] == 4
    assert emb.model_id == f"openai:{server.url}:emb-model/dimensions=4"
    assert emb.dim == 4


def test_ollama_uses_api_embed(ollama_server):
    emb = APIEmbedder(EmbeddingModel(provider="ollama", base_url=ollama_server.url,
                                     model="nomic-embed-text", batch_size=64))
    got = emb.encode(TEXTS[:2])
    assert np.allclose(got, [unit(t) for t in TEXTS[:2]], atol=1e-6)
    (req,) = ollama_server.requests
    assert req.path == "/api/embed" and req.body == {"model": "nomic-embed-text",
                                                     "input": TEXTS[:2]}
    assert emb.summary()["prompt_tokens"] == 3


def test_batches_go_out_concurrently(server):
    server.rule = lambda body: Reply(delay=0.2)
    emb = APIEmbedder(EmbeddingModel(provider="openai", base_url=server.url, model="emb-model",
                                     batch_size=1, concurrency=3))
    emb.encode(TEXTS)
    assert server.max_active == 3 and len(server.requests) == 5


def test_the_cache_sends_each_text_once_per_model(server):
    cached = CachedEmbedder(APIEmbedder(EmbeddingModel(provider="openai", base_url=server.url,
                                                       model="emb-model", batch_size=2)))
    first = cached.encode(TEXTS)
    assert len(server.requests) == 3
    again = CachedEmbedder(APIEmbedder(EmbeddingModel(provider="openai", base_url=server.url,
                                                      model="emb-model", batch_size=2)))
    got = again.encode([*TEXTS, "new one"])
    assert np.array_equal(got[:5], first)
    assert np.allclose(got[5], unit("new one"), atol=1e-6)
    assert len(server.requests) == 4  # only "new one"
    assert server.requests[-1].body["input"] == ["new one"]
    assert again.stats == {"hits": 5, "encoded": 1}
    # the same model with other dimensions is another model
    CachedEmbedder(APIEmbedder(EmbeddingModel(provider="openai", base_url=server.url,
                                              model="emb-model", dimensions=4,
        batch_size=64))).encode(TEXTS)
    assert len(server.requests) == 5


def test_credentials_never_enter_the_model_id(server):
    url = server.url.replace("http://", "http://user:pw@")
    emb = APIEmbedder(EmbeddingModel(provider="openai", base_url=url, model="emb-model",
                                     batch_size=64))
    assert emb.model_id == f"openai:{server.url}:emb-model"


def test_a_retryable_error_is_retried_and_counted(server):
    server.queue.extend([Reply(status=503), Reply(body={"data": [], "usage": {}})])
    emb = APIEmbedder(EmbeddingModel(provider="openai", base_url=server.url, model="emb-model",
                                     batch_size=64))
    emb.settings = emb.client.settings = emb.settings.model_copy(update={"backoff_base": 0.0})
    got = emb.encode(TEXTS[:2])
    assert np.allclose(got, [unit(t) for t in TEXTS[:2]], atol=1e-6)
    assert len(server.requests) == 3 and emb.summary()["retries"] == 2


def test_a_failed_batch_is_an_error_and_the_rest_is_kept(server):
    def rule(body):
        return Reply(status=400, body={"error": "too long"}) if "gamma" in body["input"] else None

    server.rule = rule
    cached = CachedEmbedder(APIEmbedder(EmbeddingModel(provider="openai", base_url=server.url,
                                                       model="emb-model", batch_size=1,
        max_retries=0)))
    with pytest.raises(RagmarkError, match=r"1 of 5 batches failed: HTTP 400 .*rerun sends"):
        cached.encode(TEXTS)
    assert cached.missing(TEXTS) == ["gamma"]
    assert cached.embedder.summary()["failures"] == 1
    server.rule = None
    before = len(server.requests)
    cached.encode(TEXTS)
    assert len(server.requests) == before + 1


def test_normalise_leaves_a_zero_row_zero():
    out = normalise(np.array([[3.0, 4.0], [0.0, 0.0]], dtype=np.float32))
    assert out.tolist() == [[0.6000000238418579, 0.800000011920929], [0.0, 0.0]]


def test_settings_errors_name_what_is_wrong():
    with pytest.raises(ConfigError, match="provider must be one of local, openai, ollama"):
        EmbeddingModel(model=None, batch_size=32, threads=1, provider="cohere",
                       base_url="http://x").make()
    with pytest.raises(ConfigError, match="base_url apply to an embedding endpoint"):
        EmbeddingModel(model=None, batch_size=32, threads=1, base_url="http://x").make()
    with pytest.raises(ConfigError, match="needs 'model'"):
        EmbeddingModel(model=None, batch_size=32, threads=1, provider="openai",
                       base_url="http://x/v1").make()
    with pytest.raises(ConfigError, match="dimensions must be a positive integer"):
        EmbeddingModel(model="m", batch_size=32, threads=1, provider="openai",
                       base_url="http://x/v1", dimensions=0).make()


def test_one_vector_per_token_is_mean_pooled_and_counted(server):
    tokens = {"ab": [[1.0, 0.0], [0.0, 1.0]], "c": [[2.0, 2.0]]}
    server.rule = lambda body: Reply(body={
        "data": [{"index": i, "embedding": tokens[t]} for i, t in enumerate(body["input"])],
        "usage": {"prompt_tokens": 3}})
    emb = APIEmbedder(EmbeddingModel(provider="openai", base_url=server.url, model="per-token",
                                     batch_size=64))
    got = emb.encode(["ab", "c"])
    assert np.allclose(got, [[2 ** -0.5, 2 ** -0.5], [2 ** -0.5, 2 ** -0.5]])
    assert emb.summary()["token_vectors_pooled"] == 2
