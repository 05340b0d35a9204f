"""The on-disk embedding cache, with a tiny deterministic fake embedder."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Sequence

import numpy as np
import pytest
from support.executors import PicklingExecutor

from ragmark.embeddings import CachedEmbedder, Embedder, text_key
from ragmark.errors import RagmarkError
from ragmark.home import cache_path, ragmark_home


class FakeEmbedder:
    """Unit vectors seeded by (model_id, text); records every call."""

    batch_size = 3

    def __init__(self, model_id: str = "fake@1", dim: int = 8, fail_after: int | None = None):
        self._model_id, self._dim = model_id, dim
        self.calls: list[list[str]] = []
        self.dim_calls = 0
        self.fail_after = fail_after

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dim(self) -> int:
        self.dim_calls += 1
        return self._dim

    def vector(self, text: str) -> np.ndarray:
        seed = hashlib.sha256(f"{self._model_id}|{text}".encode()).digest()
        v = np.random.default_rng(list(seed)).standard_normal(self._dim).astype(np.float32)
        return v / np.linalg.norm(v)

    def encode(self, texts: Sequence[str], progress=None) -> np.ndarray:
        if self.fail_after is not None and len(self.calls) >= self.fail_after:
            raise KeyboardInterrupt("killed")
        self.calls.append(list(texts))
        return np.stack([self.vector(t) for t in texts]) if texts else np.zeros((0, self._dim))

    @property
    def encoded(self) -> list[str]:
        return [t for call in self.calls for t in call]


TEXTS = ["alpha", "a much longer text about beta", "gamma ray", "d", "epsilon and more", "zeta"]


def test_fake_is_an_embedder():
    assert isinstance(FakeEmbedder(), Embedder)
    assert isinstance(CachedEmbedder(FakeEmbedder()), Embedder)


def test_round_trip_second_call_encodes_nothing(tmp_path):
    fake = FakeEmbedder()
    cached = CachedEmbedder(fake, path=tmp_path / "v.sqlite")
    first = cached.encode(TEXTS)
    assert first.dtype == np.float32 and first.shape == (6, 8)
    np.testing.assert_array_equal(first, np.stack([fake.vector(t) for t in TEXTS]))
    n_calls = len(fake.calls)
    assert sorted(fake.encoded) == sorted(TEXTS)

    again = CachedEmbedder(fake, path=tmp_path / "v.sqlite")  # a new object: state on disk
    second = again.encode(list(reversed(TEXTS)))
    assert len(fake.calls) == n_calls  # nothing encoded
    np.testing.assert_array_equal(second, first[::-1])
    assert again.stats == {"hits": 6, "encoded": 0}
    second[0, 0] = 5.0  # the result is an ordinary writable array


def test_order_restored_misses_sorted_longest_first_in_batches(tmp_path):
    fake = FakeEmbedder()
    out = CachedEmbedder(fake, path=tmp_path / "v.sqlite").encode(TEXTS)
    for i, t in enumerate(TEXTS):
        np.testing.assert_array_equal(out[i], fake.vector(t))
    assert [len(c) for c in fake.calls] == [3, 3]  # the inner batch_size
    assert fake.encoded == sorted(TEXTS, key=len, reverse=True)


def test_duplicates_encoded_once_and_progress_counts_every_text(tmp_path):
    fake = FakeEmbedder()
    cached = CachedEmbedder(fake, path=tmp_path / "v.sqlite", batch_size=2)
    texts = ["a", "b", "a", "c", "a", "b"]
    done: list[int] = []
    out = cached.encode(texts, progress=done.append)
    assert sorted(fake.encoded) == ["a", "b", "c"]
    assert sum(done) == 6
    np.testing.assert_array_equal(out[0], out[2])
    np.testing.assert_array_equal(out[1], out[5])
    # hits are reported at once, first; then each encoded batch
    done.clear()
    cached.encode(["a", "new", "b", "a"], progress=done.append)
    assert done == [3, 1]
    assert fake.encoded[-1] == "new"


def test_distinct_model_ids_never_share_vectors(tmp_path):
    path = tmp_path / "v.sqlite"
    one, two = FakeEmbedder("model-one@aaaa"), FakeEmbedder("model-two@bbbb")
    v1 = CachedEmbedder(one, path=path).encode(TEXTS)
    v2 = CachedEmbedder(two, path=path).encode(TEXTS)
    assert sorted(two.encoded) == sorted(TEXTS)  # no hit from the other model
    assert not np.allclose(v1, v2)
    np.testing.assert_array_equal(
        CachedEmbedder(FakeEmbedder("model-one@aaaa"), path=path).encode(TEXTS), v1
    )
    with sqlite3.connect(path) as con:
        assert con.execute("SELECT COUNT(*) FROM vectors").fetchone() == (12,)
        assert con.execute("SELECT COUNT(*) FROM models").fetchone() == (2,)


def test_killed_run_keeps_the_batches_it_finished(tmp_path):
    path = tmp_path / "v.sqlite"
    dying = FakeEmbedder(fail_after=1)  # the second batch is "killed"
    with pytest.raises(KeyboardInterrupt):
        CachedEmbedder(dying, path=path).encode(TEXTS)
    with sqlite3.connect(path) as con:
        rows = con.execute("SELECT hash FROM vectors").fetchall()
    assert {r[0] for r in rows} == {text_key(t) for t in dying.calls[0]}

    fresh = FakeEmbedder()
    out = CachedEmbedder(fresh, path=path).encode(TEXTS)
    assert sorted(fresh.encoded) == sorted(set(TEXTS) - set(dying.calls[0]))
    np.testing.assert_array_equal(out, np.stack([fresh.vector(t) for t in TEXTS]))


def test_many_texts_lookup_in_chunks(tmp_path):
    fake = FakeEmbedder()
    texts = [f"text number {i}" for i in range(1234)]
    cached = CachedEmbedder(fake, path=tmp_path / "v.sqlite", batch_size=500)
    a = cached.encode(texts)
    b = cached.encode(texts)
    assert len(fake.encoded) == 1234
    np.testing.assert_array_equal(a, b)


def test_dim_comes_from_the_cache_once_known(tmp_path):
    fake = FakeEmbedder()
    cached = CachedEmbedder(fake, path=tmp_path / "v.sqlite")
    cached.encode(["x"])
    fake.dim_calls = 0
    assert cached.dim == 8 and cached.encode([]).shape == (0, 8)
    assert fake.dim_calls == 0


def test_wal_mode_and_schema(tmp_path):
    path = tmp_path / "v.sqlite"
    CachedEmbedder(FakeEmbedder(), path=path).encode(["x"])
    with sqlite3.connect(path) as con:
        assert con.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        model_id, dim = con.execute("SELECT model_id, dim FROM models").fetchone()
        h, vec = con.execute("SELECT hash, vec FROM vectors").fetchone()
    assert (model_id, dim) == ("fake@1", 8)
    assert h == hashlib.sha256(b"x").digest() and len(vec) == 32


def test_default_path_is_under_ragmark_home(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGMARK_HOME", str(tmp_path / "home"))
    cached = CachedEmbedder(FakeEmbedder())
    assert not (tmp_path / "home").exists()  # nothing created before first use
    cached.encode(["x"])
    assert cached.path == tmp_path / "home" / "embeddings" / "vectors.sqlite"
    assert cached.path.is_file()


def test_wrong_shape_from_the_embedder_is_an_error(tmp_path):
    class Bad(FakeEmbedder):
        def encode(self, texts, progress=None):
            return np.zeros((len(texts) + 1, 8), dtype=np.float32)

    with pytest.raises(RagmarkError, match=r"shape \(4, 8\) for 3 texts"):
        CachedEmbedder(Bad(), path=tmp_path / "v.sqlite").encode(["a", "b", "c"])


def test_damaged_cache_file_is_a_clear_error(tmp_path):
    path = tmp_path / "v.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(RagmarkError, match="delete the file"):
        CachedEmbedder(FakeEmbedder(), path=path).encode(["x"])


def test_home_from_env_or_default(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGMARK_HOME", str(tmp_path / "rh"))
    assert ragmark_home() == tmp_path / "rh" and (tmp_path / "rh").is_dir()
    assert cache_path("llm", "calls.sqlite") == tmp_path / "rh" / "llm" / "calls.sqlite"
    assert (tmp_path / "rh" / "llm").is_dir()
    monkeypatch.delenv("RAGMARK_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    assert ragmark_home() == tmp_path / "user" / ".cache" / "ragmark"
    with pytest.raises(ValueError):
        cache_path("..", "x")
    with pytest.raises(ValueError):
        cache_path("/etc/x")


def test_spread_encoding_sends_the_same_batches_and_commits_them(tmp_path):
    from ragmark.executors import using

    texts = [f"text number {i} " + "x" * (i % 7) for i in range(20)]
    local = CachedEmbedder(FakeEmbedder("spread@1"), path=tmp_path / "a.sqlite")
    want = local.encode(texts)
    ex = PicklingExecutor()
    spread = CachedEmbedder(FakeEmbedder("spread@1"), path=tmp_path / "b.sqlite")
    done: list[int] = []
    with using(ex):
        got = spread.encode(texts, progress=done.append)
    np.testing.assert_array_equal(got, want)
    # 7 batches of 3 (longest first, as locally), one a task
    batches = [b for group in ex.items for b in group]
    assert batches == local.embedder.calls
    assert [len(g) for g in ex.items] == [1] * 7
    assert sum(done) == 20 and spread.stats["encoded"] == 20
    again = CachedEmbedder(FakeEmbedder("spread@1"), path=tmp_path / "b.sqlite")
    np.testing.assert_array_equal(again.encode(texts), want)
    assert again.embedder.calls == []  # every vector was committed


def test_groups_are_encoded_as_one_call_per_group_would_encode_them(tmp_path):
    from ragmark.executors import using

    groups = [["alpha", "beta gamma", "d"], ["beta gamma", "epsilon zeta eta", "i"],
              [], ["alpha", "k"]]
    one_by_one = CachedEmbedder(FakeEmbedder("groups@1"), path=tmp_path / "a.sqlite")
    want = [one_by_one.encode(g) for g in groups if g]
    spread = CachedEmbedder(FakeEmbedder("groups@1"), path=tmp_path / "b.sqlite")
    ex = PicklingExecutor()
    with using(ex):
        got = spread.encode_groups(groups)
    assert [len(g) for g in got] == [3, 3, 0, 2]
    for w, g in zip(want, [g for g in got if len(g)], strict=True):
        np.testing.assert_array_equal(g, w)
    # the same batches: each group's new texts, longest first, in group order
    assert [b for item in ex.items for b in item] == one_by_one.embedder.calls == [
        ["beta gamma", "alpha", "d"], ["epsilon zeta eta", "i"], ["k"]]
