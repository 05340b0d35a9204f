"""The local executor, executor selection and errors, and what crosses to a worker
(pickled retrievers search exactly as the originals)."""

from __future__ import annotations

import pickle
import sys

import numpy as np
import pytest

from ragmark.chunking import WholeChunker, chunk_corpus
from ragmark.data import load_dataset
from ragmark.demo.tour import demo_path
from ragmark.errors import ConfigError, MissingExtraError
from ragmark.executors import LocalExecutor, active, create, using
from ragmark.executors.ray_executor import display_address
from ragmark.retrieval.base import prepare, retrieve_prepared, slice_prepared
from ragmark.retrieval.bm25 import BM25Retriever


def _square_plus(shared: int, item: int) -> int:
    return item * item + shared


def test_local_map_keeps_order_and_reports_each_item():
    done = []
    got = LocalExecutor().map(_square_plus, 10, [3, 1, 2], on_done=lambda i, r: done.append((i, r)))
    assert got == [19, 11, 14]
    assert done == [(0, 19), (1, 11), (2, 14)]


def test_active_executor_is_set_for_a_block_only():
    assert active().name == "local"
    mine = LocalExecutor()
    with using(mine):
        assert active() is mine
    assert active() is not mine


def test_create_rejects_unknown_names_and_address_without_ray():
    with pytest.raises(ConfigError, match="unknown executor 'spark'; choices: local, ray"):
        create("spark")
    with pytest.raises(ConfigError, match="--address is for --executor ray"):
        create("local", "127.0.0.1:6379")


def test_ray_missing_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(MissingExtraError, match=r"ragmark-eval\[ray\]"):
        create("ray")


def test_recorded_address_never_holds_credentials():
    assert display_address("ray://user:secret@head:10001") == "ray://head:10001"
    assert display_address("10.0.0.5:6379") == "10.0.0.5:6379"
    assert display_address(None) == "local instance"


def test_a_pickled_bm25_searches_shards_exactly_as_the_original():
    ds = load_dataset(demo_path() / "questions.json", demo_path() / "corpus")
    chunks = chunk_corpus(ds.corpus.documents, WholeChunker())
    r = BM25Retriever()
    r.index(chunks)
    questions = [s.question for s in ds.samples]
    ids, scores = r.retrieve(questions, 5)
    copy = pickle.loads(pickle.dumps(r))
    prepared = prepare(copy, questions)
    assert prepared is None  # BM25 needs nothing prepared
    parts = [retrieve_prepared(copy, questions[a:a + 3], slice_prepared(prepared, a, a + 3), 5)
             for a in range(0, len(questions), 3)]
    np.testing.assert_array_equal(np.concatenate([p[0] for p in parts]), ids)
    np.testing.assert_array_equal(np.concatenate([p[1] for p in parts]), scores)
    assert (ids[:, 0] >= 0).all()
