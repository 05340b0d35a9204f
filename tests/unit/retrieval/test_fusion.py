"""Fusion and normalisation on hand-made runs, and the laws they keep."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmark.errors import ConfigError
from ragmark.matching import trec_order
from ragmark.retrieval.fusion import (
    normalise_scores,
    rrf,
    rrf_arrays,
    weighted_sum,
    weighted_sum_arrays,
)

R1 = {"q1": {"a": 3.0, "b": 2.0, "c": 1.0}, "q2": {"x": 1.0}}
R2 = {"q1": {"c": 0.9, "a": 0.5, "d": 0.1}, "q3": {"y": 2.0, "z": 1.0}}


def test_rrf_hand_worked_scores_and_order() -> None:
    fused = rrf([R1, R2], k=60)
    assert list(fused) == ["q1", "q2", "q3"]
    q1 = fused["q1"]
    assert list(q1) == ["a", "c", "b", "d"]
    assert q1["a"] == pytest.approx(1 / 61 + 1 / 62, abs=1e-15)
    assert q1["c"] == pytest.approx(1 / 63 + 1 / 61, abs=1e-15)
    assert q1["b"] == pytest.approx(1 / 62, abs=1e-15)  # missing from R2: adds nothing
    assert q1["d"] == pytest.approx(1 / 63, abs=1e-15)
    assert fused["q2"] == {"x": 1 / 61}  # query in one run only
    assert fused["q3"] == {"y": 1 / 61, "z": 1 / 62}


def test_rrf_ranks_inputs_like_trec_eval_ties_by_id_descending() -> None:
    # equal scores (and scores equal in float32) rank by id descending: c, b, a
    run = {"q": {"a": 1.0, "b": 1.0 + 1e-9, "c": 1.0}}
    fused = rrf([run, {"q": {}}], k=1)
    assert fused["q"] == {"c": 1 / 2, "b": 1 / 3, "a": 1 / 4}


def test_rrf_fused_ties_ordered_by_id_descending() -> None:
    fused = rrf([{"q": {"a": 2.0, "b": 1.0}}, {"q": {"b": 2.0, "a": 1.0}}])
    assert fused["q"]["a"] == fused["q"]["b"]
    assert list(fused["q"]) == ["b", "a"]


def test_rrf_weights_and_depth() -> None:
    fused = rrf([R1, R2], k=60, weights=[1.0, 3.0], depth=2)
    q1 = fused["q1"]
    # a: 1/61 + 3/62; c: 1/63 + 3/61; d: 3/63; b: 1/62
    assert list(q1) == ["c", "a"]
    assert q1["c"] == pytest.approx(1 / 63 + 3 / 61, abs=1e-15)
    assert q1["a"] == pytest.approx(1 / 61 + 3 / 62, abs=1e-15)
    assert fused["q3"] == {"y": 3 / 61, "z": 3 / 62}


def test_zero_weight_run_adds_nothing_but_its_items_appear() -> None:
    fused = rrf([R1, R2], weights=[1.0, 0.0])
    assert fused["q1"]["d"] == 0.0
    assert list(fused["q1"])[:3] == ["a", "b", "c"]


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: rrf([R1]), "at least 2 runs"),
        (lambda: rrf([R1, R2], weights=[1.0]), "1 weights for 2 runs"),
        (lambda: rrf([R1, R2], k=0), "k must be"),
        (lambda: rrf([R1, R2], k=-5), "k must be"),
        (lambda: rrf([R1, R2], depth=0), "depth"),
        (lambda: rrf([R1, R2], depth=2.5), "depth"),  # type: ignore[arg-type]
        (lambda: rrf([R1, R2], weights=[1.0, -1.0]), "weights must be"),
        (lambda: rrf([R1, R2], weights=[0.0, 0.0]), "weights must be"),
        (lambda: weighted_sum([R1, R2], norm="softmax"), "unknown score normalisation"),
        (lambda: weighted_sum([R1], norm="minmax"), "at least 2 runs"),
        (lambda: normalise_scores([1.0], "l2"), "known: minmax, zscore, max, none"),
    ],
)
def test_bad_arguments_raise_config_error(call, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        call()


def test_inputs_are_not_mutated() -> None:
    r1, r2 = copy.deepcopy(R1), copy.deepcopy(R2)
    rrf([r1, r2], depth=1)
    weighted_sum([r1, r2], norm="zscore", depth=1)
    assert (r1, r2) == (R1, R2)


def test_weighted_sum_minmax_hand_worked() -> None:
    fused = weighted_sum([R1, R2], weights=[0.6, 0.4])
    # R1 q1 minmax: a 1, b .5, c 0;  R2 q1: c 1, a .5, d 0
    assert fused["q1"] == pytest.approx({"a": 0.8, "b": 0.3, "c": 0.4, "d": 0.0}, abs=1e-15)
    assert list(fused["q1"]) == ["a", "c", "b", "d"]
    assert fused["q2"] == {"x": 0.6}  # one item: constant run -> 1.0, weighted
    assert fused["q3"] == {"y": 0.4, "z": 0.0}


def test_weighted_sum_other_norms() -> None:
    runs = [{"q": {"a": 4.0, "b": 2.0}}, {"q": {"b": 1.0, "c": 3.0}}]
    assert weighted_sum(runs, norm="none")["q"] == {"a": 4.0, "c": 3.0, "b": 3.0}
    assert list(weighted_sum(runs, norm="none")["q"]) == ["a", "c", "b"]  # tie: id descending
    by_max = weighted_sum(runs, norm="max")["q"]
    assert by_max == pytest.approx({"a": 1.0, "b": 0.5 + 1 / 3, "c": 1.0})
    z = weighted_sum(runs, norm="zscore")["q"]
    assert z == pytest.approx({"a": 1.0, "b": -2.0, "c": 1.0})
    assert list(z) == ["c", "a", "b"]


def test_normalise_scores_edge_cases() -> None:
    assert normalise_scores([], "minmax").shape == (0,)
    assert normalise_scores([5.0], "minmax").tolist() == [1.0]
    assert normalise_scores([2.0, 2.0], "minmax").tolist() == [1.0, 1.0]
    assert normalise_scores([2.0, 2.0], "zscore").tolist() == [0.0, 0.0]
    assert normalise_scores([0.1, 0.1, 0.1], "zscore").tolist() == [0.0, 0.0, 0.0]
    assert normalise_scores([1.0, 3.0], "zscore").tolist() == [-1.0, 1.0]
    assert normalise_scores([0.0, 0.0], "max").tolist() == [0.0, 0.0]
    assert normalise_scores([2.0, 4.0], "max").tolist() == [0.5, 1.0]
    assert normalise_scores([-4.0, -2.0], "max").tolist() == [-1.0, -0.5]  # order kept
    assert normalise_scores([-1.0, 7.0], "none").tolist() == [-1.0, 7.0]
    assert normalise_scores([-3.0, 1.0, -1.0], "minmax").tolist() == [0.0, 1.0, 0.5]
    with pytest.raises(ValueError, match="finite"):
        normalise_scores([1.0, float("nan")], "minmax")


def test_arrays_match_hand_worked_rrf_with_padding() -> None:
    # items: 0=a 1=b 2=c 3=d; R1 q1 and R2 q1 as above, second query empty in run 2
    i1 = np.array([[0, 1, 2], [3, -1, -1]])
    s1 = np.array([[3.0, 2.0, 1.0], [1.0, -np.inf, -np.inf]], dtype=np.float32)
    i2 = np.array([[2, 0, 3], [-1, -1, -1]])
    s2 = np.array([[0.9, 0.5, 0.1], [-np.inf] * 3])
    idx, sc = rrf_arrays([i1, i2], [s1, s2], k=60)
    assert idx.tolist() == [[0, 2, 1, 3], [3, -1, -1, -1]]
    assert sc[0] == pytest.approx([1 / 61 + 1 / 62, 1 / 63 + 1 / 61, 1 / 62, 1 / 63])
    assert sc[1, 0] == 1 / 61 and np.isneginf(sc[1, 1:]).all()
    idx, _ = rrf_arrays([i1, i2], [s1, s2], depth=2)
    assert idx.tolist() == [[0, 2], [3, -1]]


def test_arrays_reject_misshapen_input() -> None:
    with pytest.raises(ValueError, match="same shape"):
        rrf_arrays([np.full((2, 3), -1), np.full((1, 3), -1)], [np.zeros((2, 3)), np.zeros((1, 3))])
    with pytest.raises(ValueError, match="twice"):
        rrf_arrays([np.array([[1, 1]]), np.array([[0, 1]])], [np.ones((1, 2))] * 2)
    with pytest.raises(ConfigError, match="score arrays"):
        rrf_arrays([np.zeros((1, 1))] * 2, [np.zeros((1, 1))] * 3)


# --- laws ------------------------------------------------------------------------------

IDS = [f"d{i:02d}" for i in range(12)]
scores_st = st.one_of(
    st.sampled_from([0.0, 0.5, 1.0, 2.0]),  # many ties
    st.floats(-100, 100, allow_nan=False, allow_subnormal=False),
)
query_st = st.dictionaries(st.sampled_from(IDS), scores_st, max_size=8)
run_st = st.dictionaries(st.sampled_from(["q1", "q2", "q3"]), query_st, min_size=1, max_size=3)


@settings(max_examples=60, deadline=None)
@given(ids=st.lists(st.sampled_from(IDS), unique=True), data=st.data())
def test_trec_order_is_trec_evals(ids: list[str], data: st.DataObject) -> None:
    """The one trec_order (matching, fusion, TREC files) against the rule written out:
    float32 score descending, then document id descending."""
    scores = data.draw(st.lists(scores_st, min_size=len(ids), max_size=len(ids)))
    s32 = np.asarray(scores, dtype=np.float32)
    by_id = sorted(range(len(ids)), key=lambda i: ids[i], reverse=True)
    expected = sorted(by_id, key=lambda i: -float(s32[i]))  # stable: ties keep id order
    assert trec_order(ids, scores).tolist() == expected


@settings(max_examples=60, deadline=None)
@given(run=run_st, k=st.sampled_from([1, 60]))
def test_fusing_a_run_with_itself_keeps_its_order(run: dict, k: int) -> None:
    before = copy.deepcopy(run)
    for fused in (rrf([run, run], k=k), weighted_sum([run, run], norm="none")):
        for qid, items in run.items():
            ids = list(items)
            expected = [ids[p] for p in trec_order(ids, list(items.values()))]
            assert list(fused[qid]) == expected
    assert run == before


def _to_arrays(runs: list[dict], qids: list[str]) -> tuple[list, list]:
    indices, scores = [], []
    for run in runs:
        width = max([len(run.get(q, {})) for q in qids] + [1])
        ir = np.full((len(qids), width), -1)
        sr = np.full((len(qids), width), -np.inf)
        for row, q in enumerate(qids):
            for col, (item, s) in enumerate(run.get(q, {}).items()):
                ir[row, col], sr[row, col] = IDS.index(item), s
        indices.append(ir)
        scores.append(sr)
    return indices, scores


@settings(max_examples=60, deadline=None)
@given(
    runs=st.lists(run_st, min_size=2, max_size=3),
    norm=st.sampled_from(["minmax", "zscore", "max", "none"]),
    depth=st.sampled_from([None, 1, 3]),
)
def test_array_versions_equal_dict_versions(runs: list[dict], norm: str, depth) -> None:
    qids = ["q1", "q2", "q3"]
    indices, scores = _to_arrays(runs, qids)
    weights = [1.0, 0.5, 2.0][: len(runs)]
    tie = np.arange(len(IDS))  # IDS are sorted, so index order is id order
    cases = [
        (rrf(runs, weights=weights, depth=depth), rrf_arrays(indices, scores, 60, weights, depth)),
        (
            weighted_sum(runs, weights, norm, depth),
            weighted_sum_arrays(indices, scores, weights, norm, depth, tie),
        ),
    ]
    for fused, (idx, sc) in cases:
        for row, q in enumerate(qids):
            got = {IDS[i]: s for i, s in zip(idx[row], sc[row], strict=True) if i >= 0}
            want = fused.get(q, {})
            assert list(got) == list(want)
            assert list(got.values()) == pytest.approx(list(want.values()), abs=1e-12)
