"""The agent metrics (issue 50, item 4): trajectory match equal to LangChain agentevals'
evaluators (``agentevals.trajectory.match.create_trajectory_match_evaluator``, v0.0.9)
on random trajectories in its four modes and its argument modes; the tool-name and
argument measures worked by hand."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmark.case import Case, Output
from ragmark.data.files import Where
from ragmark.data.trajectories import trajectory_of
from ragmark.metrics import agent
from ragmark.metrics.names import catalogue
from ragmark.trajectory import Call, Expected, ToolRun, Trajectory, Turn
from ragmark.types import Sample

W = Where("t.jsonl", line=1)
TOOLS = ("search", "lookup", "calc")


def _messages(turns: list[list[tuple[str, dict]]]) -> list[dict]:
    """OpenAI messages: the question, each turn's calls and their results, the answer."""
    out: list[dict] = [{"role": "user", "content": "q?"}]
    n = 0
    for calls in turns:
        ids = [f"c{n + i}" for i in range(len(calls))]
        n += len(calls)
        out.append({"role": "assistant", "content": "", "tool_calls": [
            {"id": cid, "type": "function",
             "function": {"name": name, "arguments": json.dumps(args)}}
            for cid, (name, args) in zip(ids, calls, strict=True)]})
        out += [{"role": "tool", "tool_call_id": cid, "content": "r"} for cid in ids]
    out.append({"role": "assistant", "content": "done"})
    return out


def _case(turns: list[list[tuple[str, dict]]], expected: Expected | None) -> Case:
    trajectory = trajectory_of({"messages": _messages(turns)}, W)
    return Case(Sample("q1", "q?", expected_calls=expected), "done",
                output=Output("done", trajectory=trajectory))


def _expected(turns: list[list[tuple[str, dict]]], args: str = "exact",
              overrides: dict | None = None) -> Expected:
    return Expected(tuple(Call(n, a) for calls in turns for n, a in calls), args,
                    overrides or {})


def _value(name: str, case: Case) -> float | None:
    return catalogue()[name].compute(case).value  # type: ignore[misc]


ARGS = st.dictionaries(st.sampled_from(["q", "k", "lang"]), st.integers(0, 2), max_size=2)
CALL = st.tuples(st.sampled_from(TOOLS), ARGS)
MODES = ("exact", "ignore", "subset", "superset")


def _turns(single: bool) -> st.SearchStrategy:
    size = st.integers(1, 1) if single else st.integers(1, 3)
    return st.lists(size.flatmap(lambda n: st.lists(CALL, min_size=n, max_size=n)),
                    max_size=4)


@settings(max_examples=150, deadline=None)
@given(made=_turns(False), wanted=_turns(False), args=st.sampled_from(MODES),
       override=st.sampled_from([None, "ignore", ["q"], "subset"]))
def test_order_free_modes_equal_agentevals(made, wanted, args, override):
    from agentevals.trajectory.match import create_trajectory_match_evaluator

    overrides = {} if override is None else {"search": override}
    case = _case(made, _expected(wanted, args, overrides))
    for mode in ("unordered", "subset", "superset"):
        evaluator = create_trajectory_match_evaluator(
            trajectory_match_mode=mode, tool_args_match_mode=args,
            tool_args_match_overrides=overrides or None)
        theirs = evaluator(outputs=_messages(made), reference_outputs=_messages(wanted))
        assert _value(f"trajectory_{mode}", case) == float(theirs["score"]), mode


@settings(max_examples=150, deadline=None)
@given(made=_turns(True), wanted=_turns(True), args=st.sampled_from(MODES))
def test_strict_equals_agentevals_when_each_turn_asks_for_one_call(made, wanted, args):
    from agentevals.trajectory.match import create_trajectory_match_evaluator

    evaluator = create_trajectory_match_evaluator(trajectory_match_mode="strict",
                                                  tool_args_match_mode=args)
    theirs = evaluator(outputs=_messages(made), reference_outputs=_messages(wanted))
    assert _value("trajectory_strict", _case(made, _expected(wanted, args))) == float(
        theirs["score"])


def test_the_name_and_argument_measures_by_hand():
    """Made: search(q=1), search(q=1) (a repeat), calc(x=2) failing; expected:
    search(q=1), lookup(id=7). Names: overlap {search: 1} -> precision 1/3, recall 1/2,
    F1 2*1/(3+2) = 0.4; arguments: search matched, lookup not -> 1/2; efficiency 2/3;
    errors 1 of 3 ran; one repeated call."""
    made = Trajectory((
        Turn("", (Call("search", {"q": 1}, "a"), Call("search", {"q": 1}, "b"))),
        ToolRun(Call("search", None, "a", result="r", asked=False, ran=True)),
        ToolRun(Call("search", None, "b", result="r", asked=False, ran=True)),
        Turn("", (Call("calc", {"x": 2}, "c"),)),
        ToolRun(Call("calc", None, "c", error="division by zero", asked=False, ran=True)),
        Turn("the answer")))
    expected = Expected((Call("search", {"q": 1}), Call("lookup", {"id": 7})))
    case = Case(Sample("q1", "q?", expected_calls=expected), "the answer",
                output=Output("the answer", trajectory=made))
    got = {m: _value(m, case) for m in (
        "tool_precision", "tool_recall", "tool_f1", "tool_argument_accuracy",
        "step_efficiency", "tool_calls", "tool_error_rate", "repeated_calls",
        "trajectory_superset", "trajectory_subset")}
    assert got == pytest.approx({
        "tool_precision": 1 / 3, "tool_recall": 0.5, "tool_f1": 0.4,
        "tool_argument_accuracy": 0.5, "step_efficiency": 2 / 3, "tool_calls": 3.0,
        "tool_error_rate": 1 / 3, "repeated_calls": 1.0, "trajectory_superset": 0.0,
        "trajectory_subset": 0.0})


