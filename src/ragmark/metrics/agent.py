"""The agent metrics: what an agent's tool calls (its trajectory's
:meth:`~ragmark.trajectory.Trajectory.calls`) were against the calls the question
expects (``expected_tool_calls``), exact, no judge.

Trajectory match, in LangChain agentevals' four modes (``agentevals.trajectory.match``,
v0.0.9), with its argument modes (``tool_args_match``: exact, ignore, subset, superset;
per tool, ``tool_args_overrides``: a mode or the argument names compared):

- ``trajectory_superset``: every expected call is among the calls made: each expected
  call, in order, takes the first call made not yet taken with its name whose arguments
  match (``match(made, expected)``), as agentevals' ``_is_trajectory_superset`` does;
- ``trajectory_subset``: every call made is among the expected ones (the same, the roles
  swapped, so the argument rule reads ``match(expected, made)``, as agentevals does);
- ``trajectory_unordered``: both;
- ``trajectory_strict``: the same calls in the same order. agentevals compares message by
  message (roles, and each message's calls in any order within it); an expected
  trajectory given as a list of calls has no messages, so ragmark compares the two
  sequences of calls, position by position: the same value as agentevals' whenever each
  model turn asks for one call (``tests/unit/metrics/test_agent.py`` checks all four
  against agentevals on random trajectories).

Arguments that are not a JSON object match only under ``ignore``. Each is 1 or 0 a
question, so its mean is the share of questions whose trajectory matched.

By tool name (each call made and each expected counted, a name matched once per
occurrence): ``tool_precision`` (calls made whose tool was expected / calls made),
``tool_recall`` (expected calls whose tool was called / expected calls), ``tool_f1``;
``tool_argument_accuracy`` (expected calls matched by a call of that tool with matching
arguments, one to one in order, / expected calls); ``step_efficiency`` (expected calls /
calls made, at most 1). Of the trajectory alone: ``tool_calls`` (how many),
``tool_error_rate`` (calls that failed / calls that ran) and ``repeated_calls`` (calls
identical, name and arguments, to an earlier one).

A metric is missing with its reason when the question expects nothing
(``expected_tool_calls`` absent), when its source recorded no trajectory, or when its
denominator is empty (no call made, none expected, none ran).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace

from ragmark.case import Case
from ragmark.metrics.arg_rules import matches
from ragmark.trajectory import Arguments, Call, Expected
from ragmark.types import MetricSpec, Score, spec

NO_EXPECTED = "the question expects no tool calls (no expected_tool_calls)"
NO_TRAJECTORY = "no trajectory recorded (its source gave no messages, tool calls or tool spans)"
NO_CALLS = "the agent made no tool call"
NONE_EXPECTED = "the question expects no tool call (expected_tool_calls is empty)"
NONE_RAN = "no tool call ran (none has a result or an error)"

Match = Callable[[Arguments, Arguments], bool]


def _exact(a: Arguments, b: Arguments) -> bool:
    return a is not None and b is not None and dict(a) == dict(b)


def _subset(a: Arguments, b: Arguments) -> bool:
    """Every argument of ``a`` is in ``b`` with the same value."""
    return a is not None and b is not None and all(k in b and b[k] == v for k, v in a.items())


MODES: dict[str, Match] = {"exact": _exact, "subset": _subset,
                           "superset": lambda a, b: _subset(b, a), "ignore": lambda a, b: True,
                           "rules": matches}
"""agentevals' argument modes, ``match(made, expected)``, and BFCL-style ``rules``
(:mod:`ragmark.metrics.arg_rules`: the expected arguments are lists of acceptable
values)."""


def _on_keys(names: tuple[str, ...]) -> Match:
    def on(a: Arguments, b: Arguments) -> bool:
        return a is not None and b is not None and all(_path(a, k) == _path(b, k)
                                                       for k in names)
    return on


def _path(args: Arguments, key: str) -> object:
    """A nested argument by its dotted path (None where absent), as agentevals reads the
    argument names of an override."""
    cur: object = args
    for part in key.split("."):
        if not isinstance(cur, dict):
            return None
        cur = cur.get(part)
        if cur is None:
            return None
    return cur


def matcher(expected: Expected, tool: str) -> Match:
    """How the arguments of a call of ``tool`` are compared: the override for that tool
    (a mode, or the argument names compared), else the question's mode."""
    rule = expected.overrides.get(tool, expected.args)
    return MODES[rule] if isinstance(rule, str) else _on_keys(rule)


