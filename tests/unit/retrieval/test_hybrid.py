"""The hybrid retriever fuses its retrievers exactly as the pure fusion functions do."""

from __future__ import annotations

import numpy as np
import pytest

from ragmark.errors import ConfigError, UnknownComponentError
from ragmark.retrieval.bm25 import BM25Retriever
from ragmark.retrieval.fusion import rrf, weighted_sum
from ragmark.retrieval.hybrid import HybridRetriever
from ragmark.types import Chunk

TEXTS = [
    "Metformin is contraindicated in severe renal impairment.",
    "Renal function should be checked before starting metformin therapy.",
    "The ICD-10 code for type 2 diabetes mellitus is E11.",
    "Insulin therapy is used when oral drugs fail in type 2 diabetes.",
    "Hybrid search fuses sparse and dense rankings with reciprocal rank fusion.",
    "Dense retrieval embeds questions and passages in the same vector space.",
    "Kidney disease changes how drugs such as metformin are cleared.",
]
CHUNKS = [Chunk(id=f"c{i}", doc_id=f"d{i}", text=t) for i, t in enumerate(TEXTS)]
QUERIES = ["metformin renal impairment", "type 2 diabetes code", "dense sparse fusion"]


def as_run(ids, scores):
    return {str(q): {f"c{i}": float(s) for i, s in zip(ids[q], scores[q], strict=True)
                     if i >= 0} for q in range(len(ids))}


def subs():
    return [BM25Retriever(), BM25Retriever(stemmer="none", stopwords="none", k1=0.5, b=0.2)]


@pytest.mark.parametrize("fusion", ["rrf", "weighted"])
def test_hybrid_equals_fusing_the_runs_of_its_retrievers(fusion):
    hybrid = HybridRetriever(subs(), fusion=fusion, candidates=5)
    hybrid.index(CHUNKS)
    ids, scores = hybrid.retrieve(QUERIES, 4)
    assert ids.shape == (3, 4) and scores.dtype == np.float32
    runs = []
    for r in subs():
        r.index(CHUNKS)
        runs.append(as_run(*r.retrieve(QUERIES, 5)))
    expected = rrf(runs, k=60, depth=4) if fusion == "rrf" else weighted_sum(runs, depth=4)
    got = as_run(ids, scores)
    for q in expected:
        assert list(got[q]) == list(expected[q])  # same items, same order
        assert np.allclose(list(got[q].values()), list(expected[q].values()), rtol=1e-6)


def test_hybrid_is_built_from_config_tables_and_pads_short_rankings():
    hybrid = HybridRetriever([{"name": "bm25"}, {"name": "bm25", "k1": 0.9}], candidates=2)
    hybrid.index(CHUNKS[:3])
    ids, scores = hybrid.retrieve(["metformin"], 5)
    assert ids[0, :2].tolist() == [0, 1] and (ids[0, 2:] == -1).all()
    assert np.isneginf(scores[0, 2:]).all()  # c2 shares no term with the query
    # rank 1 in both runs: 2/61; rank 2 in both: 2/62
    assert scores[0, :2].tolist() == pytest.approx([2 / 61, 2 / 62])


def test_hybrid_errors():
    with pytest.raises(ConfigError, match="needs at least 2 retrievers, got 1"):
        HybridRetriever([{"name": "bm25"}])
    with pytest.raises(ConfigError, match="unknown fusion 'max'; known: rrf, weighted"):
        HybridRetriever(fusion="max")
    with pytest.raises(ConfigError, match="2 weights for 3 retrievers"):
        HybridRetriever([{"name": "bm25"}] * 3, weights=[1, 2])
    with pytest.raises(UnknownComponentError, match="unknown retriever 'bm99'"):
        HybridRetriever([{"name": "bm25"}, {"name": "bm99"}])
