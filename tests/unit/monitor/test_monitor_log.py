"""``ragmark monitor`` over a growing JSONL log (issue 22): each invocation evaluates only
the records no earlier window took, records them as a window with the cursor, and gates
on drift; sampling is by a hash of the record id and bounded by a budget; two invocations
at once evaluate each record once; a killed one loses nothing completed."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from support.cli import run_cli
from support.fake_llm_server import FakeLLMServer

from ragmark.metrics.names import lower_is_better
from ragmark.monitor.windows import share
from ragmark.stats.drift import drift

P1 = "BM25 ranks documents by term frequency and inverse document frequency."
P2 = "A reranker reorders the candidate passages with a stronger model."
GOOD = "BM25 ranks documents by term frequency"
BAD = "Dense vectors are compared by cosine"


def _append(log: Path, records: list[dict], partial: str = "") -> None:
    with log.open("a", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")
        f.write(partial)


def _records(start: int, n: int, answer: str = GOOD, refuse_every: int = 0) -> list[dict]:
    return [{"id": f"r{i}", "question": f"question {i}?",
             "answer": "I don't know." if refuse_every and i % refuse_every == 0 else answer,
             "contexts": [P1 if i % 2 else P2], "latency_ms": 100 + (i * 37) % 50,
             "feedback": "up" if i % 3 else "down"} for i in range(start, start + n)]


def _windows(history: Path) -> list[tuple[int, list[str]]]:
    """The recorded windows and their questions; none while the monitor that is creating
    the history has not made its tables yet (the file exists before they do)."""
    con = sqlite3.connect(history)
    try:
        runs = con.execute("SELECT id FROM runs WHERE kind = 'monitor' ORDER BY id"
                           ).fetchall()
    except sqlite3.OperationalError as e:
        con.close()
        if "no such table" in str(e):
            return []
        raise
    out = [(rid, [q for (q,) in con.execute(
        "SELECT query_id FROM questions WHERE run_id = ? ORDER BY position", (rid,))])
        for (rid,) in runs]
    con.close()
    return out


@pytest.fixture
def history() -> Path:
    return Path(os.environ["RAGMARK_HISTORY"])


def test_each_window_takes_only_the_new_complete_lines(tmp_path, history, capsys):
    log = tmp_path / "app.jsonl"
    _append(log, _records(0, 3))
    code, out, err = run_cli(["monitor", str(log), "--output", str(tmp_path / "w1.json")],
                             capsys)
    assert code == 0, err
    first = json.loads((tmp_path / "w1.json").read_text())
    assert first["records"] == 3 and first["window"] == 1
    # the BM25 answer's content tokens are all in P1, none in P2: r0 (P2) 0, r1 (P1) 1,
    # r2 (P2) 0
    assert first["metrics"]["groundedness"] == pytest.approx(1 / 3)
    assert first["metrics"]["feedback"] == pytest.approx(2 / 3)  # r0 down, r1 up, r2 up
    assert first["metrics"]["latency_s"] == pytest.approx((0.100 + 0.137 + 0.124) / 3)
    assert set(first["latency_s"]) == {"p50", "p95", "p99"}
    # the trend's interval stays within what a share can be (a normal approximation
    # gave [-0.32, 0.99] for 0, 1, 0); of 0/1 values it is Wilson's (issue 61 item 5):
    # 1 of 3, by hand with z = 1.95996, [0.06149, 0.79234]
    point = first["trend"][-1]["metrics"]["groundedness"]
    assert (point["low"], point["high"], point["n"]) == (
        pytest.approx(0.06149, abs=1e-5), pytest.approx(0.79234, abs=1e-5), 3)
    assert "tokens" not in first["metrics"]  # not recorded by the log: left out, noted
    assert "not recorded by this source, left out: " in out
    # a window's file is no run's results (it has metrics and counts too): report and
    # diff refuse it, saying where its trend page is (they read it as a run before)
    code, _, err = run_cli(["report", str(tmp_path / "w1.json"), "--output",
                            str(tmp_path / "w1.html")], capsys)
    assert code == 2 and "a monitor window" in err and "--output trend.html" in err
    assert not (tmp_path / "w1.html").exists()
    # two more lines and one still being written: the window takes the two
    _append(log, _records(3, 2), partial='{"id": "r5", "question": "half a li')
    code, out, err = run_cli(["monitor", str(log)], capsys)
    assert code == 0, err
    assert [ids for _, ids in _windows(history)] == [["r0", "r1", "r2"], ["r3", "r4"]]
    # nothing new: no window, exit 0
    code, out, _ = run_cli(["monitor", str(log)], capsys)
    assert code == 0 and "no new record" in out and len(_windows(history)) == 2
    # the line completes: it is the next window
    with log.open("a", encoding="utf-8") as f:
        f.write('ne?", "answer": "a", "contexts": []}\n')
    run_cli(["monitor", str(log)], capsys)
    assert _windows(history)[-1][1] == ["r5"]
    code, out, _ = run_cli(["history", "--kind", "monitor"], capsys)  # windows are runs
    assert code == 0 and out.count("monitor") >= 3


def test_a_replaced_log_is_read_from_its_start(tmp_path, history, capsys):
    log = tmp_path / "app.jsonl"
    _append(log, [{"question": "a?", "answer": GOOD, "contexts": [P1]}])
    run_cli(["monitor", str(log)], capsys)
    log.write_text(json.dumps({"question": "b?", "answer": GOOD, "contexts": [P1]}) + "\n"
                   + json.dumps({"question": "c?", "answer": GOOD, "contexts": [P1]}) + "\n",
                   encoding="utf-8")
    code, out, _ = run_cli(["monitor", str(log)], capsys)
    assert code == 0 and "truncated or replaced" in out
    assert _windows(history)[-1][1] == ["q1", "q2"]


def test_a_planted_drop_fails_the_drift_gate(tmp_path, history, capsys):
    log = tmp_path / "app.jsonl"
    for w in range(3):  # three windows of grounded answers
        _append(log, _records(w * 30, 30))
        assert run_cli(["monitor", str(log)], capsys)[0] == 0
    _append(log, _records(90, 30, answer=GOOD))  # the same again: no drift
    junit = tmp_path / "gate.xml"
    code, out, err = run_cli(["monitor", str(log), "--fail-on-drift",
                              "groundedness,refusal,feedback", "--junit", str(junit)], capsys)
    assert code == 0, err
    assert "groundedness held" in out and "drift reference: the previous 3 windows" in out
    _append(log, _records(120, 30, answer=BAD))  # none grounded now
    summary = tmp_path / "summary.md"
    os.environ["GITHUB_STEP_SUMMARY"] = str(summary)
    try:
        code, out, err = run_cli(["monitor", str(log), "--fail-on-drift",
                                  "groundedness,refusal,feedback", "--junit", str(junit),
                                  "--output", str(tmp_path / "t.html")], capsys)
    finally:
        del os.environ["GITHUB_STEP_SUMMARY"]
    assert code == 1
    assert "gate failed: groundedness drifted: fell from" in err
    assert "gate failed: refusal" not in err and "gate failed: feedback" not in err
    assert 'failures="1"' in junit.read_text()
    assert "**drift**" in summary.read_text()
    page = (tmp_path / "t.html").read_text()
    assert page.count("<figure") >= 3
    # the diamond only on the chart of the metric that drifted (issue 33, item 21)
    figures = {f.split("</figcaption>")[0].rsplit(">", 1)[-1].split(" per window")[0]: f
               for f in page.split("<figure")[1:]}
    assert [m for m, f in figures.items() if "<title>drift</title>" in f] == ["groundedness"]
    assert _windows(history)[-1][0] == 5
    con = sqlite3.connect(history)
    assert [v for (v,) in con.execute("SELECT verdict FROM runs ORDER BY id")] == [
        None, None, None, "passed", "failed"]
    code, out, _ = run_cli(["history", "--kind", "monitor"], capsys)
    assert out.count("no gate") == 3 and "passed" in out and "failed" in out


def test_the_window_table_and_the_drift_line_say_what_happened(tmp_path, history, capsys):
    """Issue 33, item 21: the previous window's grounded_ratio (an aggregate, no value a
    record) is shown; a metric that did not move is "unchanged", not "fell from 1 to 1";
    a flat trend's axis says its value once."""
    log = tmp_path / "app.jsonl"
    for w in range(2):
        _append(log, _records(w * 20, 20))
        code, out, err = run_cli(["monitor", str(log), "--fail-on-drift", "groundedness",
                                  "--output", str(tmp_path / "t.html")], capsys)
        assert code == 0, err
    row = next(line for line in out.splitlines() if "grounded_ratio" in line)
    cells = [c.strip() for c in row.strip("│ ").split("│")]
    assert cells == ["grounded_ratio", "0.5", "20", "0", "0.5"]  # the previous window's
    assert "groundedness held: unchanged at 0.5 (n=20 before, n=20 now)" in out
    page = (tmp_path / "t.html").read_text()
    flat = next(f for f in page.split("<figure")[1:] if "grounded_ratio per window" in f)
    assert flat.count('font-size="10">0.5</text>') == 1


