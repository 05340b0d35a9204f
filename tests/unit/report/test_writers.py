"""--format: the registered writers (json, md, trec, csv) on run, compare and label; and
compare --include-details read by inspect."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytrec_eval
from support.cli import run_cli

from ragmark.registry import registry
from ragmark.results import SCHEMA, read_results

DEMO = Path(__file__).resolve().parents[3] / "src" / "ragmark" / "demo"
ARGS = ["--dataset", str(DEMO / "questions.json"), "--corpus", str(DEMO / "corpus"), "--quiet"]


def test_run_writes_every_format_asked(tmp_path, capsys):
    out = tmp_path / "res" / "run.json"
    code, stdout, _ = run_cli(["run", *ARGS, "--output", str(out), "--format",
                               "json,md,trec,csv"], capsys)
    assert code == 0
    names = sorted(p.name for p in (tmp_path / "res").iterdir())
    assert names == ["run.csv", "run.json", "run.md", "run.trec"]
    kind, data = read_results(out)
    assert kind == "run" and data["envelope"]["schema"] == SCHEMA
    assert data["envelope"]["kind"] == "run" and len(data["envelope"]["config_hash"]) == 64
    md = (tmp_path / "res" / "run.md").read_text()
    assert md.startswith("### ragmark run: sparse on questions (8 questions)")
    assert f"| MRR@10 | {data['metrics']['mrr@10']:.4f} | 8 | 0 |" in md
    rows = list(csv.DictReader((tmp_path / "res" / "run.csv").open()))
    assert len(rows) == 8 * len(data["per_query"]["q1"])
    mrr = {r["question_id"]: float(r["value"]) for r in rows if r["metric"] == "mrr@10"}
    assert mrr == {q: v["mrr@10"] for q, v in data["per_query"].items()}
    with (tmp_path / "res" / "run.trec").open() as f:
        run = pytrec_eval.parse_run(f)
    assert set(run) == set(data["per_query"])
    assert "Results written to " in stdout and " and " in stdout


def test_unknown_formats_are_refused_before_any_work(tmp_path, capsys):
    code, _, err = run_cli(["run", *ARGS, "--format", "json,pdf", "--output",
                            str(tmp_path / "r.json")], capsys)
    assert code == 2 and "unknown writer 'pdf'; known: csv, html, json, md, trec" in err
    assert not (tmp_path / "r.json").exists()
    assert sorted(registry("writer").names())[:5] == ["csv", "html", "json", "md", "trec"]


def test_compare_formats_and_details_for_inspect(tmp_path, capsys):
    stem = tmp_path / "cmp"
    code, _, _ = run_cli(["compare", *ARGS, "--configs", "sparse", "--output", str(stem),
                          "--format", "json,trec,csv", "--include-details"], capsys)
    assert code == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cmp.csv", "cmp.json",
                                                         "cmp.sparse.trec"]
    data = json.loads((tmp_path / "cmp.json").read_text())
    assert data["envelope"]["kind"] == "compare"
    q = data["configs"]["sparse"]["queries"][0]
    assert q["id"] == "q1" and q["retrieved"] and q["answer"]
    code, out, _ = run_cli(["inspect", str(tmp_path / "cmp.json"), "q1", "--json"], capsys)
    assert code == 0
    shown = json.loads(out)
    assert shown["question"] == q["question"] and "note" not in shown


def test_the_console_shows_user_text_as_text_not_as_markup(tmp_path, capsys):
    """A config named like rich markup and a note holding a TOML table name are printed
    as they are (rich would take '[bold]' and '[judges.faithfulness]' for styles)."""
    import io

    from rich.console import Console

    from ragmark.report.console import print_report
    from ragmark.results.model import RunReport

    report = RunReport(config={"name": "[bold]mine", "unit": "chunk"},
                       dataset={"name": "set[x]", "format": "keyword", "queries": 1},
                       metrics={}, queries=[],
                       notes=["use [judges.faithfulness] alignment = 'a.toml'"])
    buf = io.StringIO()
    print_report(report, Console(file=buf, width=200, color_system=None))
    text = buf.getvalue()
    assert "config [bold]mine · dataset set[x]" in text
    assert "note: use [judges.faithfulness] alignment = 'a.toml'" in text