def matched(made: Sequence[Call], wanted: Sequence[Call], expected: Expected,
            wanted_made: bool = False) -> int:
    """How many calls of ``wanted`` are among ``made``, as agentevals'
    ``_is_trajectory_superset(made, wanted)`` pairs them: each wanted call, in order,
    takes the first call made not yet taken with its name for which ``match(made's,
    wanted's)``; ``wanted_made``: ``wanted`` are the calls made, ``made`` the expected
    ones (the subset direction; only the rules, which are not symmetric, need it)."""
    taken: set[int] = set()
    for w in wanted:
        match = matcher(expected, w.name)
        if wanted_made and match is matches:  # rules read the expected side's lists
            match = _flipped
        i = next((i for i, m in enumerate(made) if i not in taken and m.name == w.name
                  and match(m.arguments, w.arguments)), None)
        if i is not None:
            taken.add(i)
    return len(taken)


def _flipped(a: Arguments, b: Arguments) -> bool:
    return matches(b, a)


def covers(made: Sequence[Call], wanted: Sequence[Call], expected: Expected,
           wanted_made: bool = False) -> bool:
    """Whether every call of ``wanted`` is among ``made`` (see :func:`matched`)."""
    return matched(made, wanted, expected, wanted_made) == len(wanted)


def in_order(made: Sequence[Call], wanted: Sequence[Call], expected: Expected) -> bool:
    """The same calls in the same order (see the module on agentevals' strict mode)."""
    return len(made) == len(wanted) and all(
        m.name == w.name and matcher(expected, w.name)(m.arguments, w.arguments)
        for m, w in zip(made, wanted, strict=True))


def _pair(case: Case) -> tuple[Sequence[Call], Expected] | Score:
    """The calls made and the calls expected, or the reason there is nothing to compare."""
    expected = case.sample.expected_calls
    if expected is None:
        return Score.missing(NO_EXPECTED)
    if case.output.trajectory is None:
        return Score.missing(NO_TRAJECTORY)
    return expected.focused(case.output.trajectory.calls())


def _flag(test: Callable[[Sequence[Call], Sequence[Call], Expected], bool]
          ) -> Callable[[Case], Score]:
    def compute(case: Case) -> Score:
        got = _pair(case)
        if isinstance(got, Score):
            return got
        made, expected = got
        return Score(1.0 if test(made, expected.calls, expected) else 0.0)
    return compute


def _both(made: Sequence[Call], wanted: Sequence[Call], expected: Expected) -> bool:
    return covers(made, wanted, expected) and covers(wanted, made, expected, True)


def _by_names(f: Callable[[int, int, int], Score]) -> Callable[[Case], Score]:
    """A measure of (names matched, calls made, calls expected), each call counted once
    per occurrence of its tool's name."""
    def compute(case: Case) -> Score:
        got = _pair(case)
        if isinstance(got, Score):
            return got
        made, expected = got
        overlap = Counter(c.name for c in made) & Counter(c.name for c in expected.calls)
        return f(sum(overlap.values()), len(made), len(expected.calls))
    return compute


def _precision(hit: int, made: int, wanted: int) -> Score:
    return Score(hit / made) if made else Score.missing(NO_CALLS)


def _recall(hit: int, made: int, wanted: int) -> Score:
    return Score(hit / wanted) if wanted else Score.missing(NONE_EXPECTED)