def test_identical_windows_pass_the_drift_gate_in_95_of_200_pairs():
    """200 pairs of windows drawn from one distribution (a 0/1 rate, a score in [0, 1],
    a latency): the gate fails at most 5 % of them (Holm over the three metrics, only
    the bad direction counting)."""
    rng = np.random.default_rng(20261126)
    failed = 0
    for _ in range(200):
        def window(n: int) -> dict[str, list[float]]:
            return {"refusal": list(rng.binomial(1, 0.1, n).astype(float)),
                    "groundedness": list(rng.beta(5, 2, n)),
                    "latency_s": list(rng.lognormal(-1.5, 0.4, n))}
        rows = drift(window(400), window(100), ["refusal", "groundedness", "latency_s"],
                     lower_is_better=lower_is_better())
        failed += any(r.drifted for r in rows)
    assert failed <= 10


def test_drift_detects_a_planted_shift_and_respects_the_margin():
    rng = np.random.default_rng(7)
    ref = {"groundedness": list(rng.beta(5, 2, 300))}
    new = {"groundedness": list(rng.beta(5, 2, 300) - 0.1)}
    (row,) = drift(ref, new, ["groundedness"])
    assert row.drifted and row.change == pytest.approx(-0.1, abs=0.03)
    assert row.mde is not None and row.mde < 0.05
    (row,) = drift(ref, new, ["groundedness"], margin=0.2)  # smaller than the margin
    assert not row.drifted
    up = {"groundedness": list(rng.beta(5, 2, 300) + 0.1)}
    assert not drift(ref, up, ["groundedness"])[0].drifted  # the good direction
    (row,) = drift({}, new, ["groundedness"])
    assert not row.drifted and "no value in the reference windows" in row.note


