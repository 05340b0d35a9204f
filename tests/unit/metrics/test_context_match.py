"""The ``similarity:T`` context match rule (issue 33, item 20): a retrieved context
matches a ground-truth passage when 1 - the normalised Levenshtein distance of the two
texts (as given) is at least T, as RAGAS's ``NonLLMContextRecall`` and
``NonLLMContextPrecisionWithReference`` count it (ragas 0.4.3, metrics/_context_recall.py
and _context_precision.py, with ``NonLLMStringSimilarity``'s default Levenshtein)."""

from __future__ import annotations

import json

import pytest
from support.cli import run_cli

pytest.importorskip("rapidfuzz")

REF1 = "The cat sat on the mat."  # 23 characters
REF2 = "Dogs bark loudly at night in the city."
RE_CHUNKED = "The cat sat on a mat."  # "the" -> "a": 3 edits; 1 - 3/23 = 0.8696
OTHER = "Parrots can mimic human speech quite well."


def _log(tmp_path):
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps({"id": "q", "question": "Where did the cat sit?",
                               "answer": "On a mat.", "contexts": [RE_CHUNKED, OTHER],
                               "ground_truth_contexts": [REF1, REF2]}) + "\n")
    return log


def _run(tmp_path, capsys, *extra):
    out = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--outputs", str(_log(tmp_path)), "--metrics",
                            "recall@2,precision@2,hit@2", "--output", str(out), "--no-history",
                            "--quiet", *extra], capsys)
    return code, err, (json.loads(out.read_text()) if code in (0, 1) else None)


def test_a_re_chunked_context_counts_under_the_similarity_rule(tmp_path, capsys):
    """Hand-worked: RE_CHUNKED is 0.8696 similar to REF1 (>= 0.5: a match), and no
    context is 0.5 similar to REF2 (0.37 and 0.29 for the two texts; OTHER lower). So
    recall@2 = 1/2, precision@2 = 1/2, hit@2 = 1; containment finds neither (neither text
    holds the other): 0, 0, 0."""
    from ragmark.matching import similarity

    assert similarity(REF1, RE_CHUNKED) == pytest.approx(1 - 3 / 23)
    assert max(similarity(REF2, c) for c in (RE_CHUNKED, OTHER)) < 0.5
    code, err, data = _run(tmp_path, capsys)
    assert data["per_query"]["q"] == {"recall@2": 0.0, "precision@2": 0.0, "hit@2": 0.0}
    code, err, data = _run(tmp_path, capsys, "--context-match", "similarity:0.5")
    assert code == 0, err
    assert data["per_query"]["q"] == {"recall@2": 0.5, "precision@2": 0.5, "hit@2": 1.0}
    assert data["config"]["context_match"] == "similarity:0.5"  # recorded
    code, err, data = _run(tmp_path, capsys, "--context-match", "similarity:0.9")
    assert data["per_query"]["q"]["recall@2"] == 0.0  # 0.8696 is under 0.9


@pytest.mark.parametrize("rule", ["similar", "similarity:0", "similarity:1.5",
                                  "similarity:x"])
def test_a_bad_rule_is_an_error_before_any_work(tmp_path, capsys, rule):
    code, err, _ = _run(tmp_path, capsys, "--context-match", rule)
    assert code == 2 and "--context-match" in err and "similarity:T" in err


ROWS = [([RE_CHUNKED, OTHER], [REF1, REF2]), ([OTHER], [REF1]), ([REF1, REF2], [REF2, REF1])]
"""(retrieved contexts, reference contexts) rows."""


def _recalls(tmp_path, capsys, rows) -> list[float]:
    """ragmark's recall over every retrieved context of each row under similarity:0.5."""
    log = tmp_path / "rows.jsonl"
    log.write_text("\n".join(json.dumps({"id": f"q{i}", "question": f"q{i}?", "answer": "a",
                                         "contexts": c, "ground_truth_contexts": r})
                             for i, (c, r) in enumerate(rows)) + "\n")
    out = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--outputs", str(log), "--metrics", "recall@5",
                            "--context-match", "similarity:0.5", "--output", str(out),
                            "--no-history", "--quiet"], capsys)
    assert code == 0, err
    ours = json.loads(out.read_text())["per_query"]
    return [ours[f"q{i}"]["recall@5"] for i in range(len(rows))]


def test_recall_equals_ragas_non_llm_context_recall(tmp_path, capsys, ragas_home):
    """With the real library (ragas 0.4.3, in the dev extra: CI runs this): ragmark's
    recall over every retrieved context under similarity:0.5 equals NonLLMContextRecall
    row by row."""
    ragas = pytest.importorskip("ragas")
    from ragas.dataset_schema import SingleTurnSample
    from ragas.metrics import NonLLMContextRecall

    metric = NonLLMContextRecall()
    theirs = [metric.single_turn_score(SingleTurnSample(retrieved_contexts=c,
                                                        reference_contexts=r))
              for c, r in ROWS]
    assert _recalls(tmp_path, capsys, ROWS) == pytest.approx(theirs), ragas.__version__


def test_recall_equals_what_ragas_gave_on_the_same_rows(tmp_path, capsys):
    """The values ragas 0.4.3's NonLLMContextRecall gave on these rows (computed here on
    2026-11-26 in an environment with ragas 0.4.3, rapidfuzz 3.14 and
    langchain-community<0.4, which CI cannot install beside the adapters' versions):
    the three rows above and the two of tests/unit/data/foreign/ragas_outputs.jsonl
    (written by ragas). ragmark's recall over every retrieved context under
    similarity:0.5 is the same row by row."""
    from pathlib import Path

    foreign = Path(__file__).resolve().parents[1] / "data" / "foreign" / "ragas_outputs.jsonl"
    rows = ROWS + [(o["retrieved_contexts"], o["reference_contexts"])
                   for o in map(json.loads, foreign.read_text().splitlines())]
    ragas_0_4_3 = [0.5, 0.0, 1.0, 1.0, 1.0]
    assert _recalls(tmp_path, capsys, rows) == ragas_0_4_3
