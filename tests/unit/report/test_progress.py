"""Without a terminal, long work prints a plain line every few seconds; --quiet nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from ragmark.report.progress_bars import PlainProgress, progress_line

DEMO = Path(__file__).resolve().parents[3] / "src" / "ragmark" / "demo"


def test_plain_lines_every_interval_and_a_closing_line():
    now = [0.0]
    lines: list[str] = []
    p = PlainProgress(lines.append, every=5.0, clock=lambda: now[0])
    with p.task("indexing", 100) as advance:
        for _ in range(10):
            now[0] += 1.0
            advance(10)
    assert lines == ["indexing: 50/100 (50%), 10.0/s, about 5.0 s left",
                     "indexing: 100/100 (100%), 10.0/s, about 0.0 s left",
                     "indexing: done, 100 in 10.0 s"]
    lines.clear()
    with p.task("short", 3) as advance:  # under the interval: nothing at all
        now[0] += 1.0
        advance(3)
    assert lines == []


def test_progress_line_without_a_total():
    assert progress_line("asking", 30, None, 6.0) == "asking: 30 done, 5.0/s, 6.0 s"
    # a slow model: the seconds each call takes, not "0.0/s"
    assert progress_line("writing questions", 4, 6, 154.0) == (
        "writing questions: 4/6 (67%), 38.5 s each, about 77.0 s left")


def test_the_cli_prints_plain_lines_in_a_log_and_none_with_quiet(tmp_path):
    args = [sys.executable, "-m", "ragmark", "run", "--dataset", str(DEMO / "questions.json"),
            "--corpus", str(DEMO / "corpus"), "--output", str(tmp_path / "r.json")]
    env = {"RAGMARK_PROGRESS_EVERY": "0", "RAGMARK_HOME": str(tmp_path / "home"),
           "RAGMARK_HISTORY": str(tmp_path / "history.sqlite"),
           "PATH": "/usr/bin:/bin"}
    got = subprocess.run(args, capture_output=True, text=True, env=env, check=True)
    assert "retrieving: 8/8 (100%)" in got.stderr and "retrieving: done, 8 in " in got.stderr
    quiet = subprocess.run([*args, "--quiet"], capture_output=True, text=True, env=env,
                           check=True)
    assert quiet.stderr == ""
