from __future__ import annotations

import pytest

import ragmark
from ragmark.matching import Matcher, grade_ranking, to_graded
from ragmark.metrics.evaluate import compute_all
from ragmark.types import Chunk, GroundTruth

PASSAGE = "Metformin is contraindicated in patients with severe renal impairment."


def test_text_containment_needs_twenty_characters_after_normalising():
    m = Matcher(GroundTruth(passages=(PASSAGE, "short one")))
    chunk = Chunk("c", "d", "Intro.  METFORMIN is contraindicated\nin patients with severe renal "
                  "impairment. More text.")
    assert m.match(chunk).targets == ("passage 1",)
    assert m.match(Chunk("c2", "d", "short one")) is None  # 9 chars: too short to count
    # the chunk inside the passage also matches (shorter contained in longer)
    assert m.match(Chunk("c3", "d", "contraindicated in patients")).targets == ("passage 1",)


def test_sections_match_chunks_of_that_section_and_whole_documents():
    m = Matcher(GroundTruth(sections=(("paper", 2),)))
    assert m.match(Chunk("a", "paper", "x", section=2)).rule == "section"
    assert m.match(Chunk("b", "paper", "x", section=1)) is None
    assert m.match(Chunk("c", "paper", "x", section=None)) is not None
    assert m.match(Chunk("d", "other", "x", section=2)) is None


def test_document_unit_ranks_a_document_at_its_best_chunk_and_recall_counts_targets():
    truth = GroundTruth(doc_grades={"a": 1, "b": 2})
    chunks = [Chunk("a#0", "a", "t"), Chunk("x#0", "x", "t"), Chunk("a#1", "a", "t"),
              Chunk("b#0", "b", "t")]
    scores = [0.9, 0.95, 0.8, 0.1]
    by_doc = grade_ranking(truth, chunks, scores, "document")
    assert [(i.rank, i.id) for i in by_doc] == [(1, "x"), (2, "a"), (3, "b")]
    by_chunk = grade_ranking(truth, chunks, scores, "chunk")
    assert [i.id for i in by_chunk] == ["x#0", "a#0", "a#1", "b#0"]
    assert [i.new_targets for i in by_chunk] == [(), ("a",), (), ("b",)]
    grades = Matcher(truth).target_grades()
    j = to_graded(["q"], [grades], [by_chunk])
    vals = compute_all(j, ["precision@3", "recall@3", "recall@4", "mrr", "map"])
    assert vals["precision@3"][0] == pytest.approx(2 / 3)  # both chunks of a count
    assert vals["recall@3"][0] == 0.5  # but a is one target
    assert vals["recall@4"][0] == 1.0
    assert vals["mrr"][0] == 0.5
    assert vals["map"][0] == pytest.approx((1 / 2 + 2 / 4) / 2)
    # per document the same run is exactly what trec_eval sees
    jd = to_graded(["q"], [grades], [by_doc])
    expect = ragmark.evaluate({"q": {"a": 1, "b": 2}}, {"q": {"x": 0.95, "a": 0.9, "b": 0.1}},
                              ["map", "ndcg@3", "mrr"])
    got = compute_all(jd, ["map", "ndcg@3", "mrr"])
    assert {k: float(v[0]) for k, v in got.items()} == pytest.approx(expect, abs=1e-12)


def test_ties_rank_by_id_descending():
    truth = GroundTruth(doc_grades={"a": 1})
    items = grade_ranking(truth, [Chunk("a", "a", "t"), Chunk("b", "b", "t")], [0.5, 0.5])
    assert [i.id for i in items] == ["b", "a"]
