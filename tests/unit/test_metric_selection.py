"""One metric selection for run and compare (issue 49, item 3): ``--metrics`` and
``--judge-metrics`` read once, in plan/metric_choice.py."""

from __future__ import annotations

import pytest

from ragmark.errors import ConfigError, UnknownComponentError
from ragmark.plan.metric_choice import select


def test_metrics_are_split_into_judges_and_the_rest_groups_expanded():
    sel = select("mrr, faithfulness,support,ndcg@5", "answer_relevance")
    assert sel.given == ("mrr", "faithfulness", "support_full", "support_partial",
                         "support_recall", "ndcg@5")
    assert [str(m) for m in sel.names or ()] == ["mrr", "ndcg@5"]
    assert sel.named_judges == ("faithfulness", "support_full", "support_partial",
                                "support_recall")
    assert sel.judges == ("answer_relevance",) and not sel.every
    # a list of names (the Python API) reads the same
    assert select(["mrr", "faithfulness"], None).named_judges == ("faithfulness",)


def test_all_and_nothing():
    every = select("ALL", None)
    assert every.every and every.given is None and every.names is None
    none = select(None, None)
    assert (none.every, none.given, none.names, none.judges) == (False, None, None, ())
    only_judges = select("faithfulness", None)
    assert only_judges.names is None and only_judges.named_judges == ("faithfulness",)


def test_unknown_names_are_refused_before_any_work():
    with pytest.raises(UnknownComponentError, match="unknown metric 'nope'"):
        select("mrr,nope", None)
    with pytest.raises(ConfigError, match="unknown judge metric 'nope'"):
        select(None, "faithfulness,nope")


def test_a_metric_kind_and_cutoff_are_enums_and_a_plugin_may_give_words():
    """Issue 49, item 2: MetricSpec.kind and cutoff are enums (str: comparisons with the
    words still hold); a plugin's words are read as them, a wrong one names the metric."""
    from ragmark.metrics.names import catalogue
    from ragmark.types import Cutoff, Kind, MetricSpec

    spec = catalogue()["ndcg"]
    assert spec.kind is Kind.RETRIEVAL and spec.kind == "retrieval"
    assert spec.cutoff is Cutoff.OPTIONAL
    given = MetricSpec("mine", "answer", "none", "a plugin's metric")
    assert given.kind is Kind.ANSWER and given.cutoff is Cutoff.NONE
    with pytest.raises(ValueError, match="metric 'bad': 'answers' is not a valid Kind"):
        MetricSpec("bad", "answers", "none", "a typo")


def test_thresholds_are_read_once_for_run_and_compare():
    """A run's threshold names no config (it has one); a compare's may, one it runs."""
    from ragmark.plan.metric_choice import thresholds

    under, most = thresholds(["P@5=0.4"], ["faithfulness=0.1"], None)
    assert [(t.config, t.metric, t.value) for t in under] == [(None, "precision@5", 0.4)]
    assert [(t.metric, t.value) for t in most] == [("faithfulness", 0.1)]
    with pytest.raises(ConfigError, match="'ragmark run' has one config"):
        thresholds(["dense:mrr=0.5"], [], None)
    under, _ = thresholds(["dense:mrr=0.5"], [], ["sparse", "dense"])
    assert (under[0].config, under[0].metric) == ("dense", "mrr")
    with pytest.raises(ConfigError, match="no config named 'hybrid'; the configs: sparse"):
        thresholds([], ["hybrid:mrr=0.5"], ["sparse"])


def test_run_and_compare_ask_the_judges_in_one_order():
    """--judge-metrics first, then the judges --metrics names, then those people labelled,
    then those the gates need; each once, the other metrics left out."""
    from ragmark.plan.metric_choice import judges_asked

    sel = select("mrr,context_relevance,faithfulness", "faithfulness,answer_relevance")
    got = judges_asked(sel, ["answer_correctness", "mrr", "faithfulness"],
                       ["grounded_ratio", "context_precision"])
    assert got == ["faithfulness", "answer_relevance", "context_relevance",
                   "answer_correctness", "context_precision"]


def test_run_and_compare_choose_by_one_rule():
    """A run is a compare of one config: the same selection, labels and gates give the
    same judges and the same metrics computed besides; a run's table is what it
    computes, a compare's what its --metrics names."""
    from ragmark.plan.metric_choice import choose

    sel = select("mrr,faithfulness", "answer_relevance")
    gates = ["grounded_ratio", "ndcg@5", "context_precision"]
    run = choose(sel, computed=sel.names, human=["answer_correctness"], gates=gates)
    cmp = choose(sel, computed=None, compared=sel.given, human=["answer_correctness"],
                 gates=gates)
    assert run.judges == cmp.judges == ("answer_relevance", "faithfulness",
                                        "answer_correctness", "context_precision")
    # a gated aggregate asks for what it summarises; a compared metric is computed too
    assert run.metrics == ("mrr",) and run.also == ("groundedness", "ndcg@5")
    assert run.compared is None
    assert cmp.metrics is None and cmp.also == ("mrr", "groundedness", "ndcg@5")
    assert cmp.compared == ("mrr", "faithfulness")
    every = choose(select("all", None), gates=gates).with_every(["mrr", "faithfulness"],
                                                                 ["faithfulness"])
    assert every.metrics == ("mrr", "faithfulness")
    assert every.judges == ("context_precision", "faithfulness")


def test_a_compare_gated_on_an_aggregate_computes_what_it_summarises(tmp_path):
    """A compare whose runs compute only exact_match, gated on grounded_ratio, computes
    groundedness for the gate, as a run does (the compare used to leave it out and the
    gate found nothing to read)."""
    import json

    from ragmark.plan import CompareRequest, execute, plan_compare

    rows = [{"id": "q1", "question": "q1?", "answer": "Mars is red.",
             "contexts": ["Mars is a red planet."], "expected_answer": "Mars is red."},
            {"id": "q2", "question": "q2?", "answer": "Blue.",
             "contexts": ["Mars is a planet."], "expected_answer": "red"}]
    logs = []
    for name in ("a", "b"):
        logs.append(tmp_path / f"{name}.jsonl")
        logs[-1].write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    data = tmp_path / "set.jsonl"
    data.write_text("\n".join(json.dumps(
        {"id": r["id"], "question": r["question"], "expected_answer": r["expected_answer"],
         "ground_truth_contexts": r["contexts"]}) for r in rows) + "\n")
    plan, _ = plan_compare(CompareRequest(
        dataset=data, outputs=logs, run_metrics=["exact_match"], metrics=["exact_match"],
        fail_under=["a:grounded_ratio=0.6"], no_history=True))
    assert plan.metrics == ("exact_match",) and plan.also == ("exact_match", "groundedness")
    out = execute(plan)
    report = out.result.reports["a"]
    assert report.metrics["grounded_ratio"].value == 0.5
    failed = [c.message for c in out.conditions if not c.passed]
    assert failed == ["config 'a': grounded_ratio = 0.5000 < 0.6 (--fail-under; over 2 "
                      "questions)"]