def _f1(hit: int, made: int, wanted: int) -> Score:
    """2PR / (P + R) = 2 hit / (made + wanted); 1 when the agent made no call and none
    was expected, 0 when one side is empty and the other not."""
    if not made or not wanted:
        return Score(1.0 if made == wanted else 0.0)
    return Score(2 * hit / (made + wanted))


def argument_accuracy_of(case: Case) -> Score:
    got = _pair(case)
    if isinstance(got, Score):
        return got
    made, expected = got
    if not expected.calls:
        return Score.missing(NONE_EXPECTED)
    return Score(matched(made, expected.calls, expected) / len(expected.calls))


def efficiency_of(case: Case) -> Score:
    """expected calls / calls made, at most 1 (1 when neither made nor expected any)."""
    got = _pair(case)
    if isinstance(got, Score):
        return got
    made, expected = got
    if not made:
        return Score(1.0) if not expected.calls else Score.missing(NO_CALLS)
    return Score(min(1.0, len(expected.calls) / len(made)))


def _calls(case: Case) -> Sequence[Call] | Score:
    if case.output.trajectory is None:
        return Score.missing(NO_TRAJECTORY)
    return case.output.trajectory.calls()


def count_of(case: Case) -> Score:
    calls = _calls(case)
    return calls if isinstance(calls, Score) else Score(float(len(calls)))


def error_rate_of(case: Case) -> Score:
    calls = _calls(case)
    if isinstance(calls, Score):
        return calls
    ran = [c for c in calls if c.ran]
    if not ran:
        return Score.missing(NONE_RAN)
    return Score(sum(c.error is not None for c in ran) / len(ran))


def repeats_of(case: Case) -> Score:
    calls = _calls(case)
    if isinstance(calls, Score):
        return calls
    seen: set[str] = set()
    repeated = 0
    for c in calls:
        repeated += c.key in seen
        seen.add(c.key)
    return Score(float(repeated))


_EXPECTS = ("expected_calls",)
_TRAJECTORY = ("trajectory",)


def _spec(name: str, summary: str, needs: tuple[str, ...], compute: Callable[[Case], Score],
          *, lower: bool = False, count: bool = False) -> MetricSpec:
    s = spec(name, "answer", "none", summary, "", needs, (None,), compute=compute)
    return replace(s, better="lower" if lower else "higher", bounded=not count)


SPECS: tuple[MetricSpec, ...] = (
    _spec("trajectory_strict", "the same tool calls in the same order as expected "
          "(agentevals' strict mode)", _EXPECTS, _flag(in_order)),
    _spec("trajectory_unordered", "the same tool calls as expected, in any order "
          "(agentevals' unordered mode)", _EXPECTS, _flag(_both)),
    _spec("trajectory_subset", "every tool call made was expected (agentevals' subset "
          "mode)", _EXPECTS, _flag(lambda m, w, e: covers(w, m, e, True))),
    _spec("trajectory_superset", "every expected tool call was made (agentevals' superset "
          "mode)", _EXPECTS, _flag(covers)),
    _spec("tool_precision", "calls made whose tool was expected / calls made", _EXPECTS,
          _by_names(_precision)),
    _spec("tool_recall", "expected calls whose tool was called / expected calls", _EXPECTS,
          _by_names(_recall)),
    _spec("tool_f1", "F1 of tool precision and tool recall", _EXPECTS,
          _by_names(_f1)),
    _spec("tool_argument_accuracy", "expected calls made with matching arguments / "
          "expected calls", _EXPECTS, argument_accuracy_of),
    _spec("step_efficiency", "expected calls / calls made, at most 1", _EXPECTS,
          efficiency_of),
    _spec("tool_calls", "tool calls made", _TRAJECTORY, count_of, lower=True, count=True),
    _spec("tool_error_rate", "tool calls that failed / tool calls that ran", _TRAJECTORY,
          error_rate_of, lower=True),
    _spec("repeated_calls", "tool calls identical (tool and arguments) to an earlier one",
          _TRAJECTORY, repeats_of, lower=True, count=True),
)
"""The agent metrics of the catalogue, in the order they are reported."""
