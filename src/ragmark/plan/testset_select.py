"""``ragmark testset select SET --budget N --metric M``: the N questions whose mean
predicts the whole set's for the configs the run history ran on SET, written as a set
ragmark reads (a JSON or JSON Lines set with ids: the chosen items as they are; a BEIR
folder: its corpus, the chosen queries and their qrels), with how well the choice does
measured by leaving configs out beside a random subset of the same size
(:mod:`ragmark.analysis.anchors`). Everything is read and checked before anything is
written."""

from __future__ import annotations

import json
import math
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ragmark.analysis.anchors import choose, left_out, separated_pairs
from ragmark.data.detect import load_dataset
from ragmark.data.fingerprint import dataset_hash
from ragmark.data.leniency import Leniency
from ragmark.data.sets import read_items
from ragmark.errors import ConfigError
from ragmark.plan.paths import check_output
from ragmark.plan.testset_check import CheckRequest, from_history

RANDOM_SEEDS = 10
"""A random subset's measure is averaged over this many seeds."""


@dataclass(frozen=True)
class SelectRequest:
    """``ragmark testset select``'s flags."""

    dataset: str
    budget: int | str
    metric: str
    output: str
    corpus: str | None = None
    split: str = "test"
    method: str = "stratified"
    history: str | None = None
    seed: int = 0
    strict: bool = False
    encoding: str | None = None


def select(req: SelectRequest) -> dict[str, Any]:
    """Choose, measure, write; the report."""
    share = _share(req.budget)
    ds = load_dataset(req.dataset, req.corpus, req.split,
                      Leniency(strict=req.strict, encoding=req.encoding))
    metric, by_config = from_history(CheckRequest(req.dataset, history=req.history,
                                                  metric=req.metric), dataset_hash(ds))
    configs = sorted(by_config)
    ids = [s.id for s in ds.samples
           if all(by_config[c].get(s.id) is not None for c in configs)]
    budget = share if isinstance(share, int) else max(1, math.floor(share * len(ids) + 0.5))
    if budget >= len(ids):
        raise ConfigError(f"--budget {req.budget}: the set has {len(ids)} questions every "
                          "config valued; a budget must be smaller")
    writer, out = _writer(ds.format, Path(req.dataset), {s.id for s in ds.samples},
                          req.output)
    m = np.array([[float(by_config[c][q]) for q in ids] for c in configs])
    pick = choose(m, budget, req.method, req.seed)
    chosen = [ids[i] for i in pick.indices]
    pairs = separated_pairs(m)
    measured = [left_out(m, configs, budget, req.method, req.seed, pairs)]
    if req.method != "random":
        runs = [left_out(m, configs, budget, "random", s, pairs)
                for s in range(RANDOM_SEEDS)]
        measured.append({"method": f"random (mean of {RANDOM_SEEDS} seeds)",
                         "budget": budget, "pairs_separated": len(pairs), **{
                             k: float(np.mean([r[k] for r in runs if r[k] is not None]))
                             if any(r[k] is not None for r in runs) else None
                             for k in ("mean_abs_error", "max_abs_error", "kendall_tau",
                                       "pairs_kept")}})
    written = writer(out, set(chosen), req.split)
    return {"set": req.dataset, "metric": metric, "configs": configs, "questions": len(ids),
            "budget": budget, "method": req.method, "chosen": chosen,
            "whole_set_means": {c: float(m[i].mean()) for i, c in enumerate(configs)},
            "separated_pairs": [[configs[i], configs[j]] for i, j in pairs],
            "subset_means": {c: float(m[i][list(pick.indices)].mean())
                             for i, c in enumerate(configs)},
            "left_out_configs": [{k: v for k, v in r.items() if k != "estimates"}
                                 for r in measured],
            "written": str(written)}


def _share(given: int | str) -> int | float:
    """``--budget``: a count of at least 1 (``30``), or a share of the questions above 0
    and below 100% (``10%``, as a fraction)."""
    text = str(given).strip()
    try:
        if text.endswith("%"):
            share = float(text[:-1]) / 100
            if 0 < share < 1:
                return share
        elif int(text) >= 1:
            return int(text)
    except ValueError:
        pass
    raise ConfigError(f"--budget {given}: expected a count of questions of at least 1 "
                      "(30) or a share of them between 0% and 100% (10%)")


def _writer(fmt: str, path: Path, known: set[str], output: str) -> tuple[Any, Path]:
    """How the chosen questions are written and where, checked before any work: a set
    file whose items carry the ids ragmark read (as a file of the same kind, never
    replacing one), or a BEIR folder (a new or empty folder)."""
    out = Path(output)
    if fmt == "beir" and path.is_dir():
        if out.exists() and (not out.is_dir() or any(out.iterdir())):
            raise ConfigError(f"--output {output}: a BEIR folder is written there, and it "
                              "exists and is not an empty folder; choose another path")
        check_output(out / "queries.jsonl", "--output")
        return (lambda o, chosen, split: _write_beir(path, o, chosen, split)), out
    if path.is_file() and path.suffix.lower() in (".json", ".jsonl"):
        if out.suffix.lower() != path.suffix.lower():
            raise ConfigError(f"--output {output}: the chosen items are written as the set "
                              f"is ({path.suffix}); give a name ending in {path.suffix}")
        check_output(out, "--output", overwrite=False)
        items = [raw for _, raw in read_items(path)]
        have = {str(i.get("id")) for i in items if isinstance(i, dict)}
        if not known <= have:
            raise ConfigError(f"{path}: testset select writes the chosen items as they "
                              "are, and this set's items have no ids of their own (give "
                              "each an 'id')")
        return (lambda o, chosen, split: _write_items(path, items, o, chosen)), out
    raise ConfigError(f"{path}: testset select writes ragmark's JSON or JSON Lines sets "
                      "and BEIR folders; this is neither")


def _write_items(path: Path, items: list[Any], out: Path, chosen: set[str]) -> Path:
    kept = [i for i in items if isinstance(i, dict) and str(i.get("id")) in chosen]
    out.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix.lower() == ".jsonl":
        out.write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in kept),
                       encoding="utf-8")
    else:
        out.write_text(json.dumps(kept, indent=1, ensure_ascii=False) + "\n",
                       encoding="utf-8")
    return out


def _write_beir(folder: Path, out: Path, chosen: set[str], split: str) -> Path:
    """A BEIR folder at ``out``: the corpus copied, the chosen queries, their qrels."""
    (out / "qrels").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(folder / "corpus.jsonl", out / "corpus.jsonl")
    lines = (folder / "queries.jsonl").read_text(encoding="utf-8").splitlines()
    (out / "queries.jsonl").write_text("".join(
        line + "\n" for line in lines if line.strip()
        and str(json.loads(line).get("_id")) in chosen), encoding="utf-8")
    rows = (folder / "qrels" / f"{split}.tsv").read_text(encoding="utf-8").splitlines()
    (out / "qrels" / f"{split}.tsv").write_text("".join(
        row + "\n" for n, row in enumerate(rows)
        if (n == 0 and row.startswith("query-id")) or row.split("\t")[0] in chosen),
        encoding="utf-8")
    return out
