"""The LLM endpoint's fields are declared once (LLMSettings) and every way of giving one
is made from that declaration (issue 34): each RAGMARK_LLM_* variable reaches each
component that calls a model, the variables' names are written in one module, and each
command that calls a model takes every --llm-* flag."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import click
import pytest
from support import import_graph as ig
from support.cli import run_cli
from support.fake_llm_server import Reply

from ragmark.cli import cli
from ragmark.config import load_config
from ragmark.generation.llm import LLMGeneratorTable
from ragmark.llm.config import COMPONENT, ENV, FLAG, TABLE
from ragmark.llm.endpoint import Endpoint
from ragmark.llm.fields import given_on
from ragmark.llm.table import LLMTable
from ragmark.plan.endpoint import resolve_llm
from ragmark.retrieval.llm_rerank import LLMRerankerTable

# a value of each variable that is not its field's default
VALUES: dict[str, tuple[str, Any]] = {
    "base_url": ("http://env.example/v1/", "http://env.example/v1"),
    "model": ("env-model", "env-model"), "api_key_env": ("ENV_KEY", "ENV_KEY"),
    "provider": ("ollama", "ollama"), "concurrency": ("3", 3), "timeout": ("7.5", 7.5),
    "max_retries": ("2", 2), "structured": ("off", "off"), "batch_poll": ("11", 11.0),
    "context_window": ("999", 999), "max_tokens": ("77", 77),
}


@pytest.fixture
def every_variable(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    for f in given_on(ENV):
        monkeypatch.setenv(f.env, VALUES[f.name][0])
    return {name: got for name, (_, got) in VALUES.items()}


def test_every_variable_has_a_value_here() -> None:
    assert {f.name for f in given_on(ENV)} == set(VALUES)


def test_every_variable_reaches_the_judges(every_variable: dict[str, Any]) -> None:
    # judges, testset, label, judge-eval and monitor resolve their endpoint here
    settings, _ = resolve_llm([load_config("sparse")])
    assert settings is not None
    assert {k: getattr(settings, k) for k in every_variable} == every_variable


@pytest.mark.parametrize("table", [LLMGeneratorTable, LLMRerankerTable])
def test_every_variable_of_a_component_reaches_the_llm_generator_and_reranker(
        every_variable: dict[str, Any], table: Any) -> None:
    settings = table().build().settings
    component = {f.name for f in given_on(COMPONENT) if ENV in f.on}
    assert component >= {"timeout", "concurrency", "max_retries", "structured", "provider"}
    assert {k: getattr(settings, k) for k in component} == {
        k: every_variable[k] for k in component}
    # the judges' answer cap and window are theirs alone: the generator keeps its own
    assert (settings.max_tokens, settings.context_window, settings.batch_poll) == (
        None, None, 30.0)


def test_a_component_table_wins_over_the_variables(every_variable: dict[str, Any]) -> None:
    settings = LLMGeneratorTable(base_url="http://own.example", model="own",
                                 timeout=3).build().settings
    assert (settings.base_url, settings.model, settings.timeout, settings.concurrency) == (
        "http://own.example", "own", 3.0, 3)


def _docstrings(tree: ast.AST) -> set[int]:
    """The strings that stand alone (docstrings, attribute docs): prose, not code."""
    return {id(n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}


def test_the_variable_names_are_written_in_one_module() -> None:
    writers = set()
    for module, path in ig.modules().items():
        tree = ast.parse(path.read_text())
        docs = _docstrings(tree)
        if any(isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs
               and "RAGMARK_LLM_" in n.value for n in ast.walk(tree)):
            writers.add(module)
    assert writers == {"ragmark.llm.fields"}


def test_the_table_and_the_component_keys_are_the_declared_fields() -> None:
    assert list(LLMTable.model_fields) == [f.name for f in given_on(TABLE)]
    assert [f.name for f in Endpoint.__dataclass_fields__.values()] == [  # type: ignore[attr-defined]
        f.name for f in given_on(COMPONENT)]


@pytest.mark.parametrize("command", ["run", "compare", "testset", "judge-eval", "label",
                                     "monitor"])
def test_each_command_that_calls_a_model_takes_every_endpoint_flag(command: str) -> None:
    cmd = cli.get_command(click.Context(cli), command)  # loaded when asked for
    assert isinstance(cmd, click.Command)
    flags = {o for p in cmd.params for o in p.opts if o.startswith("--llm-")}
    assert flags == {f.flag for f in given_on(FLAG)}


DEMO = Path(__file__).resolve().parents[3] / "src" / "ragmark" / "demo"


def _commands(tmp_path: Path) -> dict[str, list[str]]:
    """A short invocation of each command that calls a model and resolves its endpoint
    from the environment alone (dry runs where the command has one)."""
    data = ["--dataset", str(DEMO / "questions.json"), "--corpus", str(DEMO / "corpus")]
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps({"id": "r1", "question": "What is BM25?", "answer": "A "
                               "ranking function.", "contexts": ["BM25 ranks documents."]})
                   + "\n", encoding="utf-8")
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"question": "q?", "context": "c.", "answer": "a.",
                                 "label": "supported"}) + "\n", encoding="utf-8")
    return {
        "run": ["run", *data, "--judge-metrics", "answer_relevance", "--dry-run"],
        "compare": ["compare", *data, "--configs", "sparse", "--judge-metrics",
                    "answer_relevance", "--dry-run"],
        "label": ["label", *data, "--top-k", "2", "--max-queries", "1", "--dry-run"],
        "testset": ["testset", "--corpus", str(DEMO / "corpus"), "--size", "1",
                    "--output", str(tmp_path / "t.json"), "--dry-run"],
        "monitor": ["monitor", str(log), "--history", str(tmp_path / "h.sqlite"),
                    "--dry-run"],
        "judge-eval": ["judge-eval", str(items), "--metric", "answer_relevance"],
    }


@pytest.mark.parametrize("command", ["run", "compare", "label", "testset", "monitor",
                                     "judge-eval"])
def test_every_variable_reaches_each_command(command, every_variable, server, tmp_path,
                                             capsys, monkeypatch):
    """Each command that calls a model resolves its endpoint through the one resolver,
    and every RAGMARK_LLM_* variable is in what it resolves."""
    import ragmark.llm.fields as fields
    import ragmark.plan.endpoint as endpoint  # the one place commands resolve through

    server.rule = lambda body: Reply(body={
        "id": "x", "object": "chat.completion", "usage": {"prompt_tokens": 1,
                                                          "completion_tokens": 1},
        "choices": [{"index": 0, "message": {"role": "assistant", "content":
                                             '{"rating": 4, "reason": "fine"}'}}]})
    monkeypatch.setenv("RAGMARK_LLM_BASE_URL", server.url)
    monkeypatch.setenv("RAGMARK_LLM_PROVIDER", "openai")
    monkeypatch.setenv("ENV_KEY", "test-key")  # RAGMARK_LLM_API_KEY_ENV names it
    want = {**every_variable, "base_url": server.url, "provider": "openai"}
    seen = []
    resolve = fields.resolve

    def spy(*args: Any, **kw: Any) -> Any:
        got = resolve(*args, **kw)
        seen.append(got)
        return got

    monkeypatch.setattr(endpoint, "resolve", spy)
    code, _, err = run_cli(_commands(tmp_path)[command], capsys)
    assert code == 0, err
    assert seen and all(s is not None and {k: getattr(s, k) for k in want} == want
                        for s in seen)


def test_the_plan_completes_an_llm_generator_from_the_variables(server, tmp_path, capsys,
                                                                  monkeypatch):
    """plan/ is where the variables become an llm component's endpoint: the results
    record what the generator called (its table gave only max_tokens)."""
    server.rule = lambda body: Reply(body={
        "id": "x", "object": "chat.completion", "usage": {"prompt_tokens": 3,
                                                          "completion_tokens": 2},
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "BM25."}}]})
    monkeypatch.setenv("RAGMARK_LLM_BASE_URL", server.url)
    monkeypatch.setenv("RAGMARK_LLM_MODEL", "test-model")
    monkeypatch.setenv("RAGMARK_LLM_TIMEOUT", "7.5")
    cfg = tmp_path / "gen.toml"
    cfg.write_text('[generator]\nname = "llm"\nmax_tokens = 64\n', encoding="utf-8")
    out = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--dataset", str(DEMO / "questions.json"), "--corpus",
                            str(DEMO / "corpus"), "--config", str(cfg), "--max-queries", "2",
                            "--output", str(out), "-q"], capsys)
    assert code == 0, err
    data = json.loads(out.read_text())
    assert data["config"]["generator"] == {"name": "llm", "max_tokens": 64,
                                           "base_url": server.url, "model": "test-model",
                                           "timeout": 7.5}
    assert len(server.requests) == 2 and all(
        r.body["model"] == "test-model" for r in server.requests)
