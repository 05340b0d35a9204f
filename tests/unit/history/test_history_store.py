"""The run history store: migrations, atomic records, concurrent writers."""

from __future__ import annotations

import multiprocessing
import sqlite3

import pytest

from ragmark.errors import ConfigError
from ragmark.history import ConfigResult, aggregates, list_runs, record, run_row, trend, values
from ragmark.history.migrations import LATEST, MIGRATIONS, migrate, version
from ragmark.history.store import connect
from ragmark.results.model import Aggregate
from ragmark.types import Score

ENV = {"kind": "run", "schema": 1, "ragmark": "0.1.0", "created_at": "2026-11-20T10:00:00+00:00",
       "git_commit": "abc123", "dataset_hash": "d" * 64, "config_hash": "c" * 64}


def _result(mrr: float, name: str = "sparse") -> ConfigResult:
    return ConfigResult({"name": name, "top_k": 10},
                        {"mrr": Aggregate(mrr, 2, 1, {"no ground truth": 1}),
                         "recall@5": Aggregate(0.5, 2, 1, {"no ground truth": 1})},
                        {"q1": {"mrr": Score(mrr), "recall@5": Score(0.5)},
                         "q2": {"mrr": Score(mrr), "recall@5": Score(0.5)},
                         "q3": {"mrr": Score.missing("no ground truth"),
                                "recall@5": Score.missing("no ground truth")}})


QUESTIONS = [("q1", "one?"), ("q2", "two?"), ("q3", "three?")]


def test_an_empty_store_is_migrated_to_the_latest_schema(tmp_path):
    path = tmp_path / "h.sqlite"
    with connect(path) as con:
        assert version(con) == LATEST == MIGRATIONS[-1][0]
        done = [r[0] for r in con.execute("SELECT version FROM schema_migrations")]
    assert done == [m[0] for m in MIGRATIONS]
    with connect(path) as con:  # opening again applies nothing
        assert migrate(con) == []


def test_a_store_of_each_earlier_schema_is_migrated_keeping_its_runs(tmp_path):
    for upto in range(1, LATEST):
        path = tmp_path / f"v{upto}.sqlite"
        con = sqlite3.connect(path, isolation_level=None)
        assert migrate(con, upto=upto) == list(range(1, upto + 1))
        con.execute("INSERT INTO runs (kind, created_at, ragmark, git_commit, dataset_name, "
                    "dataset_hash, config_hash, questions, envelope, results_path) VALUES "
                    "('run', '2026-01-01T00:00:00+00:00', '0.0.9', NULL, 'old', 'e', 'f', 3, "
                    "'{}', NULL)")
        con.close()
        with connect(path) as con:
            assert version(con) == LATEST
        (old,) = list_runs(path)
        assert (old.id, old.dataset_name, old.questions) == (1, "old", 3)
        new = record(path, ENV, "set", QUESTIONS, {"sparse": _result(0.5)})
        assert new == 2 and values(path, new, "sparse")[1]["mrr"]["q1"] == 0.5


def test_migration_6_renames_the_label_metrics_of_label_runs_only(tmp_path, monkeypatch):
    """Issue 34: a store of schema 5 holding a label run's precision@3/recall@3 and a
    retrieval run's precision@3/recall@5 comes out with the label run's named
    judged_precision@3/relative_recall@3, values and reasons kept, the run's unchanged."""
    path = tmp_path / "v5.sqlite"
    con = sqlite3.connect(path, isolation_level=None)
    migrate(con, upto=5)
    con.close()
    label = ConfigResult({"name": "sparse"},
                         {"precision@3": Aggregate(0.5, 2, 0, {}),
                          "recall@3": Aggregate(None, 0, 2, {"none relevant": 2}),
                          "answer_presence@3": Aggregate(1.0, 2, 0, {})},
                         {"q1": {"precision@3": Score(0.25), "recall@3": Score.missing(
                             "none relevant"), "answer_presence@3": Score(1.0)}})
    plain = ConfigResult({"name": "sparse"}, {"precision@3": Aggregate(0.75, 2, 0, {}),
                                              "recall@5": Aggregate(0.5, 2, 0, {})},
                         {"q1": {"precision@3": Score(0.75), "recall@5": Score(0.5)}})
    import ragmark.history.migrations as m

    with monkeypatch.context() as patch:  # record as a store of schema 5 did
        patch.setattr(m, "MIGRATIONS", MIGRATIONS[:5])
        lab = record(path, {**ENV, "kind": "label"}, "set", QUESTIONS, {"sparse": label})
        run = record(path, ENV, "set", QUESTIONS, {"sparse": plain})
        assert aggregates(path, lab)["sparse"]["precision@3"].value == 0.5
    with connect(path) as con:
        assert version(con) == MIGRATIONS[-1][0]  # 6 and every later one
    assert aggregates(path, lab)["sparse"] == {
        "judged_precision@3": Aggregate(0.5, 2, 0, {}),
        "relative_recall@3": Aggregate(None, 0, 2, {"none relevant": 2}),
        "answer_presence@3": Aggregate(1.0, 2, 0, {})}
    assert values(path, lab, "sparse")[1] == {"answer_presence@3": {"q1": 1.0},
                                              "judged_precision@3": {"q1": 0.25},
                                              "relative_recall@3": {"q1": None}}
    assert set(aggregates(path, run)["sparse"]) == {"precision@3", "recall@5"}
    assert values(path, run, "sparse")[1]["precision@3"] == {"q1": 0.75}


