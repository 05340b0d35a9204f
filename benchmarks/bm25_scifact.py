"""BM25 on BEIR SciFact (test split): ragmark vs bm25s vs rank_bm25, in the same run.

Systems, each measured in its own fresh interpreter:

- ``ragmark-runner``: ``ragmark.running.runner.run(dataset, load_config("sparse", top_k=100),
  skip_generation=True)`` end to end (whole-document chunks, ragmark's BM25Retriever);
- ``ragmark``: ``ragmark.retrieval.bm25.BM25Retriever`` (k1=1.5, b=0.75, English stemmer,
  stop-words "en") over one chunk per document;
- ``bm25s``: bm25s directly with the same settings (lucene, numpy backend);
- ``rank_bm25``: ``rank_bm25.BM25Okapi`` with its defaults over the same tokens.

Quality (nDCG@10, Recall@100) is computed with pytrec_eval on the top 100 of each system.
Index time, queries per second and peak memory are measured; every number printed comes
from this run. ``python benchmarks/bm25_scifact.py --help`` for the options.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from _env import (
    DEFAULT_DATA,
    RESULTS,
    PeakRSS,
    Run,
    check_scifact,
    emit,
    header_lines,
    import_seconds,
    load_average,
    machine_info,
    md_table,
    run_worker,
    text_table,
    to_run,
    write_results,
)

SYSTEMS = ("ragmark-runner", "ragmark", "bm25s", "rank_bm25")
DEPTH = 100
DISTS = ("ragmark", "bm25s", "PyStemmer", "rank-bm25", "numpy", "pytrec-eval-terrier")
TOKENS = {
    "ragmark-runner": "ragmark's (bm25s.tokenize: lowercase, regex \\w\\w+, stop-words en, "
    "PyStemmer english); text = title + newline + text (WholeChunker)",
    "ragmark": "ragmark's (as above); text = title + ' ' + text",
    "bm25s": "bm25s.tokenize(lower=True, stopwords='en', stemmer=PyStemmer english)",
    "rank_bm25": "bm25s.tokenize(..., return_ids=False): the same token strings as bm25s "
    "(lowercase, regex \\w\\w+, bm25s English stop-words, PyStemmer english)",
}
Ranked = tuple[np.ndarray, np.ndarray]  # (queries x k) document positions (-1: none), scores
System = tuple[Callable[[], Any], Callable[[Any], Ranked]]


# -- data ------------------------------------------------------------------------------


def load_scifact(folder: Path, n_queries: int | None) -> dict[str, Any]:
    """Corpus (title + " " + text), test queries in qrels order, and graded qrels."""
    doc_ids: list[str] = []
    texts: list[str] = []
    with (folder / "corpus.jsonl").open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                d = json.loads(line)
                doc_ids.append(str(d["_id"]))
                texts.append(f"{d.get('title') or ''} {d['text']}")
    queries: dict[str, str] = {}
    with (folder / "queries.jsonl").open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                q = json.loads(line)
                queries[str(q["_id"])] = q["text"]
    qrels: dict[str, dict[str, int]] = {}
    with (folder / "qrels" / "test.tsv").open(encoding="utf-8") as f:
        for i, line in enumerate(f):
            cols = line.rstrip("\n").split("\t")
            if i == 0 and cols[0] == "query-id":
                continue
            qrels.setdefault(cols[0], {})[cols[1]] = int(cols[2])
    qids = list(qrels)[:n_queries] if n_queries else list(qrels)
    return {
        "doc_ids": doc_ids,
        "texts": texts,
        "qids": qids,
        "questions": [queries[q] for q in qids],
        "qrels": {q: qrels[q] for q in qids},
    }




# -- systems (run inside a worker) ---------------------------------------------------------


def _bm25s_stemmer() -> Any:
    import Stemmer

    return Stemmer.Stemmer("english")


def system_ragmark(data: dict[str, Any]) -> System:
    from ragmark.retrieval.bm25 import BM25Retriever
    from ragmark.types import Chunk

    chunks = [Chunk(id=d, doc_id=d, text=t) for d, t in zip(data["doc_ids"], data["texts"],
                                                             strict=True)]

    def index() -> Any:
        r = BM25Retriever()  # defaults: k1=1.5, b=0.75, english, stop-words "en"
        r.index(chunks)
        return r

    def retrieve(r: Any) -> Ranked:
        ids, scores = r.retrieve(data["questions"], DEPTH)
        return np.asarray(ids), np.asarray(scores)

    return index, retrieve


def system_bm25s(data: dict[str, Any]) -> System:
    import bm25s

    def index() -> Any:
        stemmer = _bm25s_stemmer()
        tokens = bm25s.tokenize(data["texts"], stopwords="en", stemmer=stemmer,
                                show_progress=False)
        model = bm25s.BM25(k1=1.5, b=0.75, method="lucene", backend="numpy")
        model.index(tokens, show_progress=False)
        return model, stemmer

    def retrieve(state: Any) -> Ranked:
        model, stemmer = state
        tokens = bm25s.tokenize(data["questions"], stopwords="en", stemmer=stemmer,
                                show_progress=False)
        ids, scores = model.retrieve(tokens, k=DEPTH, show_progress=False,
                                     backend_selection="numpy")
        return np.asarray(ids), np.asarray(scores)

    return index, retrieve


def system_rank_bm25(data: dict[str, Any]) -> System:
    import bm25s
    from rank_bm25 import BM25Okapi

    def index() -> Any:
        stemmer = _bm25s_stemmer()
        tokens = bm25s.tokenize(data["texts"], stopwords="en", stemmer=stemmer,
                                return_ids=False, show_progress=False)
        return BM25Okapi(tokens), stemmer  # defaults: k1=1.5, b=0.75, epsilon=0.25

    def retrieve(state: Any) -> Ranked:
        model, stemmer = state
        tokens = bm25s.tokenize(data["questions"], stopwords="en", stemmer=stemmer,
                                return_ids=False, show_progress=False)
        n = len(data["doc_ids"])
        k = min(DEPTH, n)
        ids = np.empty((len(tokens), k), dtype=np.int64)
        scores = np.empty((len(tokens), k), dtype=np.float64)
        for qi, toks in enumerate(tokens):
            s = model.get_scores(toks)
            top = np.argpartition(-s, k - 1)[:k] if k < n else np.arange(n)
            top = top[np.argsort(-s[top], kind="stable")]
            ids[qi], scores[qi] = top, s[top]
        return ids, scores

    return index, retrieve


SYSTEM_FACTORIES = {
    "ragmark": system_ragmark,
    "bm25s": system_bm25s,
    "rank_bm25": system_rank_bm25,
}


IMPORTS = {
    "ragmark-runner": "import ragmark.config, ragmark.data, ragmark.running.runner, bm25s, Stemmer",
    "ragmark": "import ragmark.retrieval.bm25, ragmark.types, bm25s, Stemmer",
    "bm25s": "import bm25s, Stemmer",
    "rank_bm25": "import rank_bm25, bm25s, Stemmer",
}


def _preimport() -> None:
    """Import what the timed code would import lazily; import time is measured apart."""
    import bm25s  # noqa: F401
    import Stemmer  # noqa: F401


def worker_direct(name: str, folder: Path, n_queries: int | None, repeats: int,
                  trace: bool) -> dict[str, Any]:
    _preimport()
    data = load_scifact(folder, n_queries)
    index, retrieve = SYSTEM_FACTORIES[name](data)
    gc.collect()
    if trace:
        tracemalloc.start()
        retrieve(index())
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return {"tracemalloc_peak_mib": peak / 2**20}
    index_s: list[float] = []
    retrieve_s: list[float] = []
    ranked: Ranked | None = None
    with PeakRSS() as mem:
        for _ in range(repeats):
            t0 = time.perf_counter()
            state = index()
            t1 = time.perf_counter()
            ranked = retrieve(state)
            t2 = time.perf_counter()
            index_s.append(t1 - t0)
            retrieve_s.append(t2 - t1)
            del state
            gc.collect()
    return {
        "index_s": index_s,
        "retrieve_s": retrieve_s,
        "n_queries": len(data["qids"]),
        "n_docs": len(data["doc_ids"]),
        "rss_delta_mib": mem.delta_mib,
        "rss_peak_mib": mem.peak_mib,
        "rss_method": mem.method,
        "run": to_run(data["qids"], data["doc_ids"], *ranked) if ranked else {},
        "retrieved_per_query": float(np.mean((ranked[0] >= 0).sum(axis=1))) if ranked else 0,
    }


def worker_runner(folder: Path, n_queries: int | None, repeats: int,
                  trace: bool) -> dict[str, Any]:
    _preimport()
    from ragmark.config import load_config
    from ragmark.data import load_dataset
    from ragmark.running.runner import run as ragmark_run
    from ragmark.running.task import Task

    t0 = time.perf_counter()
    dataset = load_dataset(folder)
    load_s = time.perf_counter() - t0
    cfg = load_config("sparse", top_k=DEPTH)
    metrics = ["ndcg@10", "recall@100"]

    def once() -> Any:
        return ragmark_run(dataset, cfg, Task(metrics, max_queries=n_queries,
                                              skip_generation=True))

    gc.collect()
    if trace:
        tracemalloc.start()
        once()
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return {"tracemalloc_peak_mib": peak / 2**20}
    wall: list[float] = []
    timings: list[dict[str, float]] = []
    report: Any = None
    with PeakRSS() as mem:
        for _ in range(repeats):
            report = None
            gc.collect()
            t0 = time.perf_counter()
            report = once()
            wall.append(time.perf_counter() - t0)
            timings.append(dict(report.timings))
    run: Run = {}
    own: dict[str, dict[str, float]] = {}
    for rec in report.queries:
        run[rec.id] = {}
        for r in rec.retrieved:
            run[rec.id].setdefault(r.doc_id, float(r.score))
        own[rec.id] = {m: s.value for m, s in rec.metrics.items() if s.value is not None}
    return {
        "load_s": load_s,
        "wall_s": wall,
        "index_s": [t["index_s"] for t in timings],
        "retrieve_s": [t["retrieve_s"] for t in timings],
        "timings": timings,
        "n_queries": len(report.queries),
        "n_docs": int(report.dataset["documents"]),
        "rss_delta_mib": mem.delta_mib,
        "rss_peak_mib": mem.peak_mib,
        "rss_method": mem.method,
        "run": run,
        "retrieved_per_query": float(np.mean([len(v) for v in run.values()])),
        "own_metrics": own,
    }


# -- parent ----------------------------------------------------------------------------


def pytrec_scores(qrels: dict[str, dict[str, int]], run: Run) -> dict[str, dict[str, float]]:
    import pytrec_eval

    ev = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recall.100"})
    return dict(ev.evaluate(run))


def _median(xs: list[float]) -> float:
    return statistics.median(xs)


def _spread(value: float, xs: list[float], fmt: str) -> str:
    """``value (min-max)`` when there are several measurements."""
    if len(xs) < 2:
        return fmt.format(value)
    return f"{fmt.format(value)} ({fmt.format(min(xs))}-{fmt.format(max(xs))})"


def runner_note(r: dict[str, Any]) -> str:
    """What the runner's own timings say (their keys depend on the ragmark version)."""
    t = r["timings"]

    def med(key: str) -> float:
        return _median([x[key] for x in t])

    parts = [f"dataset load (load_dataset) {r['load_s']:.2f} s"]
    if "chunk_s" in t[0]:
        parts.append(f"chunking {med('chunk_s'):.3f} s (not in index s)")
    else:
        parts.append("index s includes chunking")
    if "latency_p50_ms" in t[0]:
        parts.append(
            "retrieval one query at a time (the runner measures per-query latency): "
            f"p50 {med('latency_p50_ms'):.2f} ms, p95 {med('latency_p95_ms'):.2f} ms, so its "
            "QPS is not batch QPS"
        )
    if "answer_s" in t[0]:
        parts.append(f"judging {med('answer_s'):.2f} s")
    return "ragmark-runner (medians of its report.timings): " + "; ".join(parts) + "."


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA / "scifact",
                    help="BEIR SciFact folder (default: ../shared/data/scifact from the "
                    "project root)")
    ap.add_argument("--queries", type=int, default=None, help="only the first N test queries")
    ap.add_argument("--repeats", type=int, default=3,
                    help="index + retrieve passes per system; medians are reported")
    ap.add_argument("--systems", default=",".join(SYSTEMS),
                    help=f"comma-separated subset of {', '.join(SYSTEMS)}")
    ap.add_argument("--no-tracemalloc", action="store_true",
                    help="skip the extra tracemalloc pass per system")
    ap.add_argument("--out", type=Path, default=RESULTS / "bm25_scifact.md",
                    help="Markdown result file ('-' to skip writing)")
    ap.add_argument("--worker", choices=SYSTEMS, help=argparse.SUPPRESS)
    ap.add_argument("--trace", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    folder: Path = args.data

    if args.worker:
        if args.worker == "ragmark-runner":
            emit(worker_runner(folder, args.queries, args.repeats, args.trace))
        else:
            emit(worker_direct(args.worker, folder, args.queries, args.repeats, args.trace))
        return

    check_scifact(folder)
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    unknown = set(systems) - set(SYSTEMS)
    if unknown:
        sys.exit(f"unknown system(s) {', '.join(sorted(unknown))}; known: {', '.join(SYSTEMS)}")
    info = machine_info(DISTS)
    data = load_scifact(folder, args.queries)
    qrels = data["qrels"]
    script = Path(__file__).resolve()
    base = ["--data", str(folder), "--repeats", str(args.repeats)]
    if args.queries:
        base += ["--queries", str(args.queries)]

    from rich.progress import Progress

    results: dict[str, dict[str, Any]] = {}
    steps = len(systems) * (1 if args.no_tracemalloc else 2)
    with Progress(transient=True) as bar:
        task = bar.add_task("benchmarking", total=steps)
        for name in systems:
            bar.update(task, description=f"{name}: timing ({args.repeats} passes)")
            res = run_worker(script, ["--worker", name, *base])
            res["import_s"] = import_seconds(IMPORTS[name])
            if not args.no_tracemalloc:
                bar.advance(task)
                bar.update(task, description=f"{name}: tracemalloc pass")
                traced = run_worker(script, ["--worker", name, "--trace", *base])
                res["tracemalloc_peak_mib"] = traced["tracemalloc_peak_mib"]
            bar.advance(task)
            results[name] = res
    info["load average (1/5/15 min) at end"] = load_average()

    rows: list[list[str]] = []
    summary: dict[str, dict[str, float]] = {}
    notes: list[str] = []
    for name in systems:
        r = results[name]
        per_q = pytrec_scores(qrels, r["run"])
        ndcg = float(np.mean([per_q[q]["ndcg_cut_10"] for q in per_q]))
        rec = float(np.mean([per_q[q]["recall_100"] for q in per_q]))
        index_s = _median(r["index_s"])
        retrieve_s = _median(r["retrieve_s"])
        qps = r["n_queries"] / retrieve_s
        total = _median(r["wall_s"]) if "wall_s" in r else index_s + retrieve_s
        summary[name] = {"ndcg": ndcg, "recall": rec, "index_s": index_s, "qps": qps,
                         "rss": r["rss_delta_mib"], "trace": r.get("tracemalloc_peak_mib",
                                                                   float("nan"))}
        qps_all = [r["n_queries"] / t for t in r["retrieve_s"]]
        rows.append([
            name, f"{ndcg:.4f}", f"{rec:.4f}", f"{r['retrieved_per_query']:.1f}",
            _spread(index_s, r["index_s"], "{:.2f}"), _spread(qps, qps_all, "{:,.0f}"),
            f"{total:.2f}", f"{r['rss_delta_mib']:.0f}", f"{r['rss_peak_mib']:.0f}",
            "-" if "tracemalloc_peak_mib" not in r else f"{r['tracemalloc_peak_mib']:.0f}",
            f"{r['import_s']:.2f}",
        ])
        if len(per_q) != r["n_queries"]:
            notes.append(f"{name}: pytrec_eval scored {len(per_q)} of {r['n_queries']} queries")
        if name == "ragmark-runner":
            own = r["own_metrics"]
            diffs = {
                m: max(abs(own[q][m] - per_q[q][k]) for q in per_q if m in own.get(q, {}))
                for m, k in (("ndcg@10", "ndcg_cut_10"), ("recall@100", "recall_100"))
            }
            notes.append(
                "ragmark-runner: its own per-query metrics vs pytrec_eval on its run: max |diff| "
                + ", ".join(f"{m} {d:.2e}" for m, d in diffs.items()) + "."
            )
            notes.append(runner_note(r))
    rss_method = results[systems[0]]["rss_method"]
    head = ["system", "nDCG@10", "R@100", "docs/query", "index s", "QPS", "total s",
            "peak RSS Δ MiB", "peak RSS MiB", "tracemalloc peak MiB", "import s"]

    ratio_rows: list[list[str]] = []
    if "bm25s" in summary:
        b = summary["bm25s"]
        for name in systems:
            if name == "bm25s":
                continue
            s = summary[name]
            ratio_rows.append([
                name, f"{s['ndcg'] - b['ndcg']:+.4f}", f"{s['recall'] - b['recall']:+.4f}",
                f"{s['index_s'] / b['index_s']:.2f}", f"{s['qps'] / b['qps']:.2f}",
                f"{s['rss'] / b['rss']:.2f}" if b["rss"] > 0 else "-",
                f"{s['trace'] / b['trace']:.2f}" if b["trace"] == b["trace"] else "-",
            ])
    ratio_head = ["system", "nDCG@10 − bm25s", "R@100 − bm25s", "index time / bm25s",
                  "QPS / bm25s", "peak RSS Δ / bm25s", "tracemalloc / bm25s"]

    n_q = results[systems[0]]["n_queries"]
    n_d = results[systems[0]]["n_docs"]
    legend = [
        f"SciFact test: {n_q} queries, {n_d:,} documents; top {DEPTH} per query; metrics by "
        "pytrec_eval (ndcg_cut.10, recall.100) averaged over the queries.",
        f"Times are medians (min-max) of {args.repeats} passes in one fresh interpreter per "
        "system; import s = median of 3 fresh interpreters importing what the system needs; "
        "index s = tokenising the corpus + building the index; QPS = queries / time to "
        "tokenise and retrieve all of them (one thread); total s = index + retrieve "
        "(ragmark-runner: the whole run() call, chunking and judging included).",
        f"peak RSS Δ = peak resident memory during index+retrieve minus RSS before it "
        f"({rss_method}; data already loaded, libraries imported); tracemalloc peak = peak of "
        "Python/numpy allocations in a separate traced pass of one index + retrieve.",
        "Tokenisation: " + "; ".join(f"{n}: {TOKENS[n]}" for n in systems) + ".",
        "bm25s and ragmark's retriever both call bm25s with n_threads=0 (a plain loop); "
        "ragmark in batches of 256 queries. docs/query = mean "
        "number of documents returned (ragmark drops documents sharing no term with the "
        "query, as Lucene does; bm25s and rank_bm25 fill the top 100 with zero scores).",
        "rank_bm25 BM25Okapi defaults: k1=1.5, b=0.75, epsilon=0.25; its idf is "
        "log((N-df+0.5)/(df+0.5)) with a floor, not Lucene's log(1+(N-df+0.5)/(df+0.5)), "
        "so its scores (and quality) differ by design.",
    ]

    print()
    print(text_table(head, rows))
    print()
    print(text_table(ratio_head, ratio_rows))
    print()
    for line in legend + notes:
        print("- " + line)
    print()
    for k, v in info.items():
        print(f"{k}: {v}")

    if str(args.out) != "-":
        cmd = "python benchmarks/bm25_scifact.py" + (
            f" --queries {args.queries}" if args.queries else "")
        if args.repeats != 3:
            cmd += f" --repeats {args.repeats}"
        lines = header_lines("BM25 on SciFact: ragmark vs bm25s vs rank_bm25", info, cmd)
        lines += md_table(head, rows) + [""] + ["Ratios against bm25s:", ""]
        lines += md_table(ratio_head, ratio_rows) + [""]
        lines += ["- " + line for line in legend + notes] + [""]
        write_results(args.out, lines)


if __name__ == "__main__":
    main()
