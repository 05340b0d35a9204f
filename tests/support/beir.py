"""A small BEIR folder whose qrels judge two documents relevant and six not relevant per
question, from a seeded random word corpus (tests of bpref, judged@k and pooling)."""

from __future__ import annotations

import json
import random
from pathlib import Path

WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "theta", "kappa", "lambda",
         "sigma", "omega", "rho", "tau", "phi", "chi", "psi"]


def beir_folder(root: Path, seed: int = 3) -> tuple[Path, dict[str, dict[str, int]]]:
    rng = random.Random(seed)
    docs = {f"d{i}": " ".join(rng.choices(WORDS, k=30)) for i in range(60)}
    queries = {f"q{i}": " ".join(rng.choices(WORDS, k=4)) for i in range(25)}
    qrels: dict[str, dict[str, int]] = {}
    for q in queries:
        judged = rng.sample(sorted(docs), 8)
        qrels[q] = {d: (rng.choice([1, 2]) if i < 2 else 0) for i, d in enumerate(judged)}
    root.mkdir(parents=True)
    (root / "corpus.jsonl").write_text("\n".join(
        json.dumps({"_id": d, "title": "", "text": t}) for d, t in docs.items()) + "\n")
    (root / "queries.jsonl").write_text("\n".join(
        json.dumps({"_id": q, "text": t}) for q, t in queries.items()) + "\n")
    (root / "qrels").mkdir()
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(
        f"{q}\t{d}\t{g}\n" for q, j in qrels.items() for d, g in j.items()))
    return root, qrels


FRUIT = {"d1": "apples grow in the orchard", "d2": "pears ripen in autumn",
         "d3": "bananas are yellow"}


def tiny_beir(root: Path, queries: dict[str, str], qrels: dict[str, dict[str, int]],
              docs: dict[str, str] = FRUIT) -> Path:
    """A hand-made BEIR folder: ``docs`` (id -> text), ``queries`` (id -> text) and
    ``qrels`` (query -> document -> grade), for hand-worked values."""
    root.mkdir()
    (root / "corpus.jsonl").write_text("".join(
        json.dumps({"_id": d, "title": "", "text": t}) + "\n" for d, t in docs.items()))
    (root / "queries.jsonl").write_text("".join(
        json.dumps({"_id": q, "text": t}) + "\n" for q, t in queries.items()))
    (root / "qrels").mkdir()
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(
        f"{q}\t{d}\t{g}\n" for q, j in qrels.items() for d, g in j.items()))
    return root
