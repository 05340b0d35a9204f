"""One results model (issue 21, item 3): a run's report, a comparison and a label run
round-trip with their JSON exactly (ragmark.results.codec, ragmark.passage_labels): JSON ->
model -> JSON gives the same JSON, on generated values (hypothesis) and on real results
files."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.beir import beir_folder
from support.cli import run_cli

from ragmark.errors import DataError
from ragmark.results.codec import (
    compare_from_json,
    compare_to_json,
    run_from_json,
    run_to_json,
)
from ragmark.results.comparison import Comparison, StatSettings
from ragmark.results.model import (
    QUERY_FIELDS,
    Aggregate,
    EmptyRankings,
    QueryRecord,
    RetrievedRecord,
    RunReport,
)
from ragmark.stats import ComparisonRow, Interval
from ragmark.types import Score

text = st.text(min_size=1, max_size=12)
finite = st.floats(allow_nan=False, allow_infinity=False, width=64)
plain = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), finite, text)
details = st.dictionaries(text.filter(lambda k: k not in ("value", "reason")), plain,
                          max_size=2)
json_values = st.recursive(plain, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(text, inner, max_size=3)), max_leaves=8)
source_keys = st.one_of(text, st.sampled_from(sorted(QUERY_FIELDS)))
"""A source's field names, the built-in ones among them: kept apart under ``recorded``."""
names = st.sampled_from(["mrr@10", "recall@5", "faithfulness", "groundedness", "ndcg@10"])


@st.composite
def scores(draw):
    if draw(st.booleans()):
        return Score.missing(draw(text), **draw(details))
    extra = draw(details)
    return Score(draw(finite), details=extra) if extra else Score(draw(finite))


@st.composite
def queries(draw, qid):
    retrieved = [RetrievedRecord(i + 1, draw(text), draw(text), draw(finite),
                                 draw(st.integers(0, 3)),
                                 tuple(draw(st.lists(text, max_size=2))),
                                 draw(st.one_of(st.none(), text)))
                 for i in range(draw(st.integers(0, 3)))]
    truth = draw(st.one_of(st.none(), st.fixed_dictionaries(
        {"kind": st.sampled_from(["ids", "passages", "none"]),
         "targets": st.dictionaries(text, st.integers(1, 3), max_size=2)})))
    return QueryRecord(qid, draw(text), retrieved, draw(st.one_of(st.none(), text)),
                       draw(st.dictionaries(names, scores(), max_size=3)),
                       draw(st.lists(text, max_size=2)), ground_truth=truth,
                       trajectory=draw(st.one_of(st.none(), st.lists(
                           st.fixed_dictionaries({"kind": st.just("tool"),
                                                  "name": text}), max_size=2))),
                       recorded=draw(st.dictionaries(source_keys, json_values, max_size=4)))


def aggregates():
    return st.builds(Aggregate, st.one_of(st.none(), finite), st.integers(0, 50),
                     st.integers(0, 50), st.dictionaries(text, st.integers(1, 9), max_size=2))


@st.composite
def reports(draw):
    ids = draw(st.lists(text, min_size=1, max_size=4, unique=True))
    metrics = draw(st.dictionaries(names, aggregates(), max_size=4))
    empty = None
    if draw(st.booleans()):
        means = {m: draw(finite) for m in metrics}
        empty = EmptyRankings(tuple(draw(st.lists(text, max_size=2))), draw(text),
                              len(ids), {m: Aggregate(v, 3, 0, {}) for m, v in means.items()},
                              {m: Aggregate(v, 2, 0, {}) for m, v in means.items()})
    return RunReport(
        config={"name": draw(text), "top_k": draw(st.integers(1, 50))},
        dataset={"name": draw(text), "hash": draw(text)}, metrics=metrics,
        queries=[draw(queries(i)) for i in ids],
        timings={"total_s": round(draw(st.floats(0, 1e4)), 4)},
        notes=draw(st.lists(text, max_size=2)),
        llm=draw(st.dictionaries(st.sampled_from(["calls", "cached"]), st.integers(0, 9))),
        short_metrics=draw(st.dictionaries(names, st.integers(1, 9), max_size=1)),
        short_rankings=draw(st.dictionaries(st.integers(1, 20), st.integers(1, 9),
                                            max_size=2)),
        corrected=draw(st.dictionaries(st.just("faithfulness"),
                                       st.fixed_dictionaries({"estimate": finite}))),
        executor=draw(st.sampled_from([{}, {"name": "local"}])), empty=empty,
        at_depth=draw(st.dictionaries(st.just("mrr"), st.just("mrr@10"))),
        gated=draw(GATED))


GATED = st.sampled_from([None, {"gates": [{"config": "sparse", "baseline": None, "rows": []}]},
                         {"gates": [{"config": "sparse", "baseline": "run 3", "rows": [
                             {"metric": "mrr@10", "delta": -0.1, "verdict": "worse"}]}],
                          "trend": {"sparse": {"mrr@10": [{"run": 3, "value": 0.5, "n": 9}]}}}])
