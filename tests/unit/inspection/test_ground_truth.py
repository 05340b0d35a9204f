"""The results JSON keeps each question's ground truth when details are included, named
as the retrieved items' targets are."""

from __future__ import annotations

import json

from ragmark.config import load_config
from ragmark.data import load_dataset
from ragmark.demo import demo_path
from ragmark.results.codec import ground_truth_json
from ragmark.results.codec import run_to_json as report_json
from ragmark.running.runner import run
from ragmark.running.task import Task
from ragmark.types import GroundTruth, Sample


def test_each_kind_of_ground_truth_is_compact_json():
    ids = Sample("q", "?", GroundTruth(doc_grades={"a.txt": 2, "b.txt": 0}),
                 expected_keywords=("k1", "k2"))
    assert ground_truth_json(ids) == {"kind": "ids", "targets": {"a.txt": 2},
                                      "expected_keywords": ["k1", "k2"]}
    sections = Sample("q", "?", GroundTruth(sections=(("d1", 3), ("d2", 0))))
    assert ground_truth_json(sections) == {
        "kind": "sections", "targets": {"d1 section 3": 1, "d2 section 0": 1}}
    passages = Sample("q", "?", GroundTruth(passages=("first passage",)),
                      expected_answer="yes")
    assert ground_truth_json(passages) == {
        "kind": "passages", "targets": {"passage 1": 1}, "passages": ["first passage"],
        "expected_answer": "yes"}
    assert ground_truth_json(Sample("q", "?")) == {"kind": "none", "targets": {}}


def test_run_writes_the_ground_truth_only_with_details(tmp_path):
    items = [{"question": "When should metformin be avoided?",
              "ground_truth_contexts": ["Metformin is contraindicated in severe renal "
                                        "impairment."],
              "expected_answer": "In severe renal impairment."}]
    p = tmp_path / "set.json"
    p.write_text(json.dumps(items))
    report = run(load_dataset(p), load_config("sparse"), Task(["recall@5"], skip_generation=True))
    assert "queries" not in report_json(report)
    q = report_json(report, include_details=True)["queries"][0]
    assert q["ground_truth"] == {
        "kind": "passages", "targets": {"passage 1": 1},
        "passages": ["Metformin is contraindicated in severe renal impairment."],
        "expected_answer": "In severe renal impairment."}
    assert q["retrieved"][0]["targets"] == ["passage 1"]  # the same names
    assert json.loads(json.dumps(q)) == q


def test_demo_run_records_the_grounding_files_and_keywords():
    ds = load_dataset(demo_path() / "questions.json", demo_path() / "corpus")
    report = run(ds, load_config("sparse"), Task(["mrr"], max_queries=8, skip_generation=True))
    truths = [q["ground_truth"] for q in report_json(report, True)["queries"]]
    assert truths[7] == {"kind": "ids",
                         "targets": {"hybrid_search.txt": 1, "rag_pipeline.txt": 1},
                         "expected_keywords": ["reorder", "cross-encoder", "accurate"]}
