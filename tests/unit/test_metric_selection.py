"""One metric selection for run and compare (issue 49, item 3): ``--metrics`` and
``--judge-metrics`` read once, in plan/selection.py."""

from __future__ import annotations

import pytest

from ragmark.errors import ConfigError, UnknownComponentError
from ragmark.plan.selection import select


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
    from ragmark.plan.selection import thresholds

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
    from ragmark.plan.selection import judges_asked

    sel = select("mrr,context_relevance,faithfulness", "faithfulness,answer_relevance")
    got = judges_asked(sel, ["answer_correctness", "mrr", "faithfulness"],
                       ["grounded_ratio", "context_precision"])
    assert got == ["faithfulness", "answer_relevance", "context_relevance",
                   "answer_correctness", "context_precision"]