"""The regression gates' blocks as a results file records them."""


def _as_file(data):
    return json.loads(json.dumps(data, allow_nan=False))


def _read_back(to_json, from_json, value, details):
    """``value`` written as JSON and read back; writing what was read gives the same
    JSON."""
    written = _as_file(to_json(value, details))
    again = from_json(written)
    assert _as_file(to_json(again, details)) == written
    return again


@settings(max_examples=150, deadline=None)
@given(reports(), st.booleans())
def test_json_report_json_is_exact(report, details):
    again = _read_back(run_to_json, run_from_json, report, details)
    # and the report read back holds what was written
    assert again.metrics == report.metrics and again.notes == report.notes
    assert [q.id for q in again.queries] == [q.id for q in report.queries]
    if details:
        assert again.queries == report.queries
    assert again.empty == report.empty and again.short_rankings == report.short_rankings
    assert again.gated == report.gated


def _written_by(args, path, tmp_path, capsys):
    """The results file a command wrote, on a BEIR folder of 25 questions."""
    root, _ = beir_folder(tmp_path / "beir")
    code, _, _ = run_cli([args[0], "--dataset", str(root), *args[1:], "--include-details",
                          "--no-history", "--quiet"], capsys)
    assert code == 0
    return json.loads(path.read_text())


def test_a_real_results_file_round_trips(tmp_path, capsys):
    out = tmp_path / "r.json"
    data = _written_by(["run", "--output", str(out), "--metrics", "mrr,recall@5,ndcg@10"],
                       out, tmp_path, capsys)
    report = run_from_json(data, str(out))
    assert report.value("mrr") == data["metrics"]["mrr@10"] and len(report.queries) == 25
    assert _as_file(run_to_json(report, include_details=True)) == data


def test_a_file_that_is_not_a_run_is_a_clear_error():
    with pytest.raises(DataError, match="x.json: not a run's results"):
        run_from_json({"configs": {}}, "x.json")


def test_a_malformed_question_names_its_place():
    """Every reader of results (inspect, review, the report's checks, diff) reads through
    the codec, and gets the same errors: file, question or config, field, expected."""
    cases = [
        (run_from_json, {"queries": [{"id": 3}]},
         "r.json, item queries[0], field 'id': expected a string, got 3"),
        (run_from_json, {"per_query": {"q1": {"mrr": "high"}}},
         "r.json, field 'per_query.q1.mrr': expected a number, null or an object with "
         "'value', got \"high\""),
        (compare_from_json, {"configs": {"a": {"per_query": {"q1": []}}}},
         "r.json, item configs.a, field 'per_query.q1': expected an object, got a list"),
    ]
    for read, data, message in cases:
        with pytest.raises(DataError) as e:
            read(data, "r.json")
        assert str(e.value) == message
    # a missing value without a recorded reason reads as missing with reason None, and
    # is written back as it was
    report = run_from_json({"per_query": {"q1": {"mrr": None, "ndcg@10": 0.5}}}, "r.json")
    (q,) = report.queries
    assert q.metrics["mrr"].value is None and q.metrics["mrr"].reason is None
    assert q.metrics["ndcg@10"].value == 0.5
    assert run_to_json(report)["per_query"] == {"q1": {"mrr": None, "ndcg@10": 0.5}}


@st.composite
def comparisons(draw):
    named = draw(st.lists(text, min_size=1, max_size=3, unique=True))
    runs = {n: draw(reports()) for n in named}
    intervals = {n: {m: draw(st.one_of(st.none(), st.builds(
        Interval, finite, finite, st.just(float("nan")), st.integers(0, 9),
        st.just(0.95), st.sampled_from(["", "few values"])))) for m in r.metrics}
        for n, r in runs.items()}
    rows = [ComparisonRow(n, draw(names), draw(st.one_of(st.none(), finite)),
                          draw(st.one_of(st.none(), finite)),
                          draw(st.one_of(st.none(), finite)),
                          p := draw(st.one_of(st.none(), st.floats(0, 1))),
                          None if p is None else draw(st.floats(0, 1)), draw(st.booleans()),
                          draw(st.integers(0, 30)), "permutation", draw(names),
                          draw(st.integers(0, 4))) for n in named[1:]]
    settings = StatSettings(seed=draw(st.integers(0, 9)),
                            correction=draw(st.sampled_from(["per-metric", "all", "none"])))
    return Comparison(runs, named[0], draw(st.lists(names, max_size=2)), intervals, rows,
                      settings, draw(text), draw(st.sampled_from([{}, {"name": "local"}])),
                      gated=draw(GATED))


@settings(max_examples=60, deadline=None)
@given(comparisons(), st.booleans())
def test_json_comparison_json_is_exact(comparison, details):
    again = _read_back(compare_to_json, compare_from_json, comparison, details)
    assert again.rows == comparison.rows and again.settings == comparison.settings
    assert again.gated == comparison.gated
    assert list(again.reports) == list(comparison.reports)


