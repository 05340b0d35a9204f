"""The HTML report's render time, file size and first paint in Chromium, for compares of
3 configs x 300, 1,000 and 5,000 questions with every question's details.

The results are real: a seeded synthetic BEIR-like corpus (Zipf vocabulary, 20,000
documents of 60 tokens; each question 8 words of one document, its one relevant
document) run through ``ragmark.running.compare`` with three BM25 configs (k1 = 0.9, 1.5, 2.0),
top 10, and its JSON with details. Measured: ``render`` seconds (the page from the
JSON), the file size, and the first contentful paint of the page opened from disk in
headless Chromium (Debian's ``chromium``, through playwright). The goals (issue 13):
3 x 1,000 renders in under 5 s and paints in under 2 s.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _env import RESULTS, header_lines, machine_info, md_table, text_table, write_results

DISTS = ("ragmark", "bm25s", "playwright")
N_DOCS, VOCAB, DOC_LEN, Q_LEN = 20_000, 30_000, 60, 8


def dataset(n_questions: int, seed: int = 0):  # type: ignore[no-untyped-def]
    from ragmark.types import Corpus, Dataset, Document, GroundTruth, Sample

    rng = np.random.default_rng(seed)
    p = np.arange(1, VOCAB + 1, dtype=float) ** -1.07
    p /= p.sum()
    words = np.array([f"zq{i:x}" for i in range(VOCAB)])
    tokens = rng.choice(VOCAB, size=(N_DOCS, DOC_LEN), p=p)
    docs = tuple(Document(f"d{i}", " ".join(words[row])) for i, row in enumerate(tokens))
    rel = rng.choice(N_DOCS, size=n_questions, replace=False)
    samples = tuple(
        Sample(f"q{i}", " ".join(words[rng.choice(tokens[d], size=Q_LEN, replace=False)]),
               GroundTruth(doc_grades={f"d{d}": 1}))
        for i, d in enumerate(rel))
    return Dataset("synthetic", "", "beir", samples, Corpus(docs))


def measure(n: int, chromium: str | None) -> dict[str, float]:
    from ragmark.config import RunConfig
    from ragmark.report.html import render
    from ragmark.results import envelope
    from ragmark.results.codec import compare_to_json as comparison_json
    from ragmark.running.compare import compare
    from ragmark.running.task import Task

    ds = dataset(n)
    cfgs = [RunConfig.model_validate({"name": f"k1={k1}", "retriever": {
        "name": "bm25", "k1": k1, "stemmer": "none"}}) for k1 in (0.9, 1.5, 2.0)]
    c = compare(ds, cfgs, Task(["ndcg@10", "recall@10", "mrr"], skip_generation=True,
                               latency_sample=1, index_cache=False))
    data = comparison_json(c, include_details=True)
    data["envelope"] = envelope("compare", c.dataset_hash, {})
    t0 = time.perf_counter()
    page = render(data)
    render_s = time.perf_counter() - t0
    out = {"render_s": render_s, "mib": len(page.encode()) / 2**20, "paint_ms": float("nan")}
    if chromium:
        from playwright.sync_api import sync_playwright

        with tempfile.TemporaryDirectory() as tmp:
            f = Path(tmp) / "report.html"
            f.write_text(page, encoding="utf-8")
            with sync_playwright() as p:
                b = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
                pg = b.new_page()
                pg.goto(f.as_uri())
                fcp = "performance.getEntriesByName('first-contentful-paint')"
                pg.wait_for_function(f"() => {fcp}.length > 0", timeout=60_000)
                out["paint_ms"] = float(pg.evaluate(f"() => {fcp}[0].startTime"))
                b.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="300,1000,5000")
    ap.add_argument("--output", default=str(RESULTS / "html_report.md"))
    args = ap.parse_args()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    info = machine_info(DISTS)
    rows = []
    for n in (int(s) for s in args.sizes.split(",")):
        print(f"{n:,} questions x 3 configs ...", file=sys.stderr, flush=True)
        r = measure(n, chromium)
        rows.append([f"{n:,}", "3", f"{r['render_s']:.2f}", f"{r['mib']:.1f}",
                     "-" if np.isnan(r["paint_ms"]) else f"{r['paint_ms']:.0f}"])
    head = ["questions", "configs", "render s", "file MiB", "first paint ms (Chromium)"]
    print(text_table(head, rows))
    lines = header_lines("HTML report: render time, size and first paint", info,
                         "python benchmarks/html_report.py " + " ".join(sys.argv[1:]))
    lines += ["", f"Compares of three BM25 configs on a synthetic corpus of {N_DOCS:,} "
              "documents, top 10, every question's details in the page (contexts clipped "
              "to 600 characters); render = `ragmark.report.html.render` from the JSON; "
              "first paint = first contentful paint of the file in headless Chromium.", ""]
    lines += md_table(head, rows)
    write_results(Path(args.output), lines)


if __name__ == "__main__":
    main()
