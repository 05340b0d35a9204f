"""The comparison Markdown for a small fixed dataset matches its golden file.

Regenerate after an intended change with ``RAGMARK_UPDATE_GOLDEN=1 pytest <this file>``
and review the diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ragmark.cli import main
from ragmark.demo.tour import demo_path

GOLDEN = Path(__file__).parent / "golden" / "compare_demo.md"


def _cli(args: list[str]) -> int:
    try:
        main(args)
    except SystemExit as e:
        return int(e.code or 0)
    return 0


def test_compare_markdown_matches_golden_file(tmp_path):
    weak = tmp_path / "weak.toml"  # small chunks, no stemming, no stop-words
    weak.write_text('[chunker]\nname = "fixed"\nsize = 120\noverlap = 0\n'
                    '[retriever]\nname = "bm25"\nstemmer = "none"\nstopwords = "none"\n'
                    'k1 = 3.0\nb = 1.0\n')
    chunky = tmp_path / "chunky.toml"  # judged per chunk: several relevant chunks per file
    chunky.write_text('unit = "chunk"\n[chunker]\nname = "fixed"\nsize = 120\noverlap = 0\n')
    out = tmp_path / "res" / "eval"
    args = ["compare", "--dataset", str(demo_path() / "questions.json"), "--corpus",
            str(demo_path() / "corpus"), "--configs", "sparse", str(weak), str(chunky),
            "--metrics", "mrr,precision@5", "--output", str(out), "--quiet"]
    code = _cli(args)
    assert code == 0
    md = (tmp_path / "res" / "eval.md").read_text(encoding="utf-8")
    # timings change from run to run: everything before them is fixed
    fixed, _, timings = md.partition("### Latency and cost")
    assert "| sparse |" in timings and "| chunky |" in timings
    if os.environ.get("RAGMARK_UPDATE_GOLDEN"):
        GOLDEN.write_text(fixed, encoding="utf-8")
    assert fixed == GOLDEN.read_text(encoding="utf-8")
    data = json.loads((tmp_path / "res" / "eval.json").read_text(encoding="utf-8"))
    assert data["run"]["seed"] == 0 and len(data["run"]["dataset_hash"]) == 64
    assert data["configs"]["chunky"]["timings"]["latency_p95_ms"] > 0
    sig = {(c["config"], c["metric"]) for c in data["comparisons"] if c["significant"]}
    assert sig == {("chunky", "precision@5")}  # 8 of 8 questions better: exact p = 2/256
    # same command again: the same numbers (seeded resampling)
    assert _cli(args) == 0
    again = (tmp_path / "res" / "eval.md").read_text(encoding="utf-8")
    assert again.partition("### Latency and cost")[0] == fixed
