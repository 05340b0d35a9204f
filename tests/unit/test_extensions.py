"""One door for extensions (issue 49, item 4): ``ragmark.extensions`` lists every
extension point, and the code reads no entry-point group it does not list."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from ragmark.extensions import POINTS, groups
from ragmark.registry import _BUILTINS

SRC = Path(__file__).resolve().parents[2] / "src" / "ragmark"


def _groups_read() -> set[str]:
    """The entry-point groups the code reads: entry_points(group=...) with a literal,
    and the registry's ``ragmark.<kind>`` for each kind it has."""
    found = {f"ragmark.{kind}" for kind in _BUILTINS}
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "entry_points":
                for kw in node.keywords:
                    if kw.arg == "group" and isinstance(kw.value, ast.Constant):
                        found.add(kw.value.value)
    return found


def test_every_entry_point_group_read_is_listed_once():
    assert _groups_read() == set(groups())
    assert len(groups()) == len(set(groups()))


def test_every_door_is_there():
    for point in POINTS:
        module, _, attr = point.door.partition(":")
        obj = importlib.import_module(module)
        for part in attr.split("."):
            obj = getattr(obj, part)
        assert callable(obj), point.door
        assert point.takes and point.built_ins


def test_the_plugins_command_lists_every_point_and_what_is_installed(monkeypatch, capsys):
    import importlib.metadata
    import json

    from support.cli import run_cli

    ep = importlib.metadata.EntryPoint("short_answer", "support.metric_plugin:SHORT_ANSWER",
                                       "ragmark.metric")
    real = importlib.metadata.entry_points
    monkeypatch.setattr("ragmark.cli.plugins_cmd.entry_points",
                        lambda group=None, **kw: [ep] if group == "ragmark.metric"
                        else real(group=group, **kw))
    code, out, _ = run_cli(["plugins", "--json"], capsys)
    assert code == 0
    listed = {p["group"]: p for p in json.loads(out)}
    assert list(listed) == list(groups())
    assert listed["ragmark.metric"]["installed"] == [
        {"name": "short_answer", "value": "support.metric_plugin:SHORT_ANSWER"}]
    code, out, _ = run_cli(["plugins"], capsys)
    assert "ragmark.retriever: none installed" in out
    assert "ragmark.metric: short_answer (support.metric_plugin:SHORT_ANSWER)" in out


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
    monkeypatch.setattr(names, "SPECS", dict(names.SPECS))
    monkeypatch.setattr(names, "_PLUGINS", {})
    names.register(replace(SHORT_ANSWER, name="rouge_2"))
    assert names.parse_metric("rouge_2") == names.MetricName("rouge_2", None)
    assert names.parse_metric(" ROUGE_2 ") == names.MetricName("rouge_2", None)
    assert str(names.parse_metric("ndcg_cut_10")) == "ndcg@10"  # trec_eval's still reads
    for bad in ("f1.5", "RougeL", "2gram", "rouge@2"):
        with pytest.raises(UnknownComponentError, match="lower-case letters, digits"):
            names.register(replace(SHORT_ANSWER, name=bad))
