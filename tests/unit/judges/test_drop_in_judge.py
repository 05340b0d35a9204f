"""A metric is its spec (issue 49, item 2): a judge module dropped into the judges
package, and nothing else edited, shows up in the catalogue, `--judge-metrics` (by
name and by its group), the flag's help, `ragmark metrics`, a run, the annotation
queue (its question, its verdict threshold for the strata) and judge-eval (its
threshold, the metrics it measures)."""

from __future__ import annotations

import json
import sys

import pytest
from support.cli import run_cli
from support.doors import isolated

import ragmark.judges
from ragmark.metrics import names

MODULE = '''
"""A judge of answers' brevity (a test's drop-in)."""
from ragmark.judges.spec import judge_spec
from ragmark.types import Score


async def _brevity(client, case, counts):
    return Score(1.0 if len(case.answer.split()) <= 12 else 0.5)


SPECS = (judge_spec("brevity", "1 for an answer of 12 words or fewer, else 0.5", "Brevity",
                    ("answer",), _brevity, ask="is the answer brief?", verdict_at=0.75,
                    group="style"),)
'''
DEMO = names.__file__.replace("metrics/names.py", "demo")


@pytest.fixture
def dropped(tmp_path, monkeypatch):
    """The judges package with one more module, and a catalogue read afresh."""
    folder = tmp_path / "more_judges"
    folder.mkdir()
    (folder / "brevity.py").write_text(MODULE)
    isolated(monkeypatch, names.METRICS, lambda n, s: s.kind != "judge", reload=True)
    monkeypatch.setattr(ragmark.judges, "__path__", [*ragmark.judges.__path__, str(folder)])
    yield
    sys.modules.pop("ragmark.judges.brevity", None)


def test_a_dropped_in_judge_shows_up_everywhere(dropped, tmp_path, server, capsys):
    from ragmark.annotate.queue import ask_of, verdict
    from ragmark.cli.shared import judges_text
    from ragmark.judge_eval.measure import measured, threshold_of
    from ragmark.running.judging import parse_judge_metrics

    spec = names.catalogue()["brevity"]
    assert (spec.kind, spec.ask, spec.verdict_at) == ("judge", "is the answer brief?", 0.75)
    assert names.judge_metrics()[-1] == "brevity" and names.groups()["style"] == ("brevity",)
    assert parse_judge_metrics("style") == ["brevity"]
    assert "the style metrics ('style' for all)" in judges_text()
    code, out, _ = run_cli(["run", "--help"], capsys)
    assert "'style' for all" in " ".join(out.split())
    code, out, _ = run_cli(["metrics"], capsys)
    assert code == 0 and "brevity" in out
    # a run computes it (no model is called by this judge, but the endpoint is asked)
    results = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--dataset", f"{DEMO}/questions.json", "--corpus",
                            f"{DEMO}/corpus", "--judge-metrics", "style", "--llm-base-url",
                            server.url, "--llm-model", "test-model", "--quiet",
                            "--no-history", "--include-details", "--output", str(results)],
                           capsys)
    assert code == 0, err
    values = [q["brevity"] for q in json.loads(results.read_text())["per_query"].values()]
    assert set(values) <= {1.0, 0.5} and len(values) == 8
    # people are asked its question, its threshold draws the strata, judge-eval takes it
    assert ask_of("brevity") == "is the answer brief?"
    assert (verdict("brevity", 0.5), verdict("brevity", 1.0)) == ("judge no", "judge yes")
    assert "brevity" in measured() and threshold_of("brevity", None) == 0.75
    from ragmark.plan.annotate import AnnotateRequest, plan_annotate

    plan = plan_annotate(AnnotateRequest(source=results, task="brevity",
                                         store=tmp_path / "l.sqlite"))
    assert plan.queue is not None and plan.queue.task == "brevity"
    assert sum(plan.drawn["strata"].values()) == 8
