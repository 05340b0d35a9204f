"""BM25 at scale on a synthetic BEIR-like corpus: ragmark vs bm25s (numpy and numba
backends), in the same run, each system in its own fresh interpreter.

The corpus (seeded): a Zipf vocabulary of 50,000 pseudo-words (exponent 1.07), documents
of 60 tokens drawn from it; 1,000 questions of 8 words drawn from one random document,
which is the question's one relevant document. Sizes: 50k, 200k and 1M documents by
default (``--sizes``).

Per system: index seconds, the pause of the first retrieval call (numba compiles then),
steady-state questions per second (after the first call), peak memory (RSS over the
start), and nDCG@10 with pytrec_eval. ``ragmark`` is ``BM25Retriever`` (the same
tokenizer as bm25s: lowercase, stop-words en, no stemming here since the words are
synthetic) and ``ragmark-run`` is ``ragmark.running.runner.run`` on the same data end to end.
Ratios are printed against bm25s-numba (the anchor of issue 12). ``--help`` for options.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from _env import (
    RESULTS,
    PeakRSS,
    emit,
    header_lines,
    machine_info,
    md_table,
    run_worker,
    text_table,
    to_run,
    write_results,
)

SYSTEMS = ("ragmark", "ragmark-run", "bm25s-numpy", "bm25s-numba")
DISTS = ("ragmark", "bm25s", "numba", "numpy", "pytrec-eval-terrier")
VOCAB, EXPONENT, DOC_LEN, Q_LEN, N_QUESTIONS, K = 50_000, 1.07, 60, 8, 1_000, 10
_LETTERS = "bcdfghjklmnpqrtvwxz"  # no vowels, no 's': the stemmer leaves them alone


def _word(i: int) -> str:
    out = []
    i += 1
    while i:
        i, r = divmod(i, len(_LETTERS))
        out.append(_LETTERS[r])
    return "zq" + "".join(out)


def synthetic(n_docs: int, seed: int = 0) -> dict[str, Any]:
    """Documents, questions (8 words of one document) and qrels, seeded."""
    rng = np.random.default_rng(seed)
    ranks = np.arange(1, VOCAB + 1, dtype=np.float64)
    p = ranks ** -EXPONENT
    p /= p.sum()
    words = np.array([_word(i) for i in range(VOCAB)])
    tokens = rng.choice(VOCAB, size=(n_docs, DOC_LEN), p=p)
    docs = [" ".join(words[row]) for row in tokens]
    rel = rng.choice(n_docs, size=N_QUESTIONS, replace=False)
    picks = np.array([rng.choice(tokens[d], size=Q_LEN, replace=False) for d in rel])
    questions = [" ".join(words[row]) for row in picks]
    doc_ids = [f"d{i}" for i in range(n_docs)]
    qids = [f"q{i}" for i in range(N_QUESTIONS)]
    qrels = {q: {doc_ids[int(d)]: 1} for q, d in zip(qids, rel, strict=True)}
    return {"docs": docs, "doc_ids": doc_ids, "questions": questions, "qids": qids,
            "qrels": qrels}


def _bm25s(data: dict[str, Any], backend: str) -> tuple[Any, Any]:
    import bm25s

    def index() -> Any:
        model = bm25s.BM25(k1=1.5, b=0.75, method="lucene",
                           backend="numba" if backend == "numba" else "numpy")
        model.index(bm25s.tokenize(data["docs"], stopwords="en", show_progress=False),
                    show_progress=False)
        return model

    def retrieve(model: Any, questions: list[str]) -> tuple[np.ndarray, np.ndarray]:
        toks = bm25s.tokenize(questions, stopwords="en", show_progress=False)
        docs, scores = model.retrieve(toks, k=K, show_progress=False, n_threads=0,
                                      backend_selection=backend)
        return np.asarray(docs, dtype=np.int64), np.asarray(scores, dtype=np.float32)

    return index, retrieve


def _ragmark(data: dict[str, Any]) -> tuple[Any, Any]:
    import bm25s  # noqa: F401  (imported before the measurement, as for bm25s itself)

    from ragmark.retrieval.bm25 import BM25Retriever
    from ragmark.types import Chunk

    chunks = [Chunk(f"{d}#0", d, t) for d, t in zip(data["doc_ids"], data["docs"],
                                                     strict=True)]

    def index() -> Any:
        r = BM25Retriever(stemmer="none")
        r.index(chunks)
        return r

    def retrieve(r: Any, questions: list[str]) -> tuple[np.ndarray, np.ndarray]:
        return r.retrieve(questions, K)  # type: ignore[no-any-return]

    return index, retrieve


def _ragmark_run(data: dict[str, Any]) -> dict[str, Any]:
    """``ragmark run --config sparse`` end to end (in memory: the dataset object the
    BEIR loader would make), retrieval only, without the stemmer (the bm25s rows do not
    stem: the same tokens); its own timings."""
    from ragmark.config import RunConfig, load_config
    from ragmark.running.runner import run
    from ragmark.running.task import Task
    from ragmark.types import Corpus, Dataset, Document, GroundTruth, Sample

    docs = tuple(Document(d, t) for d, t in zip(data["doc_ids"], data["docs"], strict=True))
    samples = tuple(Sample(q, text, GroundTruth(doc_grades=data["qrels"][q]))
                    for q, text in zip(data["qids"], data["questions"], strict=True))
    ds = Dataset("synthetic", "", "beir", samples, Corpus(docs))
    gc.collect()
    with PeakRSS() as mem:
        sparse = load_config("sparse").model_dump(mode="json", exclude_none=True)
        sparse["retriever"]["stemmer"] = "none"  # tokenized as the bm25s rows: no stemmer
        cfg = RunConfig.model_validate(sparse)
        report = run(ds, cfg, Task(["ndcg@10"], skip_generation=True, latency_sample=1,
                                   index_cache=False))
    t = report.timings
    rest_s = t["retrieve_s"] - t["latency_p50_ms"] / 1000
    return {"index_s": t["index_s"], "first_call_s": t["latency_p50_ms"] / 1000,
            "qps": (len(samples) - 1) / rest_s, "rss_mib": mem.delta_mib,
            "ndcg10": float(report.value("ndcg@10") or 0.0)}


def worker(name: str, n_docs: int, seed: int) -> dict[str, Any]:
    data = synthetic(n_docs, seed)
    if name == "ragmark-run":
        return _ragmark_run(data)
    index, retrieve = _ragmark(data) if name == "ragmark" else _bm25s(
        data, name.split("-")[1])
    gc.collect()
    with PeakRSS() as mem:
        t0 = time.perf_counter()
        state = index()
        t1 = time.perf_counter()
        first = retrieve(state, data["questions"][:1])
        t2 = time.perf_counter()
        rest = retrieve(state, data["questions"][1:])
        t3 = time.perf_counter()
    ids = np.vstack([first[0], rest[0]])
    scores = np.vstack([first[1], rest[1]])
    import pytrec_eval

    run = to_run(data["qids"], data["doc_ids"], ids, scores)
    ev = pytrec_eval.RelevanceEvaluator(data["qrels"], {"ndcg_cut.10"}).evaluate(run)
    ndcg = float(np.mean([ev[q]["ndcg_cut_10"] if q in ev else 0.0 for q in data["qids"]]))
    return {"index_s": t1 - t0, "first_call_s": t2 - t1,
            "qps": (len(data["questions"]) - 1) / (t3 - t2), "rss_mib": mem.delta_mib,
            "ndcg10": ndcg}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="50000,200000,1000000",
                    help="Corpus sizes, comma-separated.")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--systems", default=",".join(SYSTEMS))
    ap.add_argument("--output", default=str(RESULTS / "scale_bm25.md"))
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--n-docs", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        emit(worker(args.worker, args.n_docs, args.seed))
        return
    info = machine_info(DISTS)
    rows, md_rows = [], []
    for size in (int(s) for s in args.sizes.split(",")):
        got = {}
        for name in args.systems.split(","):
            print(f"{size:,} documents: {name} ...", file=sys.stderr, flush=True)
            got[name] = run_worker(Path(__file__), ["--worker", name, "--n-docs", str(size),
                                                    "--seed", str(args.seed)])
        anchor, plain = got.get("bm25s-numba"), got.get("bm25s-numpy")
        for name, r in got.items():
            ratio = "" if anchor is None else f"{r['qps'] / anchor['qps']:.2f}x"
            index = "" if plain is None else f"{r['index_s'] / plain['index_s']:.2f}x"
            rss = "" if plain is None else f"{r['rss_mib'] / plain['rss_mib']:.2f}x"
            row = [f"{size:,}", name, f"{r['index_s']:.1f}", index, f"{r['first_call_s']:.2f}",
                   f"{r['qps']:,.0f}", ratio, f"{r['rss_mib']:,.0f}", rss,
                   f"{r['ndcg10']:.4f}"]
            rows.append(row)
            md_rows.append(row)
    head = ["documents", "system", "index s", "index vs bm25s-numpy", "first call s",
            "q/s (steady)", "q/s vs bm25s-numba", "peak RSS MiB", "RSS vs bm25s-numpy",
            "nDCG@10"]
    print(text_table(head, rows))
    command = "python benchmarks/scale_bm25.py " + " ".join(sys.argv[1:])
    lines = header_lines("BM25 at scale: ragmark vs bm25s (numpy, numba)", info,
                         command.strip())
    lines += ["", f"Synthetic corpus: Zipf vocabulary of {VOCAB:,} words (exponent "
              f"{EXPONENT}), {DOC_LEN} tokens a document; {N_QUESTIONS:,} questions of "
              f"{Q_LEN} words drawn from one document (its one relevant document); top "
              f"{K}; seed {args.seed}. Each system in a fresh interpreter; 'first call' is "
              "the first one-question retrieval (numba compiles there); q/s over the other "
              "999 questions in one batch. 'ragmark' is the BM25 retriever alone; "
              "'ragmark-run' is `ragmark run --config sparse` (stemmer off, as for the "
              "other rows) end to end (chunking, "
              "indexing, retrieval with its first question timed alone, matching, "
              "metrics; index and q/s from its own timings, peak memory of it all).", ""]
    lines += md_table(head, md_rows)
    write_results(Path(args.output), lines)


if __name__ == "__main__":
    main()