def test_record_list_show_values_and_trend(tmp_path):
    path = tmp_path / "h.sqlite"
    for i, mrr in enumerate((0.5, 0.6, 0.7)):
        env = {**ENV, "created_at": f"2026-11-2{i}T10:00:00+00:00"}
        record(path, env, "set", QUESTIONS, {"sparse": _result(mrr)}, f"r{i}.json")
    record(path, {**ENV, "kind": "compare", "dataset_hash": "e" * 64}, "other", QUESTIONS,
           {"dense": _result(0.9, "dense"), "sparse": _result(0.1)})
    runs = list_runs(path)
    assert [r.id for r in runs] == [4, 3, 2, 1] and runs[0].configs == ("dense", "sparse")
    assert [r.id for r in list_runs(path, dataset="set")] == [3, 2, 1]
    assert [r.id for r in list_runs(path, dataset="eee")] == [4]  # a hash prefix
    assert [r.id for r in list_runs(path, config="dense")] == [4]
    assert [r.id for r in list_runs(path, since="2026-11-21")] == [3, 2]
    assert [r.id for r in list_runs(path, kind="compare", limit=5)] == [4]
    assert aggregates(path, 1)["sparse"]["mrr"] == Aggregate(0.5, 2, 1, {"no ground truth": 1})
    row, env, configs = run_row(path, 2)
    assert row.results_path == "r1.json" and env["git_commit"] == "abc123"
    assert configs == {"sparse": {"name": "sparse", "top_k": 10}}
    questions, vals = values(path, 3, "sparse")
    assert list(questions) == ["q1", "q2", "q3"] and list(vals) == ["mrr", "recall@5"]
    assert vals["mrr"] == {"q1": 0.7, "q2": 0.7, "q3": None}
    # the trend follows the dataset of the config's newest run unless one is named
    assert [(r.id, a.value) for r, a in trend(path, "sparse", "mrr")] == [(4, 0.1)]
    assert [(r.id, a.value) for r, a in trend(path, "sparse", "mrr", "set")] == [
        (1, 0.5), (2, 0.6), (3, 0.7)]
    with pytest.raises(ConfigError, match="no run 9 in the run history"):
        run_row(path, 9)


def test_a_failed_record_leaves_nothing_behind(tmp_path):
    path = tmp_path / "h.sqlite"
    bad = _result(0.5)
    bad.values = {"q1": {"mrr": object()}}  # type: ignore[dict-item]  # cannot be stored
    with pytest.raises(AttributeError):
        record(path, ENV, "set", QUESTIONS, {"sparse": bad})
    assert list_runs(path) == []
    with connect(path) as con:
        assert con.execute("SELECT COUNT(*) FROM aggregates").fetchone() == (0,)
        assert con.execute("SELECT COUNT(*) FROM questions").fetchone() == (0,)


def _writer(args: tuple[str, int]) -> list[int]:
    path, k = args
    return [record(path, {**ENV, "created_at": f"2026-11-23T10:{k:02d}:{i:02d}+00:00"},
                   "set", QUESTIONS, {f"c{k}": _result(i / 20, f"c{k}")}) for i in range(15)]


def test_concurrent_writers_all_land(tmp_path):
    path = str(tmp_path / "h.sqlite")
    with connect(path):
        pass
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(4) as pool:
        ids = [i for got in pool.map(_writer, [(path, k) for k in range(4)]) for i in got]
    assert sorted(ids) == list(range(1, 61))
    runs = list_runs(path)
    assert len(runs) == 60
    assert {r.configs for r in runs} == {("c0",), ("c1",), ("c2",), ("c3",)}
    with connect(path) as con:
        assert con.execute("SELECT COUNT(*) FROM query_values").fetchone() == (60 * 6,)


def test_a_newer_store_is_refused(tmp_path):
    path = tmp_path / "h.sqlite"
    with connect(path) as con:
        con.execute("INSERT INTO schema_migrations VALUES (99, 'future', 'x')")
    with pytest.raises(ConfigError, match="has schema 99, newer than this ragmark"), \
            connect(path):
        pass


WRITER = """
import sys
from ragmark.history import ConfigResult, record
from ragmark.results.model import Aggregate
from ragmark.types import Score
questions = [(f"q{i}", f"question {i}?") for i in range(3000)]
env = {"kind": "run", "schema": 1, "ragmark": "x", "created_at": "2026-11-23T00:00:00+00:00",
       "git_commit": None, "dataset_hash": "d", "config_hash": "c"}
values = {q: {f"m{j}": Score(j / 10) for j in range(8)} for q, _ in questions}
aggs = {f"m{j}": Aggregate(j / 10, 3000, 0, {}) for j in range(8)}
print("ready", flush=True)
while True:
    record(sys.argv[1], env, "big", questions, {"cfg": ConfigResult({"name": "cfg"}, aggs,
                                                                    values)})
"""


def test_a_killed_writer_leaves_only_whole_records(tmp_path):
    import signal
    import subprocess
    import sys
    import time

    path = tmp_path / "h.sqlite"
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # kill it once some runs landed, mid-way through one
        time.sleep(0.3)
        if path.exists() and len(list_runs(path)) >= 2:
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    runs = list_runs(path)
    assert len(runs) >= 2
    with connect(path) as con:
        for r in runs:
            q = con.execute("SELECT COUNT(*) FROM questions WHERE run_id = ?", (r.id,))
            v = con.execute("SELECT COUNT(*) FROM query_values WHERE run_id = ?", (r.id,))
            a = con.execute("SELECT COUNT(*) FROM aggregates WHERE run_id = ?", (r.id,))
            assert (q.fetchone()[0], v.fetchone()[0], a.fetchone()[0]) == (3000, 24000, 8)
        orphans = con.execute("SELECT COUNT(*) FROM query_values WHERE run_id NOT IN "
                              "(SELECT id FROM runs)").fetchone()[0]
        assert orphans == 0
    # the store still takes new runs
    assert record(path, ENV, "set", QUESTIONS, {"sparse": _result(0.5)}) == runs[0].id + 1
