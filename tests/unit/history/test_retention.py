"""Retention (issue 33, item 25): the per-question values of old runs pruned, their
aggregates, verdicts and trends kept; accepted runs and baselines never pruned; a year of
monitor windows under a 30-day retention stays small, and its gate and trend still
work."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

from support.cli import run_cli

from ragmark.history.retention import parse_age, prune
from ragmark.history.store import ConfigResult, record
from ragmark.monitor.sources import source_key
from ragmark.monitor.windows import KIND, Settings, dataset_hash, reference_values, trend
from ragmark.results import envelope
from ragmark.results.model import Aggregate
from ragmark.types import Score

METRICS = ("groundedness", "refusal", "latency_s", "feedback")
START = datetime(2025, 11, 26, 12, tzinfo=UTC)


def _window(history: Path, s: Settings, day: int, records: int = 50) -> int:
    """One monitor window recorded as monitor_once records it, ``day`` days after START."""
    key = source_key(s.source)
    env = envelope("run", dataset_hash(key), {"name": s.system}) | {
        "kind": KIND, "created_at": (START + timedelta(days=day)).isoformat(
            timespec="seconds"), "drifted": []}
    values = {f"d{day}r{i}": {m: Score(((day * 7 + i * 3 + j) % 10) / 10)
                               for j, m in enumerate(METRICS)} for i in range(records)}
    aggs = {m: Aggregate.of([v[m] for v in values.values()]) for m in METRICS}
    return record(history, env, str(s.source), [(q, f"question {q}?") for q in values],
                  {s.system: ConfigResult({"name": s.system}, aggs, values)},
                  verdict="passed")


def test_a_year_of_windows_under_a_30_day_retention(tmp_path):
    source = tmp_path / "app.jsonl"
    source.touch()
    kept_all = Settings(source=source, history=tmp_path / "all.sqlite", windows=60)
    bounded = Settings(source=source, history=tmp_path / "kept.sqlite", windows=60,
                       retain=parse_age("30d"))
    key = source_key(source)
    for day in range(365):
        _window(kept_all.history, kept_all, day)
        _window(bounded.history, bounded, day)
        # what monitor_once does after recording a window with --retain-questions 30d
        prune(bounded.history, bounded.retain, now=START + timedelta(days=day), kind=KIND,
              dataset_hash=dataset_hash(key), vacuum=False)
    full, small = kept_all.history.stat().st_size, bounded.history.stat().st_size
    assert small < 0.2 * full, (small, full)  # 31 of 365 windows keep their details
    con = sqlite3.connect(bounded.history)
    per_run = dict(con.execute("SELECT run_id, COUNT(*) FROM query_values GROUP BY run_id"))
    assert len(per_run) == 31 and set(per_run.values()) == {50 * len(METRICS)}
    assert con.execute("SELECT COUNT(*) FROM aggregates").fetchone()[0] == 365 * len(METRICS)
    con.close()
    # the drift gate's reference (the previous windows) still has its values
    ref, what = reference_values(bounded, key)
    assert ref["groundedness"].n == 5 * 50 and what == "the previous 5 windows (250 records)"
    # the trend reads the pruned windows' aggregates: every window has every metric
    points = trend(bounded, key)
    assert len(points) == 60
    assert all(p.means[m][0] is not None for p in points for m in METRICS)
    old, recent = points[0], points[-1]
    assert old.means["groundedness"][1] is None  # pruned: its mean, without an interval
    assert recent.means["groundedness"][1] is not None
    want = trend(kept_all, key)
    assert [round(p.means["refusal"][0], 12) for p in points] == [
        round(p.means["refusal"][0], 12) for p in want]


def test_prune_keeps_accepted_runs_and_baselines_and_says_what_would_go(tmp_path, capsys):
    source = tmp_path / "app.jsonl"
    source.touch()
    s = Settings(source=source, history=tmp_path / "h.sqlite")
    ids = [_window(s.history, s, day) for day in range(5)]
    con = sqlite3.connect(s.history)
    con.execute("UPDATE runs SET verdict = 'accepted' WHERE id = ?", (ids[0],))
    con.execute("UPDATE runs SET verdict = 'failed' WHERE id = ?", (ids[4],))
    con.commit()
    con.close()
    code, out, err = run_cli(["history", "--history", str(s.history), "prune",
                              "--older-than", "1d", "--dry-run"], capsys)
    assert code == 0, err
    # days 0..4 are all over a day old; kept: 0 (accepted), 3 (newest passing), 4 (newest)
    assert "would prune 2 runs: 400 per-question values and 100 question texts" in out
    assert "3 old runs kept" in out
    assert sqlite3.connect(s.history).execute(
        "SELECT COUNT(*) FROM query_values").fetchone()[0] == 5 * 200  # nothing changed
    code, out, err = run_cli(["history", "--history", str(s.history), "prune",
                              "--older-than", "1d"], capsys)
    assert code == 0 and "pruned 2 runs" in out and " MB -> " in out
    code, out, _ = run_cli(["history", "--history", str(s.history), "show", str(ids[1])],
                           capsys)
    assert "per-question values pruned on" in out and "groundedness" in out
    code, _, err = run_cli(["history", "--history", str(s.history), "prune",
                            "--older-than", "soon"], capsys)
    assert code == 2 and "expected a positive age such as 30d" in err


def test_monitor_applies_the_retention_as_it_records(tmp_path, capsys):
    log = tmp_path / "app.jsonl"
    history = tmp_path / "h.sqlite"
    for w in range(2):
        with log.open("a") as f:
            for i in range(5):
                f.write(json.dumps({"question": f"q{w}-{i}?", "answer": "BM25 ranks",
                                    "contexts": ["BM25 ranks documents by term frequency."]})
                        + "\n")
        code, _, err = run_cli(["monitor", str(log), "--history", str(history),
                                "--retain-questions", "1s", "-q"], capsys)
        assert code == 0, err
        if w == 0:  # make the first window old
            con = sqlite3.connect(history)
            con.execute("UPDATE runs SET created_at = '2000-01-01T00:00:00+00:00'")
            con.commit()
            con.close()
    con = sqlite3.connect(history)
    assert con.execute("SELECT run_id FROM pruned").fetchall() == [(1,)]
    assert {r for (r,) in con.execute("SELECT DISTINCT run_id FROM query_values")} == {2}


def test_diff_and_gates_against_pruned_or_failed_runs_say_why(tmp_path, capsys):
    """Issue 48, items 10-11: after `history prune`, `diff last~1 last` said the runs
    'answered different questions' and a gate pinned to a pruned run failed with 'no
    question has a value in both runs' (exit 1); `diff last~1 last --config` silently
    skipped the newest run when it had failed its gates."""
    demo = Path(__file__).resolve().parents[3] / "src" / "ragmark" / "demo"
    history = tmp_path / "h.sqlite"
    run = ["run", "--dataset", str(demo / "questions.json"), "--corpus", str(demo / "corpus"),
           "--metrics", "mrr,recall@5", "--quiet", "--history", str(history)]
    for _ in range(3):
        code, _, err = run_cli(run, capsys)
        assert code == 0, err
    got = prune(history, timedelta(days=1), now=datetime.now(UTC) + timedelta(days=2))
    assert got.runs == (1, 2)  # run 3 is the newest
    code, _, err = run_cli(["diff", "last~1", "last", "--config-name", "sparse", "--history",
                            str(history)], capsys)
    assert code == 2, err
    said = " ".join(err.split())
    assert "last~1: run 2's per-question values were pruned on " in said
    assert "`ragmark history accept ID` keeps a baseline from pruning" in said
    assert "different questions" not in said
    code, _, err = run_cli([*run, "--fail-on-regression", "mrr", "--against", "1",
                            "--output", str(tmp_path / "r.json")], capsys)
    assert code == 2 and "run 1's per-question values were pruned on" in " ".join(err.split())
    # a run that failed its gates is still the newest run for diff
    con = sqlite3.connect(history)
    con.execute("UPDATE runs SET verdict = 'failed' WHERE id = 3")
    con.commit()
    con.close()
    code, _, err = run_cli(run, capsys)
    assert code == 0, err
    code, out, err = run_cli(["diff", "last~1", "last", "--config-name", "sparse", "--history",
                              str(history)], capsys)
    assert code == 0, err
    assert out.splitlines()[0] == "A = run 3 (sparse); B = run 4 (sparse)"
