"""The [llm] table of a TOML config: the judges' endpoint and the llm generator's, with
flags over the table over RAGMARK_LLM_* (per field), one endpoint per comparison."""

from __future__ import annotations

import json
import socket

import pytest
from support.cli import run_cli
from support.fake_llm_server import chat_reply


def rated(body):
    return chat_reply('{"rating": 5, "reason": "ok"}', 1000, 500)


def dead_url():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/v1"


def toml(tmp_path, name, url, model="test-model", extra=""):
    p = tmp_path / f"{name}.toml"
    p.write_text(f'name = "{name}"\n{extra}\n[llm]\nbase_url = "{url}"\nmodel = "{model}"\n'
                 'concurrency = 2\nprices = {"test-model" = [2.0, 4.0], '
                 '"other-model" = [1.0, 1.0]}\n')
    return p


def test_the_table_beats_the_environment_and_gives_prices(dataset, tmp_path, capsys,
                                                          monkeypatch, server):
    monkeypatch.setenv("RAGMARK_LLM_BASE_URL", dead_url())  # overridden by the table
    monkeypatch.setenv("RAGMARK_LLM_MODEL", "env-model")
    server.rule = rated
    out = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--dataset", str(dataset), "--config",
                            str(toml(tmp_path, "judged", server.url)), "--judge-metrics",
                            "answer_relevance", "--require-llm", "--output", str(out),
                            "--quiet"], capsys)
    assert code == 0, err
    data = json.loads(out.read_text())
    assert data["metrics"]["answer_relevance"] == 1.0
    assert {r.body["model"] for r in server.requests} == {"test-model"}
    # 2 calls x (1000 prompt x $2 + 500 completion x $4) per million tokens
    assert data["llm"]["estimated_cost"] == pytest.approx(2 * (2000 + 2000) / 1e6)
    assert data["config"]["llm"]["concurrency"] == 2


def test_flags_beat_the_table_field_by_field(dataset, tmp_path, capsys, server):
    server.rule = rated
    out = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--dataset", str(dataset), "--config",
                            str(toml(tmp_path, "judged", server.url)), "--judge-metrics",
                            "answer_relevance", "--llm-model", "other-model", "--output",
                            str(out), "--quiet"], capsys)
    assert code == 0, err
    assert {r.body["model"] for r in server.requests} == {"other-model"}
    data = json.loads(out.read_text())
    assert data["llm"]["model"] == "other-model"
    assert data["llm"]["estimated_cost"] == pytest.approx(2 * (1000 + 500) / 1e6)


def test_the_table_is_the_llm_generators_endpoint(dataset, tmp_path, capsys, server):
    server.rule = lambda body: chat_reply("E11 [1]", 10, 2)
    cfg = toml(tmp_path, "gen", server.url, extra='[generator]\nname = "llm"\n')
    out = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--dataset", str(dataset), "--config", str(cfg),
                            "--metrics", "mrr,exact_match", "--include-details", "--output",
                            str(out), "--quiet"], capsys)
    assert code == 0, err
    data = json.loads(out.read_text())
    assert [q["answer"] for q in data["queries"]] == ["E11 [1]", "E11 [1]"]
    assert len(server.requests) == 2


def test_configs_compared_together_need_one_endpoint(dataset, tmp_path, capsys, server):
    a = toml(tmp_path, "a", server.url)
    b = toml(tmp_path, "b", server.url, model="other-model")
    code, _, err = run_cli(["compare", "--dataset", str(dataset), "--configs", str(a), str(b),
                            "--judge-metrics", "answer_relevance", "--output",
                            str(tmp_path / "c"), "--quiet"], capsys)
    assert code == 2
    assert "configs a, b have different [llm] tables" in err and "Traceback" not in err
    assert server.requests == []


def test_bad_tables_are_named(dataset, tmp_path, capsys):
    p = tmp_path / "bad.toml"
    p.write_text('[llm]\nbase_url = "http://127.0.0.1:1/v1"\nmodle = "x"\n')
    code, _, err = run_cli(["run", "--dataset", str(dataset), "--config", str(p), "--quiet"],
                           capsys)
    assert code == 2 and err == (
        f"error: {p}, key 'llm.modle': unknown key; known keys of [llm]: base_url, model, "
        "api_key_env, provider, concurrency, timeout, max_retries, prices, structured, batch, "
            "batch_discount, batch_poll, context_window, max_tokens\n")


def test_bad_endpoint_values_get_one_line_naming_their_source(dataset, tmp_path, capsys,
                                                               monkeypatch):
    args = ["run", "--dataset", str(dataset), "--judge-metrics", "answer_relevance", "--quiet"]
    code, _, err = run_cli([*args, "--llm-base-url", "localhost:8000", "--llm-model", "m"],
                           capsys)
    assert code == 2 and err == ("error: LLM settings: --llm-base-url 'localhost:8000': "
                                 "base_url must be an http:// or https:// URL\n")
    monkeypatch.setenv("RAGMARK_LLM_BASE_URL", "ftp://host")
    monkeypatch.setenv("RAGMARK_LLM_MODEL", "m")
    code, _, err = run_cli(args, capsys)
    assert code == 2 and err == ("error: LLM settings: RAGMARK_LLM_BASE_URL 'ftp://host': "
                                 "base_url must be an http:// or https:// URL\n")
    p = tmp_path / "t.toml"
    p.write_text('[llm]\nbase_url = "http://127.0.0.1:1/v1"\nmodel = "m"\n'
                 'api_key_env = "sk-123"\n')
    code, _, err = run_cli([*args, "--config", str(p)], capsys)
    # the [llm] table is checked with the endpoint's own rules when the file is read
    assert code == 2 and err.startswith(f"error: {p}, key 'llm.api_key_env': api_key_env "
                                        "must be the NAME of an environment variable")
    assert "sk-123" not in err and "pydantic" not in err


def test_component_values_they_refuse_name_the_file_and_key(dataset, tmp_path, capsys):
    p = tmp_path / "c.toml"
    p.write_text('[chunker]\nname = "fixed"\nsize = 100\noverlap = 200\n')
    code, _, err = run_cli(["run", "--dataset", str(dataset), "--config", str(p)], capsys)
    assert code == 2 and err == (f"error: {p}, key 'chunker': chunk overlap must be >= 0 and "
                                 "smaller than the chunk size 100, got 200\n")
    p.write_text('[retriever]\nname = "hybrid"\nfusion = "weighted"\nweights = [1.0]\n'
                 '[[retriever.retrievers]]\nname = "bm25"\n'
                 '[[retriever.retrievers]]\nname = "bm25"\nk1 = 2.0\n')
    code, _, err = run_cli(["run", "--dataset", str(dataset), "--config", str(p)], capsys)
    assert code == 2 and err == (f"error: {p}, key 'retriever': hybrid: 1 weights for 2 "
                                 "retrievers; give one weight per retriever\n")


def test_credentials_in_the_url_are_not_written(dataset, tmp_path, capsys, server):
    server.rule = rated
    url = server.url.replace("http://", "http://user:s3cret@")
    out = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--dataset", str(dataset), "--config",
                            str(toml(tmp_path, "cred", url)), "--judge-metrics",
                            "answer_relevance", "--output", str(out), "--quiet"], capsys)
    assert code == 0, err
    text = out.read_text()
    assert "s3cret" not in text
    assert json.loads(text)["config"]["llm"]["base_url"] == server.url
