"""Configs: built-ins, TOML validation errors that name the key, grids, the auto reranker."""

from __future__ import annotations

import pytest

from ragmark.config import BUILTINS, load_config, load_configs
from ragmark.errors import ConfigError


def write(tmp_path, text, name="c.toml"):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_builtins_describe_their_pipelines(monkeypatch):
    monkeypatch.delenv("RAGMARK_RERANKER_MODEL", raising=False)
    assert set(BUILTINS) == {"sparse", "dense", "dense-api", "hybrid", "hybrid-rerank"}
    assert load_config("sparse").retriever.name == "bm25"
    assert load_config("dense").retriever.name == "dense"
    hybrid = load_config("hybrid").retriever
    assert hybrid.name == "hybrid"
    assert hybrid.params == {"fusion": "rrf", "k": 60,
                             "retrievers": [{"name": "bm25"}, {"name": "dense"}]}


def test_hybrid_rerank_says_clearly_when_no_reranker_is_set_up(monkeypatch):
    monkeypatch.delenv("RAGMARK_RERANKER_MODEL", raising=False)
    with pytest.raises(ConfigError) as e:
        load_config("hybrid-rerank")
    msg = str(e.value)
    assert msg.startswith("built-in config 'hybrid-rerank', key 'reranker': this config "
                          "reranks, but no reranker is set up.")
    assert "RAGMARK_RERANKER_MODEL" in msg and "No reranker model ships with ragmark" in msg


def test_hybrid_rerank_takes_the_cross_encoder_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("RAGMARK_RERANKER_MODEL", str(tmp_path))
    cfg = load_config("hybrid-rerank")
    assert cfg.reranker is not None and cfg.reranker.name == "cross-encoder"
    assert cfg.retriever.name == "hybrid"


def test_unknown_component_and_parameter_name_the_key(tmp_path):
    p = write(tmp_path, '[retriever]\nname = "bm26"\n[chunker]\nname = "fixed"\nsise = 3\n')
    with pytest.raises(ConfigError) as e:
        load_config(p)
    lines = str(e.value).splitlines()
    assert lines[0] == (f"{p}, key 'chunker.sise': not a parameter of chunker 'fixed'; "
                        "known: size, overlap")
    assert lines[1].startswith(f"{p}, key 'retriever.name': unknown retriever 'bm26'; known: ")
    assert "bm25" in lines[1] and "hybrid" in lines[1]


def test_nested_hybrid_retrievers_are_checked(tmp_path):
    p = write(tmp_path, '[retriever]\nname = "hybrid"\n'
                        '[[retriever.retrievers]]\nname = "bm25"\nk2 = 1\n'
                        '[[retriever.retrievers]]\nk1 = 1\n')
    with pytest.raises(ConfigError) as e:
        load_config(p)
    lines = str(e.value).splitlines()
    assert lines[0].startswith(f"{p}, key 'retriever.retrievers[0].k2': not a parameter of "
                               "retriever 'bm25'; known: k1, b,")
    assert lines[1] == f"{p}, key 'retriever.retrievers[1]': expected a table with a 'name'"


def test_grid_expands_into_every_combination(tmp_path):
    p = write(tmp_path, 'name = "bm25"\n[chunker]\nname = "fixed"\n'
                        '[grid]\n"chunker.size" = [200, 500]\ntop_k = [5, 10]\n')
    cfgs = load_configs(p)
    assert [c.name for c in cfgs] == [
        "bm25[chunker.size=200,top_k=5]", "bm25[chunker.size=200,top_k=10]",
        "bm25[chunker.size=500,top_k=5]", "bm25[chunker.size=500,top_k=10]",
    ]
    assert [(c.chunker.params["size"], c.top_k) for c in cfgs if c.chunker] == [
        (200, 5), (200, 10), (500, 5), (500, 10)]
    with pytest.raises(ConfigError, match="is a grid of 4 configs; run them with 'ragmark "
                                          "compare'"):
        load_config(p)


def test_grid_errors_name_the_key(tmp_path):
    p = write(tmp_path, '[grid]\ntop_k = 5\n')
    with pytest.raises(ConfigError, match=r"key 'grid.top_k': expected a non-empty list"):
        load_configs(p)
    p = write(tmp_path, '[grid]\ntop_k = [0, 5]\n')
    with pytest.raises(ConfigError, match=r"key 'top_k': Input should be greater than or equal"):
        load_configs(p)
    p = write(tmp_path, '[grid]\ntop_k = [3, 5]\n')
    with pytest.raises(ConfigError, match=r"key 'grid.top_k': also given on the command line"):
        load_configs(p, top_k=4)
    p = write(tmp_path, 'top_n = 2\n[grid]\n"top_n.x" = [3]\n')
    with pytest.raises(ConfigError, match=r"key 'grid.top_n.x': 'top_n' is not a table"):
        load_configs(p)
