"""Exact blocked top-k, the FAISS path, and the dense retriever (with a fake embedder)."""

from __future__ import annotations

import importlib.util
import pickle
from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from ragmark.errors import ConfigError, MissingExtraError, UnknownComponentError
from ragmark.registry import registry
from ragmark.retrieval.base import prepare, retrieve_prepared, slice_prepared
from ragmark.retrieval.dense import DenseRetriever
from ragmark.retrieval.topk import exact_top_k, faiss_index, faiss_top_k
from ragmark.types import Chunk


def brute_force(q: np.ndarray, d: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Full sort of every score: score descending, then index ascending; padded."""
    s = (q.astype(np.float64) @ d.astype(np.float64).T).astype(np.float32)
    idx = np.broadcast_to(np.arange(len(d)), s.shape)
    order = np.lexsort((idx, -s), axis=-1)[:, :k]
    ids = np.full((len(q), k), -1, dtype=np.int64)
    scores = np.full((len(q), k), -np.inf, dtype=np.float32)
    ids[:, : order.shape[1]] = order
    scores[:, : order.shape[1]] = np.take_along_axis(s, order, axis=1)
    return ids, scores


def unit(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    x = rng.standard_normal((n, dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


@pytest.mark.parametrize("block_size", [1, 3, 7, 64, 4096])
@pytest.mark.parametrize("k", [1, 5, 10, 70])
def test_blocked_exact_search_equals_brute_force(block_size, k):
    rng = np.random.default_rng(block_size * 100 + k)
    q, d = unit(rng, 9, 16), unit(rng, 64, 16)
    ids, scores = exact_top_k(q, d, k, block_size=block_size)
    want_ids, want_scores = brute_force(q, d, k)
    assert ids.dtype == np.int64 and scores.dtype == np.float32 and ids.shape == (9, k)
    np.testing.assert_array_equal(ids, want_ids)
    np.testing.assert_allclose(scores, want_scores, rtol=1e-5, atol=1e-6)
    if k > 64:  # padding past the corpus
        assert (ids[:, 64:] == -1).all() and np.isneginf(scores[:, 64:]).all()
    assert (np.diff(scores[:, : min(k, 64)], axis=1) <= 0).all()


def test_ties_come_back_by_chunk_index_whatever_the_block_size():
    # small integers: every score is exact, and many are equal
    rng = np.random.default_rng(3)
    d = rng.integers(-2, 3, size=(40, 4)).astype(np.float32)
    d[20:30] = d[0]  # exact duplicates of row 0
    q = rng.integers(-2, 3, size=(6, 4)).astype(np.float32)
    want = brute_force(q, d, 25)
    for bs in (1, 4, 13, 40):
        ids, scores = exact_top_k(q, d, 25, block_size=bs)
        np.testing.assert_array_equal(ids, want[0])
        np.testing.assert_array_equal(scores, want[1])


def test_negative_zero_equals_zero():
    q = np.array([[1.0]], dtype=np.float32)
    d = np.array([[-0.0], [0.0], [-0.0], [-1.0], [0.5]], dtype=np.float32)
    ids, scores = exact_top_k(q, d, 5, block_size=2)
    assert ids.tolist() == [[4, 0, 1, 2, 3]]
    assert scores.tolist() == [[0.5, 0.0, 0.0, 0.0, -1.0]]


@settings(max_examples=60, deadline=None)
@given(
    arrays(np.int8, st.tuples(st.integers(1, 5), st.just(3)), elements=st.integers(-3, 3)),
    arrays(np.int8, st.tuples(st.integers(1, 30), st.just(3)), elements=st.integers(-3, 3)),
    st.integers(1, 35),
    st.integers(1, 12),
)
def test_exact_search_law(q, d, k, block_size):
    ids, scores = exact_top_k(q.astype(np.float32), d.astype(np.float32), k, block_size)
    want_ids, want_scores = brute_force(q.astype(np.float32), d.astype(np.float32), k)
    np.testing.assert_array_equal(ids, want_ids)
    np.testing.assert_array_equal(scores, want_scores)


def test_empty_queries_and_bad_arguments():
    d = np.eye(3, dtype=np.float32)
    ids, scores = exact_top_k(np.zeros((0, 3), np.float32), d, 2)
    assert ids.shape == scores.shape == (0, 2)
    with pytest.raises(ValueError):
        exact_top_k(d, d, 0)
    with pytest.raises(ValueError):
        exact_top_k(d, d, 1, block_size=0)


def test_faiss_path_equals_exact():
    pytest.importorskip("faiss", reason="needs ragmark-eval[faiss]")
    rng = np.random.default_rng(7)
    q, d = unit(rng, 30, 32), unit(rng, 500, 32)
    index = faiss_index(d)
    for k in (1, 10, 600):
        got_ids, got_scores = faiss_top_k(index, q, k)
        ids, scores = exact_top_k(q, d, k, block_size=128)
        np.testing.assert_array_equal(got_ids, ids)
        np.testing.assert_allclose(got_scores, scores, rtol=1e-5, atol=1e-6)
        assert got_scores.dtype == np.float32


class LetterEmbedder:
    """Letter counts, L2-normalised: deterministic and good enough to rank by."""

    model_id = "letters@test"
    dim = 26

    def __init__(self) -> None:
        self.calls = 0

    def encode(self, texts: Sequence[str], progress=None) -> np.ndarray:
        self.calls += 1
        out = np.zeros((len(texts), 26), dtype=np.float32)
        for i, t in enumerate(texts):
            for c in t.lower():
                if "a" <= c <= "z":
                    out[i, ord(c) - 97] += 1
            out[i] /= max(np.linalg.norm(out[i]), 1e-9)
        if progress is not None:
            progress(len(texts))
        return out


def chunks(texts: Sequence[str]) -> list[Chunk]:
    return [Chunk(id=f"d{i}#0", doc_id=f"d{i}", text=t) for i, t in enumerate(texts)]


TEXTS = ["aaaa bbb", "zzzz yyy", "aaab", "mmmm nnn", "abab abab", "zyzy"]


@pytest.mark.parametrize("index", ["exact", "faiss"])
@pytest.mark.parametrize("cache", [False, True])
def test_dense_retriever_ranks_by_cosine(index, cache):
    if index == "faiss":
        pytest.importorskip("faiss", reason="needs ragmark-eval[faiss]")
    emb = LetterEmbedder()
    r = DenseRetriever(index=index, cache=cache, embedder=emb, block_size=2)
    done: list[int] = []
    r.index(chunks(TEXTS), progress=done.append)
    assert sum(done) == len(TEXTS)
    done.clear()
    ids, scores = r.retrieve(["aaa bb", "zz y"], 10, progress=done.append)
    assert sum(done) == 2
    assert ids.shape == (2, 10) and scores.dtype == np.float32
    d = emb.encode(TEXTS)
    want = exact_top_k(emb.encode(["aaa bb", "zz y"]), d, 10)
    np.testing.assert_array_equal(ids, want[0])
    assert ids[0, 0] == 0 and ids[1, 0] in (1, 5)
    assert (ids[:, 6:] == -1).all()


def test_dense_cache_means_a_second_index_encodes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGMARK_HOME", str(tmp_path))
    emb = LetterEmbedder()
    DenseRetriever(embedder=emb).index(chunks(TEXTS))
    calls = emb.calls
    r = DenseRetriever(embedder=emb)
    r.index(chunks(TEXTS))
    r.retrieve(["aaa"], 1)
    r.retrieve(["aaa"], 1)
    assert emb.calls == calls + 1  # only the new query, once
    assert (tmp_path / "embeddings" / "vectors.sqlite").is_file()


def test_dense_errors(monkeypatch):
    emb = LetterEmbedder()
    with pytest.raises(ConfigError, match="unknown index 'hnsw'; choices: exact, faiss"):
        DenseRetriever(index="hnsw", embedder=emb)
    with pytest.raises(ConfigError, match="block_size must be a positive integer"):
        DenseRetriever(block_size=0, embedder=emb)
    with pytest.raises(ConfigError, match="threads"):
        DenseRetriever(threads=0, embedder=emb)
    r = DenseRetriever(embedder=emb, cache=False)
    with pytest.raises(RuntimeError, match="index"):
        r.retrieve(["q"], 3)
    with pytest.raises(ConfigError, match="nothing to index"):
        r.index([])
    r.index(chunks(TEXTS))
    with pytest.raises(ConfigError, match="k must be a positive integer"):
        r.retrieve(["q"], 0)
    ids, scores = r.retrieve([], 3)
    assert ids.shape == scores.shape == (0, 3)

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "faiss" else real(name, *a)
    )
    with pytest.raises(MissingExtraError, match=r"ragmark-eval\[faiss\]"):
        DenseRetriever(index="faiss", embedder=emb)


def test_non_finite_embeddings_are_refused():
    class NaN(LetterEmbedder):
        def encode(self, texts, progress=None):
            return np.full((len(texts), 26), np.nan, dtype=np.float32)

    with pytest.raises(Exception, match="non-finite"):
        DenseRetriever(embedder=NaN(), cache=False).index(chunks(["a"]))


def test_registered_as_dense():
    # a [retriever] table of name = "dense" is a DenseTable, and the retriever is built
    r = registry("retriever").create("dense", provider="openai", model="m",
                                     base_url="http://127.0.0.1:9/v1", cache=False,
                                     block_size=7)
    assert isinstance(r, DenseRetriever) and r.name == "dense" and r.block_size == 7
    assert r.embedder.model_id == "openai:http://127.0.0.1:9/v1:m"
    with pytest.raises(UnknownComponentError, match="unexpected keyword argument 'embedder'"):
        registry("retriever").create("dense", embedder=LetterEmbedder())


@pytest.mark.parametrize("index", ["exact", "faiss"])
def test_pickled_dense_searches_prepared_shards_as_the_original(index, tmp_path):
    """What a worker gets: the retriever pickled (FAISS index rebuilt), the query vectors
    prepared on the driver, sliced per shard."""
    if index == "faiss":
        pytest.importorskip("faiss")
    r = DenseRetriever(embedder=LetterEmbedder(), index=index, cache=False)
    r.index(chunks(TEXTS))
    queries = ["aab", "zy", "mn", "ab", "yz"]
    ids, scores = r.retrieve(queries, 3)
    prepared = prepare(r, queries)
    assert prepared.shape == (5, 26)
    copy = pickle.loads(pickle.dumps(r))
    assert (copy._faiss is not None) == (index == "faiss")
    parts = [retrieve_prepared(copy, queries[a:a + 2], slice_prepared(prepared, a, a + 2), 3)
             for a in range(0, 5, 2)]
    np.testing.assert_array_equal(np.concatenate([p[0] for p in parts]), ids)
    np.testing.assert_array_equal(np.concatenate([p[1] for p in parts]), scores)
    assert ids[0, 0] == 2 and ids[1, 0] == 5  # "aaab" for "aab", "zyzy" for "zy"
