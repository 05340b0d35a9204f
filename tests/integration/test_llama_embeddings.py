"""Embeddings through the real HTTP path: llama.cpp's server started with --embedding
serves SmolLM2's vectors on /v1/embeddings (one vector per token, which ragmark
mean-pools). SmolLM2 is not an embedding model: these tests check the path, the
vectors' shape and norm, the cache and the accounting, never retrieval quality."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from support.cli import run_cli
from support.llama import MISSING, WHY_MISSING, llama_server

from ragmark.embeddings.api import APIEmbedder, EmbeddingModel
from ragmark.embeddings.cache import CachedEmbedder

DEMO = Path(__file__).resolve().parents[2] / "src" / "ragmark" / "demo"

pytestmark = pytest.mark.skipif(MISSING, reason=WHY_MISSING)


@pytest.fixture(scope="module")
def llama_embeddings(tmp_path_factory):
    """llama.cpp's server with SmolLM2 and --embedding true."""
    with llama_server(tmp_path_factory.mktemp("llama-emb") / "server.log",
                      "--embedding", "true") as url:
        yield url


def test_real_vectors_through_the_cache(llama_embeddings):
    texts = ["Aspirin reduces fever.", "The sky is blue.", "Aspirin reduces fever."]
    cached = CachedEmbedder(APIEmbedder(EmbeddingModel(provider="openai",
                                                       base_url=llama_embeddings, model="smollm2",
        batch_size=2, timeout=120)))
    got = cached.encode(texts)
    assert got.shape == (3, 576) and got.dtype == np.float32
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(got[0], got[2]) and not np.allclose(got[0], got[1])
    acct = cached.embedder.summary()
    assert acct["calls"] == 1 and acct["prompt_tokens"] > 0
    assert acct["token_vectors_pooled"] == 2  # this server gives one vector per token
    again = CachedEmbedder(APIEmbedder(EmbeddingModel(provider="openai",
                                                      base_url=llama_embeddings, model="smollm2",
        batch_size=64)))
    assert np.array_equal(again.encode(texts), got)
    assert again.embedder.summary()["calls"] == 0


def test_run_dense_api_on_llama_cpp(llama_embeddings, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("RAGMARK_EMBEDDING_BASE_URL", llama_embeddings)
    monkeypatch.setenv("RAGMARK_EMBEDDING_MODEL", "smollm2")
    out = tmp_path / "r.json"
    args = ["run", "--config", "dense-api", "--dataset", str(DEMO / "questions.json"),
            "--corpus", str(DEMO / "corpus"), "--max-queries", "4", "--skip-generation",
            "--metrics", "mrr,recall@5", "--output", str(out)]
    code, stdout, err = run_cli(args, capsys)
    assert code == 0, err
    data = json.loads(out.read_text())
    block = data["llm"]["embeddings"]
    assert block["texts_embedded"] == data["dataset"]["chunks"] + 4
    assert block["calls"] >= 1 and block["failures"] == 0 and block["prompt_tokens"] > 0
    assert data["counts"]["mrr@10"]["n"] == 4
    assert any("mean-pooled" in n for n in data["notes"])
    code, _, _ = run_cli([*args, "--no-index-cache"], capsys)
    assert code == 0
    assert json.loads(out.read_text())["llm"]["embeddings"]["calls"] == 0
