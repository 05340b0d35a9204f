"""One door for extensions (issues 49 and 62): ``ragmark.extensions`` lists every
extension point, each comes through one loader (a ``Door``: built-ins and packages'
entry points alike, loaded once), no code reads an entry-point group any other way, and
``ragmark plugins`` lists what each door holds."""

from __future__ import annotations

import ast
import importlib.metadata
import json
from pathlib import Path

import pytest
from support.cli import run_cli
from support.doors import isolated

from ragmark.extensions import POINTS, Door, door_of, groups

SRC = Path(__file__).resolve().parents[2] / "src" / "ragmark"


def test_one_loader_reads_the_entry_points():
    """entry_points() is called in one place, the door's loader."""
    callers = {str(p.relative_to(SRC)) for p in SRC.rglob("*.py")
               for node in ast.walk(ast.parse(p.read_text()))
               if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(
                   node.func, "attr", "")) == "entry_points"}
    assert callers == {"extensions.py"}


def test_every_point_has_its_door_listed_once():
    assert len(groups()) == len(set(groups()))
    for point in POINTS:
        door = door_of(point)
        assert isinstance(door, Door) and door.group == point.group, point.door
        assert point.takes and point.built_ins and door.built_ins(), point.group


def test_the_plugins_command_lists_every_door_and_what_it_holds(monkeypatch, capsys):
    from ragmark.metrics import names

    ep = importlib.metadata.EntryPoint("short_answer", "support.metric_plugin:SHORT_ANSWER",
                                       "ragmark.metric")
    real = importlib.metadata.entry_points
    isolated(monkeypatch, names.METRICS, reload=True)
    monkeypatch.setattr(importlib.metadata, "entry_points",
                        lambda group=None, **kw: [ep] if group == "ragmark.metric"
                        else real(group=group, **kw))
    code, out, _ = run_cli(["plugins"], capsys)  # text first: the door not yet read
    assert "ragmark.metric: short_answer (support.metric_plugin:SHORT_ANSWER)" in out
    code, out, _ = run_cli(["plugins", "--json"], capsys)
    assert code == 0
    listed = {p["group"]: p for p in json.loads(out)}
    assert list(listed) == list(groups())
    assert listed["ragmark.metric"]["installed"] == [
        {"name": "short_answer", "value": "support.metric_plugin:SHORT_ANSWER"}]
    assert listed["ragmark.metric"]["built_ins"][:2] == ["recall", "precision"]
    assert "faithfulness" in listed["ragmark.metric"]["built_ins"]  # a judge, same door
    assert listed["ragmark.llm_provider"]["built_ins"] == ["ollama", "openai"]
    assert names.METRICS.sources["short_answer"] == (
        "package short_answer (support.metric_plugin:SHORT_ANSWER)")
    code, out, _ = run_cli(["plugins"], capsys)
    assert "ragmark.retriever: none installed" in out and "built-ins: bm25, dense" in out
    assert "ragmark.metric: short_answer (support.metric_plugin:SHORT_ANSWER)" in out


def test_a_component_from_a_package_comes_through_its_door(monkeypatch, tmp_path):
    """A retriever named in a package's entry point: listed, loaded only when a config
    names it, and a second one under a built-in's name refused naming both."""
    from ragmark.registry import DOORS, registry

    ep = importlib.metadata.EntryPoint("mine", "ragmark.retrieval.bm25:BM25Retriever",
                                       "ragmark.retriever")
    real = importlib.metadata.entry_points
    isolated(monkeypatch, DOORS["retriever"], reload=True)
    monkeypatch.setattr(importlib.metadata, "entry_points",
                        lambda group=None, **kw: [ep] if group == "ragmark.retriever"
                        else real(group=group, **kw))
    assert "mine" in registry("retriever").names()
    assert DOORS["retriever"].entries["mine"] == "ragmark.retrieval.bm25:BM25Retriever"
    from ragmark.retrieval.bm25 import BM25Retriever

    assert registry("retriever").factory("mine") is BM25Retriever
    with pytest.raises(Exception, match="'bm25' is already there .built-in.; registered "
                                        "cannot take its name"):
        registry("retriever").register("bm25", "my_pkg:Other")


def test_a_plugin_metric_is_selectable_by_the_name_it_registered(monkeypatch):
    """Issue 61 item 29: ``rouge_2`` or ``f1.5`` were registered, then ``_2`` and ``.5``
    parsed as cutoffs ("unknown metric 'rouge_2'; known: ..., rouge_2"); an upper-case
    name was lower-cased at parse and never matched. A registered name is read back
    whole; a name that could not be is refused when it is registered."""
    from dataclasses import replace

    from support.metric_plugin import SHORT_ANSWER

    from ragmark.errors import UnknownComponentError
    from ragmark.metrics import names

    names.catalogue()  # the judges and plugins loaded into the catalogue first
    isolated(monkeypatch, names.METRICS)
    names.register(replace(SHORT_ANSWER, name="rouge_2"))
    assert names.parse_metric("rouge_2") == names.MetricName("rouge_2", None)
    assert names.parse_metric(" ROUGE_2 ") == names.MetricName("rouge_2", None)
    assert str(names.parse_metric("ndcg_cut_10")) == "ndcg@10"  # trec_eval's still reads
    for bad in ("f1.5", "RougeL", "2gram", "rouge@2"):
        with pytest.raises(UnknownComponentError, match="lower-case letters, digits"):
            names.register(replace(SHORT_ANSWER, name=bad))
