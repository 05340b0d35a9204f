"""Two public sets whose answers people labelled as supported by their sources or not,
read as items of benchmarks/judges_vs_ragas.py (faithfulness only). Nothing is committed:
each file is read from where the user put it (by default benchmarks/.cache/data/, which
git ignores). Nothing happens at import.

BEGIN (Dziri, Rashkin, Linzen and Reitter, "Evaluating Attribution in Dialogue Systems:
The BEGIN Benchmark", TACL 2022), https://github.com/google/BEGIN-dataset, file
``wow/begin_test_wow.tsv``: responses of four dialogue models to Wizard-of-Wikipedia
turns, each with the knowledge sentence it should rest on and a label by people ("Fully
attributable", "Not fully attributable", "Generic"). Licence: CC BY 4.0 (the
conversations and knowledge from Facebook's Wizard of Wikipedia, CC BY 4.0 too). An
item: the previous turn is the question, the response the answer, the knowledge
sentence the one context; supported when people said "Fully attributable"; "Generic"
responses are left out.

WiCE (Kamoi, Goyal, Rodriguez and Durrett, "WiCE: Real-World Entailment for Claims in
Wikipedia", EMNLP 2023), https://github.com/ryokamoi/wice, file
``data/entailment_retrieval/claim/test.jsonl``: sentences of Wikipedia articles with the
web page they cite, labelled by people as supported, partially supported or not
supported by it. Licence: annotations ODC-BY 1.0; the claims are Wikipedia text (CC
BY-SA 4.0); the cited pages come from Common Crawl (its terms of use). An item: the
claim is the answer, "What does Wikipedia say about TITLE?" the question, the cited
page's sentences cut into passages of up to 500 characters the contexts (only pages of
at most ``MAX_PAGE`` characters, to fit a small model's window); supported when people
said "supported", not when they said "partially supported" or "not supported" (the
claim is then not fully supported, as BEGIN's "Not fully attributable"); the unsupported
items are all the "not supported" ones that qualify (12 at 4,000 characters) and
"partially supported" ones for the rest.

Both sets are sampled the same way: the items that qualify in file order, shuffled with
a fixed seed, the first ``n / 2`` supported and ``n / 2`` not supported.
"""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path
from typing import Any

MAX_PAGE = 4000
"""WiCE pages longer than this many characters are left out."""
PASSAGE_CHARS = 500


def balanced(rows: list[dict[str, Any]], n: int, seed: int, first: str = ""
             ) -> list[dict[str, Any]]:
    """``n / 2`` supported and ``n / 2`` unsupported items, a fixed seed's shuffle of
    each (unsupported items labelled ``first`` taken before the others); a set with too
    few of either is an error naming how many it has."""
    pos = [r for r in rows if r["supported"]]
    neg = [r for r in rows if not r["supported"]]
    half = n // 2
    if len(pos) < half or len(neg) < n - half:
        raise SystemExit(f"asked for {half} supported and {n - half} unsupported items; "
                         f"the set has {len(pos)} and {len(neg)}")
    rng = random.Random(seed)
    rng.shuffle(pos)
    rng.shuffle(neg)
    neg.sort(key=lambda r: r["label"] != first)  # stable: the shuffle within each
    chosen = pos[:half] + neg[:n - half]
    chosen.sort(key=lambda r: r["id"])
    return chosen


def begin_items(path: Path, n: int, seed: int = 0) -> list[dict[str, Any]]:
    """BEGIN's Wizard-of-Wikipedia test file as items (see the module's text)."""
    rows: list[dict[str, Any]] = []
    with path.open(encoding="utf-8", newline="") as f:
        for line, row in enumerate(csv.DictReader(f, delimiter="\t"), start=2):
            label = (row.get("begin_label") or "").strip()
            if label not in ("Fully attributable", "Not fully attributable"):
                continue
            rows.append({"id": f"begin{line:05d}", "question": row["message"].strip(),
                         "answer": row["response"].strip(),
                         "contexts": [row["knowledge"].strip()],
                         "supported": label == "Fully attributable", "label": label,
                         "truth": {"faithfulness": float(label == "Fully attributable")}})
    return balanced(rows, n, seed)


def wice_items(path: Path, n: int, seed: int = 0) -> list[dict[str, Any]]:
    """WiCE's claim-level test file as items (see the module's text)."""
    rows: list[dict[str, Any]] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        r = json.loads(line)
        sentences = [" ".join(s.split()) for s in r["evidence"] if s.strip()]
        if len(" ".join(sentences)) > MAX_PAGE:
            continue
        title = r["meta"].get("claim_title") or "this subject"
        rows.append({"id": f"wice-{r['meta']['id']}",
                     "question": f"What does Wikipedia say about {title}?",
                     "answer": " ".join(r["claim"].split()),
                     "contexts": passages(sentences), "supported": r["label"] == "supported",
                     "label": r["label"],
                     "truth": {"faithfulness": float(r["label"] == "supported")}})
    return balanced(rows, n, seed, first="not_supported")


def passages(sentences: list[str], limit: int = PASSAGE_CHARS) -> list[str]:
    """Whole sentences gathered in order into passages of up to ``limit`` characters
    (a longer sentence is a passage of its own)."""
    out: list[str] = []
    for s in sentences:
        if out and len(out[-1]) + 1 + len(s) <= limit:
            out[-1] += " " + s
        else:
            out.append(s)
    return out
