"""The pairwise judge (issue 36, step 2) against the scripted server: both orders asked,
a verdict that flips with the order counted as a tie, the position-bias rate, one
order drawn from a seed, the criteria's inputs (reference, each answer's contexts), and
structured output with the exact schema."""

from __future__ import annotations

import re

import pytest
from judges_support import as_json, run

from ragmark.judges.pairwise import (
    PairVerdict,
    Side,
    judge_pair,
    one_order_first,
    position_bias,
)

PARIS, LYON = Side("Paris.", ("Paris is the capital.",)), Side("Lyon.", ("Lyon is a city.",))


def answers(body):
    user = body["messages"][-1]["content"]
    return dict(re.findall(r'<data name="(\w+_answer)">\n(.*?)\n</data>', user, re.S))


def fair(body):
    """Prefers the answer naming Paris, wherever it is shown."""
    a = answers(body)
    better = "first" if "Paris" in a["first_answer"] else (
        "second" if "Paris" in a["second_answer"] else "tie")
    return as_json({"better": better, "reason": "Paris is the capital"})


def always_first(body):
    return as_json({"better": "first", "reason": "the first is better"})


def test_a_fair_judge_is_consistent_and_a_biased_one_gives_ties(server, client):
    server.rule = fair
    got = run(client, judge_pair(client, "overall", "Capital of France?", PARIS, LYON))
    assert got.verdict == "A" and got.orders == (("A", "first"), ("B", "second"))
    assert not got.inconsistent and not got.follows_position
    assert got.reasons == ("Paris is the capital",) * 2
    firsts = [answers(r.body)["first_answer"] for r in server.requests]
    assert firsts == ["Paris.", "Lyon."]  # both orders asked
    got = run(client, judge_pair(client, "overall", "Capital of France?", LYON, PARIS))
    assert got.verdict == "B"


def test_a_verdict_that_follows_the_position_is_a_tie_and_counted(server, client):
    server.rule = always_first
    got = run(client, judge_pair(client, "overall", "Capital of France?", PARIS, LYON))
    assert got.verdict == "tie" and got.inconsistent and got.follows_position
    verdicts = [got, PairVerdict("A", (("A", "first"), ("B", "second"))),
                PairVerdict("tie", (("A", "tie"), ("B", "tie"))), PairVerdict(None)]
    assert position_bias(verdicts) == {"pairs": 3, "inconsistent": 1,
                                       "follows_position": 1, "rate": 1 / 3}
    assert position_bias([PairVerdict(None)])["rate"] is None


def test_one_order_is_drawn_from_the_seed_and_recorded(server, client):
    server.rule = fair
    first = one_order_first("q7", seed=3)
    assert first == one_order_first("q7", seed=3)  # the same seed, the same order
    assert {one_order_first(f"q{i}", 0) for i in range(20)} == {"A", "B"}
    got = run(client, judge_pair(client, "overall", "?", PARIS, LYON, firsts=(first,)))
    assert got.verdict == "A" and got.orders[0][0] == first and len(server.requests) == 1


def test_each_criterion_shows_what_it_needs_with_the_exact_schema(server, client):
    server.rule = fair
    run(client, judge_pair(client, "faithfulness", "?", PARIS, LYON, firsts=("A",)))
    body = server.requests[-1].body
    user = body["messages"][-1]["content"]
    assert '<data name="first_contexts" index="1">\nParis is the capital.\n</data>' in user
    assert '<data name="second_contexts" index="1">\nLyon is a city.\n</data>' in user
    schema = body["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["better"]["enum"] == ["first", "second", "tie"]
    run(client, judge_pair(client, "correctness", "?", PARIS, LYON, reference="Paris",
                           firsts=("A",)))
    assert '<data name="reference_answer">\nParis\n</data>' in server.requests[-1].body[
        "messages"][-1]["content"]
    asked = len(server.requests)
    missing = run(client, judge_pair(client, "correctness", "?", PARIS, LYON))
    assert missing.verdict is None and "no reference answer" in str(missing.failure)
    assert len(server.requests) == asked  # nothing asked
    with pytest.raises(ValueError, match="unknown criterion 'nicest'"):
        run(client, judge_pair(client, "nicest", "?", PARIS, LYON))


def test_a_judge_that_gives_no_usable_answer_gives_no_verdict(server, client):
    server.rule = lambda body: as_json({"better": "both", "reason": "?"})
    got = run(client, judge_pair(client, "overall", "?", PARIS, LYON))
    assert got.verdict is None and "unusable judge output" in str(got.failure)