def test_a_real_compare_file_round_trips(tmp_path, capsys):
    data = _written_by(["compare", "--configs", "sparse", "--output", str(tmp_path / "eval"),
                        "--resamples", "200"], tmp_path / "eval.json", tmp_path, capsys)
    result = compare_from_json(data)
    assert list(result.reports) == ["sparse"] and result.settings.n_resamples == 200
    assert _as_file(compare_to_json(result, include_details=True)) == data


@st.composite
def label_runs(draw):
    """Generated ``ragmark label`` results: per config, questions with labelled passages
    (1, 0 or a failed label with its reason), per-question metrics and their means."""
    from ragmark.passage_labels import ConfigLabels, LabelRun
    from ragmark.passage_labels.metrics import Agreement
    from ragmark.passage_labels.tops import LabelledItem, LabelledQuery

    label = st.one_of(st.sampled_from([Score(1.0), Score(0.0)]),
                      text.map(lambda r: Score.missing(r)))
    metric = st.sampled_from(["judged_precision@1", "relative_recall@2", "answer_presence@1"])
    agreement = st.one_of(st.none(), st.builds(Agreement, *(st.integers(0, 9),) * 4))
    configs = {}
    for name in draw(st.lists(text, min_size=1, max_size=2, unique=True)):
        qs = [LabelledQuery(
            f"q{i}", draw(text.filter(str.strip)),  # a dataset's questions are never blank
            [LabelledItem(r, draw(text), draw(text), draw(st.text(max_size=20)),
                          draw(label), draw(st.one_of(st.none(), st.integers(0, 3))))
             for r in range(1, draw(st.integers(0, 3)) + 1)],
            {m: draw(st.one_of(st.floats(0, 1).map(Score), text.map(Score.missing)))
             for m in draw(st.lists(metric, max_size=2, unique=True))},
            draw(st.one_of(st.none(), text)))
            for i in range(draw(st.integers(0, 3)))]
        means = {m: Aggregate(draw(st.one_of(st.none(), st.floats(0, 1))),
                              draw(st.integers(0, 9)), draw(st.integers(0, 9)),
                              draw(st.dictionaries(text, st.integers(1, 9), max_size=1)))
                 for m in draw(st.lists(metric, max_size=2, unique=True))}
        configs[name] = ConfigLabels(name, {"name": name}, draw(st.one_of(
            st.none(), st.integers(0, 99))), qs, means, draw(agreement))
    return LabelRun(draw(st.integers(1, 5)), {"name": draw(text), "hash": draw(text)},
                    configs, draw(agreement), {}, draw(st.one_of(st.none(), text)),
                    notes=draw(st.lists(text, max_size=2)))


@settings(max_examples=100, deadline=None)
@given(label_runs())
def test_json_label_run_json_is_exact(run):
    from ragmark.passage_labels import label_from_json, label_json

    written = _as_file(label_json(run))
    again = label_from_json(written)
    assert _as_file(label_json(again)) == written
    assert list(again.configs) == list(run.configs) and again.top_k == run.top_k


def test_a_sources_own_fields_are_kept_apart_and_read_back(tmp_path, capsys):
    """Issue 62 item 3 (and 61 item 31): a log line's fields ragmark does not read —
    ``metrics`` and ``trajectory`` among them, built-in names — are kept under
    ``recorded`` as given, never mixed with ragmark's own, and shown by ``inspect``."""
    log = tmp_path / "log.jsonl"
    line = {"id": "q1", "question": "What is BM25?", "answer": "A ranking function.",
            "contexts": [{"id": "d1", "text": "BM25 is a ranking function."}],
            "latency_breakdown": {"retrieve_ms": 12, "generate_ms": 340},
            "metrics": {"thumbs": 1}, "trajectory": "not an agent", "tier": None}
    log.write_text(json.dumps(line) + "\n")
    out = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--outputs", str(log), "--output", str(out),
                            "--include-details", "--no-history", "--quiet"], capsys)
    assert code == 0, err
    data = json.loads(out.read_text())
    (q,) = data["queries"]
    assert q["recorded"] == {"latency_breakdown": {"retrieve_ms": 12, "generate_ms": 340},
                             "metrics": {"thumbs": 1}, "trajectory": "not an agent",
                             "tier": None}
    assert "thumbs" not in q["metrics"] and "trajectory" not in q  # ragmark's own
    (back,) = run_from_json(data, str(out)).queries
    assert back.recorded == q["recorded"] and back.trajectory is None
    code, text, _ = run_cli(["inspect", str(out), "q1"], capsys)
    assert code == 0
    assert 'latency_breakdown: {"retrieve_ms": 12, "generate_ms": 340}' in text
    assert "Recorded by its source (4 fields)" in text