def _judged_log(tmp_path: Path, n: int) -> Path:
    log = tmp_path / "app.jsonl"
    _append(log, _records(0, n))
    return log


def _relevant(body):
    from support.fake_llm_server import chat_reply

    return chat_reply(json.dumps({"verdicts": [{"passage": 1, "relevant": True}]}))


def test_judges_see_a_hash_sample_under_a_budget(tmp_path, history, capsys):
    server = FakeLLMServer().start()
    server.rule = _relevant
    try:
        log = _judged_log(tmp_path, 60)
        base = ["monitor", str(log), "--judge-metrics", "context_relevance", "--sample",
                "0.5", "--llm-base-url", server.url, "--llm-model", "test-model",
                "--llm-structured", "off"]
        sampled = sorted((f"r{i}" for i in range(60) if share(f"r{i}") < 0.5), key=share)
        # the dry run says what the window would cost and records nothing
        code, out, err = run_cli([*base, "--dry-run"], capsys)
        assert code == 0, err
        assert f"would see {len(sampled)} of {len(sampled)} sampled" in out
        assert f"about {len(sampled)} calls" in out and not server.requests
        code, out, err = run_cli([*base, "--budget-calls", "10", "--output",
                                  str(tmp_path / "w.json")], capsys)
        assert code == 0, err
        w = json.loads((tmp_path / "w.json").read_text())
        assert len(server.requests) == 10  # one call a record, ten in the budget
        assert w["counts"]["context_relevance"]["n"] == 10
        reasons = w["counts"]["context_relevance"]["reasons"]
        assert reasons == {"not in the window's sample (--sample 0.5)": 60 - len(sampled),
                           "over the window's budget (--budget-calls 10)": len(sampled) - 10}
        assert w["sample"]["judged"] == 10 and w["sample"]["sampled"] == len(sampled)
        con = sqlite3.connect(history)
        judged = {q for (q,) in con.execute(
            "SELECT query_id FROM query_values WHERE metric = 'context_relevance' AND value "
            "IS NOT NULL")}
        assert judged == set(sampled[:10])  # the first ten in hash order: a rerun's too
    finally:
        server.stop()