def test_missing_with_the_reason():
    no_expectation = _case([[("search", {"q": 1})]], None)
    score = catalogue()["tool_recall"].compute(no_expectation)  # type: ignore[misc]
    assert score.value is None and score.reason == agent.NO_EXPECTED
    assert _value("tool_calls", no_expectation) == 1.0  # the trajectory alone needs none
    no_trajectory = Case(Sample("q1", "q?", expected_calls=Expected(())), "a",
                         output=Output("a"))
    for name in ("trajectory_strict", "tool_calls", "tool_error_rate"):
        score = catalogue()[name].compute(no_trajectory)  # type: ignore[misc]
        assert score.value is None and score.reason == agent.NO_TRAJECTORY
    silent = _case([], Expected(()))  # no call made, none expected
    assert _value("tool_f1", silent) == 1.0 and _value("step_efficiency", silent) == 1.0
    assert _value("trajectory_strict", silent) == 1.0
    for name, reason in (("tool_precision", agent.NO_CALLS),
                         ("tool_recall", agent.NONE_EXPECTED),
                         ("tool_error_rate", agent.NONE_RAN)):
        score = catalogue()[name].compute(silent)  # type: ignore[misc]
        assert score.value is None and score.reason == reason
    wanted = _case([], _expected([[("search", {})]]))  # expected a call, made none
    assert _value("tool_f1", wanted) == 0.0 and _value("tool_recall", wanted) == 0.0


def test_arguments_that_are_not_json_match_only_when_ignored():
    case = Case(Sample("q1", "q?", expected_calls=Expected((Call("s", {}),), "exact")), "a",
                output=Output("a", trajectory=Trajectory((Turn("", (Call("s", None,
                                                                         raw="{oops"),)),))))
    assert _value("trajectory_strict", case) == 0.0
    loose = Case(Sample("q1", "q?", expected_calls=Expected((Call("s", {}),), "ignore")),
                 "a", output=case.output)
    assert _value("trajectory_strict", loose) == 1.0


def test_directions_and_scales_are_in_the_catalogue():
    specs = catalogue()
    assert specs["tool_error_rate"].better == "lower" and specs["tool_error_rate"].bounded
    assert specs["tool_calls"].better == "lower" and not specs["tool_calls"].bounded
    assert specs["trajectory_strict"].better == "higher"


def test_bfcl_style_rules_by_hand():
    """tool_args_match rules: each argument's acceptable values, "" when optional; the
    Berkeley Function Calling Leaderboard checker's normalisation of strings."""
    from ragmark.metrics.arg_rules import matches, normalised

    rules = {"city": ["San Francisco", "SF"], "unit": ["celsius", ""], "days": [3],
             "coords": [[37.77, -122.42]]}
    assert normalised("San Francisco, CA") == "sanfranciscoca"
    assert matches({"city": "san-francisco", "days": 3.0, "coords": [37.77, -122.42]}, rules)
    assert matches({"city": "SF", "unit": "Celsius", "days": 3, "coords": [37.77, -122.42]},
                   rules)
    assert not matches({"city": "Oakland", "days": 3, "coords": [37.77, -122.42]}, rules)
    assert not matches({"city": "SF", "coords": [37.77, -122.42]}, rules)  # days required
    assert not matches({"city": "SF", "days": 3, "coords": [37.77, -122.42], "x": 1}, rules)
    assert not matches({"city": "SF", "days": 3, "coords": [-122.42, 37.77]}, rules)
    assert not matches({"city": "SF", "days": "3", "coords": [37.77, -122.42]}, rules)
    # float noise passes, a different number does not, however large (BFCL's
    # simple_python_38: the constant 8.99e9 given as 8990000007 is wrong)
    assert matches({"x": 0.1 + 0.2}, {"x": [0.3]})
    assert not matches({"x": 8990000007.0}, {"x": [8990000000.0]})
    # through the metrics, both directions: made calls matched against the rules
    expected = Expected((Call("weather", rules),), "rules")
    made = {"city": "SF", "days": 3, "coords": [37.77, -122.42]}
    case = Case(Sample("q1", "q?", expected_calls=expected), "a", output=Output(
        "a", trajectory=Trajectory((Turn("", (Call("weather", made),)),))))
    for name in ("trajectory_strict", "trajectory_unordered", "trajectory_subset",
                 "trajectory_superset", "tool_argument_accuracy"):
        assert _value(name, case) == 1.0, name


def test_rules_need_lists_of_acceptable_values():
    from ragmark.data.trajectories import expected_of
    from ragmark.errors import DataError

    with pytest.raises(DataError) as e:
        expected_of({"expected_tool_calls": [{"name": "w", "arguments": {"city": "SF"}}],
                     "tool_args_match": "rules"}, W)
    assert e.value.field == "expected_tool_calls[0].arguments.city"
    got = expected_of({"expected_tool_calls": [{"name": "w", "arguments": {"city": "SF"}}],
                       "tool_args_overrides": {"v": "rules"}}, W)  # another tool's rules
    assert got is not None and got.args == "exact"