def _monitor_proc(log: Path, env: dict, *extra: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "ragmark", "monitor", str(log), "-q",
                             *extra], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def test_two_invocations_at_once_evaluate_each_record_once(tmp_path, history):
    log = _judged_log(tmp_path, 200)
    env = {**os.environ}
    procs = [_monitor_proc(log, env) for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    ids = [q for _, qs in _windows(history) for q in qs]
    assert sorted(ids) == sorted(f"r{i}" for i in range(200))  # each once
    assert len(_windows(history)) == 1  # the second found nothing new


def _changed(history, since: int) -> bool:
    """Whether the history or its write-ahead log was written after ``since`` (ns); the
    log may be gone between a look and a stat (SQLite removes it at a checkpoint)."""
    def written(f) -> bool:  # type: ignore[no-untyped-def]
        try:
            return f.stat().st_mtime_ns > since
        except FileNotFoundError:
            return False

    return any(written(f) for f in (history, history.with_name(history.name + "-wal")))


def test_a_killed_monitor_loses_nothing_completed(tmp_path, history):
    log = _judged_log(tmp_path, 100)
    env = {**os.environ}
    p = _monitor_proc(log, env, "--follow", "--interval", "0.2")
    deadline = time.time() + 120
    while time.time() < deadline and not (history.exists() and _windows(history)):
        time.sleep(0.1)
    recorded = history.stat().st_mtime_ns
    _append(log, _records(100, 50))
    # killed once it is at work on the new records (the history changes), wherever it is
    while time.time() < deadline and _changed(history, recorded) is False:
        time.sleep(0.01)
    p.send_signal(signal.SIGKILL)
    p.communicate(timeout=60)
    assert subprocess.run([sys.executable, "-m", "ragmark", "monitor", str(log), "-q"],
                          env=env, capture_output=True, timeout=300).returncode == 0
    ids = [q for _, qs in _windows(history) for q in qs]
    assert sorted(ids) == sorted(f"r{i}" for i in range(150))  # each once, none lost


def test_follow_evaluates_records_as_they_arrive(tmp_path, history):
    log = _judged_log(tmp_path, 5)
    p = _monitor_proc(log, {**os.environ}, "--follow", "--interval", "0.2")
    deadline = time.time() + 120
    while time.time() < deadline and not (history.exists() and _windows(history)):
        time.sleep(0.1)
    _append(log, _records(5, 3))
    while time.time() < deadline and len(_windows(history)) < 2:
        time.sleep(0.1)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    assert "stopped: 2 windows recorded" in out
    assert [len(qs) for _, qs in _windows(history)] == [5, 3]


def test_bad_input_is_a_clear_error(tmp_path, capsys):
    code, _, err = run_cli(["monitor", str(tmp_path / "nope.jsonl")], capsys)
    assert code == 2 and "no such file or folder" in err
    log = tmp_path / "bad.jsonl"
    log.write_text('{"question": "a?", "answer": 3, "contexts": []}\n', encoding="utf-8")
    code, _, err = run_cli(["monitor", str(log)], capsys)
    assert code == 2 and "line 1" in err and "answer" in err and "Traceback" not in err
    code, _, err = run_cli(["monitor", str(log), "--fail-on-drift", "nonsense"], capsys)
    assert code == 2 and "unknown metric" in err
    code, _, err = run_cli(["monitor", str(log), "--output", str(tmp_path / "x.txt")], capsys)
    assert code == 2 and ".json, .md or .html" in err


def test_feedback_association_worked_by_hand():
    """AUC (Mann-Whitney): scores [0.9, 0.8, 0.3, 0.1], thumbs [1, 0, 1, 0]: of the 4
    positive-negative pairs the positive wins 3 -> 0.75. Spearman: [1, 2, 3, 4] against
    [2, 1, 4, 3]: d = [1, -1, 1, -1], 1 - 6 * 4 / (4 * 15) = 0.6."""
    from ragmark.stats.feedback import association

    a = association("groundedness", [0.9, 0.8, 0.3, 0.1], [1, 0, 1, 0])
    assert a.measure == "auc" and a.value == 0.75 and a.n == 4
    assert a.low is not None and a.high is not None and a.low <= 0.75 <= a.high
    b = association("groundedness", [1.0, 2.0, 3.0, 4.0, None], [2, 1, 4, 3, 5])
    assert b.measure == "spearman" and b.value == pytest.approx(0.6) and b.n == 4
    c = association("refusal", [0.0, 0.0, 0.0], [1, 0, 1])
    assert c.value is None and "one value" in c.note
    d = association("groundedness", [0.2, 0.4], [1, 0])
    assert d.value is None and "fewer than 3" in d.note


def test_monitor_reports_what_users_are_satisfied_with(tmp_path, capsys):
    """Grounded answers get the thumbs up, ungrounded ones down: groundedness predicts
    the feedback perfectly (AUC 1)."""
    log = tmp_path / "app.jsonl"
    _append(log, [{"id": f"r{i}", "question": f"q{i}?", "answer": GOOD if i % 2 else BAD,
                   "contexts": [P1], "feedback": "up" if i % 2 else "down"}
                  for i in range(20)])
    out_json = tmp_path / "w.json"
    code, out, err = run_cli(["monitor", str(log), "--output", str(out_json)], capsys)
    assert code == 0, err
    assert "what users are satisfied with" in out
    rows = {a["metric"]: a for a in json.loads(out_json.read_text())["feedback_association"]}
    assert rows["groundedness"]["measure"] == "auc" and rows["groundedness"]["value"] == 1.0
    assert rows["groundedness"]["n"] == 20
    assert rows["empty_retrieval"]["value"] is None  # it does not vary here


def test_an_unwritable_output_is_refused_before_any_record_is_read(tmp_path, history,
                                                                    capsys):
    log = _judged_log(tmp_path, 5)
    code, _, err = run_cli(["monitor", str(log), "--output", "/proc/nope/w.json"], capsys)
    assert code == 2 and "--output /proc/nope/w.json" in err and "Traceback" not in err
    assert not history.exists()  # no window, no cursor moved


def test_a_dead_endpoint_fails_the_judges_asked_for(tmp_path, capsys):
    log = _judged_log(tmp_path, 10)
    code, _, err = run_cli(["monitor", str(log), "--judge-metrics", "faithfulness",
                            "--sample", "1", "--llm-base-url", "http://127.0.0.1:9/v1",
                            "--llm-model", "m", "--llm-max-retries", "0"], capsys)
    assert code == 1
    assert "gate failed: faithfulness got no value for any of 10 records of window 1" in err
    assert "the LLM endpoint did not answer" in err
    # issue 48, item 6: the window is recorded as failed, as the exit says ('no gate')
    code, out, _ = run_cli(["history", "--kind", "monitor"], capsys)
    assert "failed" in out and "no gate" not in out


def test_windows_are_numbered_per_source(tmp_path, history, capsys):
    """Issue 48, item 6: a source's first window was 'window 3' when two windows of
    another source came first (its history id)."""
    other, log = tmp_path / "other.jsonl", tmp_path / "app.jsonl"
    for w in range(2):
        _append(other, _records(w * 10, 10))
        assert run_cli(["monitor", str(other)], capsys)[0] == 0
    _append(log, _records(0, 10))
    code, out, err = run_cli(["monitor", str(log), "--output", str(tmp_path / "w.json")],
                             capsys)
    assert code == 0, err
    assert "window 1 of app (history run 3): 10 records" in out
    w = json.loads((tmp_path / "w.json").read_text())
    assert (w["number"], w["window"]) == (1, 3)
    code, out, _ = run_cli(["monitor", str(log)], capsys)
    assert "since the last window (history run 3)" in " ".join(out.split())


def test_the_drift_reference_of_pruned_windows_is_the_same_as_unpruned(tmp_path, capsys):
    """Issue 48, item 5: after pruning, the reference said 'fell from 0.7978 (n=20)'
    where the same window on the unpruned history said n=100, and the note still said
    'the previous 5 windows'. Each window keeps its moments (count, mean, squared
    deviations), which pool exactly: the test, its n and its p are the same."""
    import shutil
    from datetime import UTC, datetime, timedelta

    from ragmark.history.retention import prune

    log = tmp_path / "app.jsonl"
    kept, pruned = tmp_path / "kept.sqlite", tmp_path / "pruned.sqlite"
    for w in range(5):  # five windows of 20, a few refusals in each
        _append(log, _records(w * 20, 20, refuse_every=3 + w))
        assert run_cli(["monitor", str(log), "--history", str(kept)], capsys)[0] == 0
    shutil.copy(kept, pruned)
    got = prune(pruned, timedelta(days=1), now=datetime.now(UTC) + timedelta(days=2))
    assert len(got.runs) == 4  # every window but the newest lost its values
    _append(log, _records(100, 20, answer=BAD))
    said = {}
    for h in (kept, pruned):  # the same new window, judged against each history
        code, out, err = run_cli(["monitor", str(log), "--history", str(h),
                                  "--fail-on-drift", "groundedness,refusal"], capsys)
        assert code == 1, err
        said[h] = (" ".join(out.split()), [x for x in err.splitlines()
                                           if x.startswith("gate failed")])
    assert "drift reference: the previous 5 windows (100 records)" in said[pruned][0]
    assert said[kept][1] == said[pruned][1] and "(n=100)" in said[pruned][1][0]
