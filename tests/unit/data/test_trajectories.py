"""An agent's trajectory read from a log (issue 50, items 1 to 3): OpenAI's chat messages
or a plain list of tool calls, the calls joined to their executions, kept in the results;
the tool calls an item expects, checked at load."""

from __future__ import annotations

import json

import pytest
from support.cli import run_cli

from ragmark.data.files import Where
from ragmark.data.trajectories import expected_of, trajectory_of
from ragmark.errors import DataError
from ragmark.trajectory import Call, Handoff, ToolRun, Trajectory, Turn

W = Where("log.jsonl", line=3)


def _call(cid: str, name: str, args: str) -> dict:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}


MESSAGES = [
    {"role": "system", "content": "You search."},
    {"role": "user", "content": "Who wrote Dune, and when?"},
    {"role": "assistant", "name": "planner", "content": None,
     "tool_calls": [_call("a", "search", '{"query": "Dune author"}'),
                    _call("b", "search", '{"query": "Dune year", "k": 3}')]},
    {"role": "tool", "tool_call_id": "b", "content": "Dune was published in 1965."},
    {"role": "tool", "tool_call_id": "a", "content": "boom", "status": "error"},
    {"role": "ai", "name": "writer", "content": "",
     "tool_calls": [{"id": "c", "name": "calculator", "args": {"expr": "2026-1965"}}]},
    {"role": "tool", "tool_call_id": "c", "content": [{"type": "text", "text": "61"}]},
    {"role": "assistant", "name": "writer", "content": "Frank Herbert, in 1965."},
]


def test_messages_become_steps_and_calls_join_their_runs_by_id():
    t = trajectory_of({"messages": MESSAGES}, W)
    assert t is not None
    kinds = [type(s).__name__ for s in t.steps]
    assert kinds == ["Turn", "ToolRun", "ToolRun", "Handoff", "Turn", "ToolRun", "Turn"]
    assert t.steps[3] == Handoff("planner", "writer") and t.turns == 3
    calls = t.calls()
    assert [(c.name, c.arguments, c.result, c.error) for c in calls] == [
        ("search", {"query": "Dune author"}, None, "boom"),  # run second, asked first
        ("search", {"query": "Dune year", "k": 3}, "Dune was published in 1965.", None),
        ("calculator", {"expr": "2026-1965"}, "61", None)]
    assert all(c.asked and c.ran for c in calls)
    assert calls[0].key == 'search({"query":"Dune author"})'
    # written to the results and read back as it was
    assert Trajectory.from_json(json.loads(json.dumps(t.to_json()))) == t


def test_plain_tool_calls_and_odd_arguments():
    t = trajectory_of({"tool_calls": [
        {"name": "search", "arguments": '{"query": "x"}', "result": ["d1", "d2"],
         "latency_s": 0.5},
        {"function": {"name": "lookup", "arguments": "not json"}},
        {"name": "fetch", "arguments": {"url": "u"}, "error": "timeout"}]}, W)
    assert t is not None
    calls = t.calls()
    assert [(c.name, c.arguments, c.raw, c.result, c.error, c.ran) for c in calls] == [
        ("search", {"query": "x"}, None, '["d1", "d2"]', None, True),
        ("lookup", None, "not json", None, None, False),
        ("fetch", {"url": "u"}, None, None, "timeout", True)]
    assert calls[0].latency_s == 0.5 and calls[1].key == "lookup(not json)"
    assert trajectory_of({"answer": "x"}, W) is None


def test_a_call_asked_without_an_id_joins_the_next_run_of_its_tool():
    t = Trajectory((Turn("", (Call("search", {"q": 1}), Call("search", {"q": 2}))),
                    ToolRun(Call("search", None, result="r1", asked=False, ran=True)),
                    ToolRun(Call("other", None, result="r3", asked=False, ran=True))))
    got = t.calls()
    assert [(c.arguments, c.result, c.ran) for c in got] == [
        ({"q": 1}, "r1", True), ({"q": 2}, None, False), (None, "r3", True)]
    assert got[2].name == "other" and not got[2].asked  # a run nobody asked for


@pytest.mark.parametrize(("obj", "field", "says"), [
    ({"messages": {"role": "user"}}, "messages", "expected a list"),
    ({"messages": [{"role": "robot"}]}, "messages[0].role", "expected a role"),
    # an orphan tool message is refused whether it names its tool or not (issue 61
    # item 14: the named one was taken silently, counted as a call)
    ({"messages": [{"role": "tool", "tool_call_id": "zz", "content": "x"}]},
     "messages[0].tool_call_id", "answers the call 'zz', which no assistant message"),
    ({"messages": [{"role": "assistant", "tool_calls": [
        {"id": "a", "function": {"name": "search", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "a", "content": "r"},
        {"role": "tool", "tool_call_id": "zz", "name": "search", "content": "x"}]},
     "messages[2].tool_call_id", "answers the call 'zz', which no assistant message"),
    ({"messages": [{"role": "tool", "content": "x"}]},
     "messages[0].tool_call_id", "names no tool"),
    ({"messages": [{"role": "assistant", "tool_calls": [{"function": {"arguments": "{}"}}]}]},
     "messages[0].tool_calls[0].function.name", "the tool's name"),
    ({"tool_calls": [{"name": "s", "latency_s": -1}]}, "tool_calls[0].latency_s",
     "non-negative"),
])
def test_a_wrong_shape_names_the_line_and_field(obj, field, says):
    with pytest.raises(DataError) as e:
        trajectory_of(obj, W)
    assert e.value.field == field and says in str(e.value) and "line 3" in str(e.value)


def test_expected_tool_calls_are_checked_at_load():
    exp = expected_of({"expected_tool_calls": [
        {"name": "search", "arguments": {"query": "Dune"}}, {"name": "calculator"}],
        "tool_args_match": "subset", "tool_args_overrides": {"search": ["query"],
                                                             "calculator": "ignore"}}, W)
    assert exp is not None
    assert [(c.name, c.arguments) for c in exp.calls] == [("search", {"query": "Dune"}),
                                                          ("calculator", {})]
    assert exp.args == "subset"
    assert dict(exp.overrides) == {"search": ("query",), "calculator": "ignore"}
    assert expected_of({"question": "q"}, W) is None
    for obj, field in [
        ({"expected_tool_calls": "search"}, "expected_tool_calls"),
        ({"expected_tool_calls": [{"name": "s", "arguments": "[1]"}]},
         "expected_tool_calls[0].arguments"),
        ({"expected_tool_calls": [], "tool_args_match": "fuzzy"}, "tool_args_match"),
        ({"expected_tool_calls": [], "tool_args_overrides": {"s": 3}},
         "tool_args_overrides.s"),
        ({"tool_args_match": "exact"}, "tool_args_match"),
    ]:
        with pytest.raises(DataError) as e:
            expected_of(obj, W)
        assert e.value.field == field


def test_a_logged_agent_run_keeps_its_trajectory_in_the_results(tmp_path, capsys):
    """A log whose lines give messages and no answer: the answer is the agent's last
    word, the trajectory is in the details JSON; a bad line exits 2 naming it."""
    log = tmp_path / "agent.jsonl"
    log.write_text(json.dumps({
        "id": "q1", "question": "Who wrote Dune, and when?", "messages": MESSAGES,
        "contexts": ["Dune was published in 1965."],
        "expected_tool_calls": [{"name": "search", "arguments": {"query": "Dune author"}}],
    }) + "\n")
    out = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--outputs", str(log), "--output", str(out),
                            "--include-details", "--no-history", "--quiet"], capsys)
    assert code == 0, err
    q = json.loads(out.read_text())["queries"][0]
    assert q["answer"] == "Frank Herbert, in 1965."
    steps = q["trajectory"]
    assert [s["kind"] for s in steps] == ["model", "tool", "tool", "handoff", "model",
                                          "tool", "model"]
    assert steps[1] == {"kind": "tool", "name": "search", "id": "b",
                        "result": "Dune was published in 1965.", "agent": "planner"}
    log.write_text(json.dumps({"question": "q", "contexts": [], "answer": "a",
                               "expected_tool_calls": [{"name": ""}]}) + "\n")
    code, _, err = run_cli(["run", "--outputs", str(log), "--quiet"], capsys)
    assert code == 2 and "line 1" in err and "expected_tool_calls[0].name" in err


def test_a_search_results_documents():
    from ragmark.data.trajectories import documents_of

    listed = json.dumps([{"id": "d1", "text": "BM25 ranks.", "score": 2.5},
                         {"page_content": "Dense embeds.", "metadata": {"doc_id": 7}},
                         "A bare text.", {"title": "no text"}])
    assert [(c.text, c.id, c.score) for c in documents_of(listed)] == [
        ("BM25 ranks.", "d1", 2.5), ("Dense embeds.", "7", None), ("A bare text.", None, None)]
    wrapped = json.dumps({"results": [{"content": "x", "_id": "a"}]})
    assert [(c.text, c.id) for c in documents_of(wrapped)] == [("x", "a")]
    assert [c.text for c in documents_of("just prose")] == ["just prose"]
    assert documents_of(None) == documents_of("  ") == ()


def test_search_calls_are_hops_measured_as_pytrec_eval_measures_each(tmp_path, capsys):
    """--search-tool: each search call a hop of the documents its result lists; recall
    and MRR of each call equal pytrec_eval's on that call's ranking, and over the union
    (the contexts in call order) too; the other tools are not retrieval."""
    import pytrec_eval

    def search(query, docs):
        return {"name": "search", "arguments": {"query": query},
                "result": json.dumps([{"id": d, "text": f"passage {d} " * 3} for d in docs])}

    lines = [
        {"id": "q1", "question": "one?", "answer": "a", "tool_calls": [
            search("first", ["d3", "d1"]), {"name": "calc", "arguments": {}, "result": "2"},
            search("second", ["d2", "d4", "d1"])]},
        {"id": "q2", "question": "two?", "answer": "b",
         "tool_calls": [search("only", ["d4", "d5"])]},
    ]
    log = tmp_path / "agent.jsonl"
    log.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    qrels = {"q1": {"d1": 1, "d2": 1}, "q2": {"d5": 1}}
    data = tmp_path / "set.jsonl"
    data.write_text("\n".join(json.dumps(
        {"id": q, "question": x["question"], "ground_truth_contexts": [
            f"passage {d} " * 3 for d in rel]}) for q, rel, x in zip(
        ["q1", "q2"], [["d1", "d2"], ["d5"]], lines, strict=True)) + "\n")
    out = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--dataset", str(data), "--outputs", str(log),
                            "--search-tool", "search", "--metrics", "recall@10,mrr@10",
                            "--output", str(out), "--include-details", "--no-history",
                            "--quiet"], capsys)
    assert code == 0, err
    got = json.loads(out.read_text())
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"recall_10", "recip_rank"})

    def measured(rankings):
        run = {q: {d: float(len(r) - i) for i, d in enumerate(r)} for q, r in rankings.items()}
        return evaluator.evaluate(run)

    union = measured({"q1": ["d3", "d1", "d2", "d4", "d1"][:4], "q2": ["d4", "d5"]})
    assert got["metrics"]["recall@10"] == pytest.approx(
        (union["q1"]["recall_10"] + union["q2"]["recall_10"]) / 2)
    assert got["metrics"]["mrr@10"] == pytest.approx(
        (union["q1"]["recip_rank"] + union["q2"]["recip_rank"]) / 2)
    per_call = [measured({"q1": ["d3", "d1"]})["q1"], measured({"q1": ["d2", "d4", "d1"]})["q1"],
                measured({"q2": ["d4", "d5"]})["q2"]]
    hops = [h for q in got["queries"] for h in q["hops"]]
    assert [h["name"] for h in hops] == ["search"] * 3
    assert [(h["recall"], h["mrr"]) for h in hops] == [
        pytest.approx((m["recall_10"], m["recip_rank"])) for m in per_call]
    assert [h["found"] for h in hops][:2] == [["passage 1"], ["passage 2"]]
    code, _, err = run_cli(["run", "--dataset", str(data), "--search-tool", "search",
                            "--quiet"], capsys)
    assert code == 2 and "--search-tool reads a logged agent's tool calls" in err


def test_expected_calls_as_real_data_gives_them():
    """Issue 61 items 15-16: tau-bench's expected actions carry 'kwargs' (ignored, read
    as {}, so under exact they could never match); a call without arguments is refused
    naming the item and field unless its tool's arguments are not compared; keys ragmark
    does not read and arguments encoded twice are counted warnings (errors with
    --strict)."""
    from ragmark.data.leniency import Leniency
    from ragmark.data.trajectories import TWICE_ENCODED, UNKNOWN_CALL_KEYS

    exp = expected_of({"expected_tool_calls": [
        {"name": "book", "kwargs": {"amount": 250}}]}, W)
    assert exp is not None and [(c.name, c.arguments) for c in exp.calls] == [
        ("book", {"amount": 250})]
    with pytest.raises(DataError) as e:
        expected_of({"expected_tool_calls": [{"name": "search", "arguments": {"q": 1}},
                                             {"name": "calculator"}]}, W)
    assert e.value.field == "expected_tool_calls[1].arguments" and "line 3" in str(e.value)
    assert "no arguments for the expected call of 'calculator'" in str(e.value)
    assert "tool_args_overrides {\"calculator\": \"ignore\"}" in str(e.value)
    assert expected_of({"expected_tool_calls": [{"name": "calculator"}],
                        "tool_args_match": "ignore"}, W) is not None
    lenient = Leniency()
    exp = expected_of({"expected_tool_calls": [
        {"name": "book", "arguments": json.dumps(json.dumps({"amount": 5})),
         "requestor": "user"}]}, W, lenient)
    assert exp is not None and exp.calls[0].arguments == {"amount": 5}
    assert (lenient.count(TWICE_ENCODED), lenient.count(UNKNOWN_CALL_KEYS)) == (1, 1)
    with pytest.raises(DataError, match="requestor"):
        expected_of({"expected_tool_calls": [{"name": "b", "arguments": {},
                                              "requestor": "u"}]}, W, Leniency(strict=True))


@pytest.mark.parametrize("made_args", [{"q": "x"}, {"q": "other"}])
def test_an_empty_override_is_read_as_agentevals_reads_it(made_args):
    """Issue 61 item 16: ``tool_args_overrides: {"search": []}`` matched anything (1);
    agentevals 0.0.9 takes a falsy override as none (the question's mode, exact)."""
    from agentevals.trajectory.match import create_trajectory_match_evaluator

    from ragmark.case import Case, Output
    from ragmark.metrics.names import catalogue
    from ragmark.types import Sample

    def messages(args):
        return [{"role": "user", "content": "q?"},
                {"role": "assistant", "content": "", "tool_calls": [
                    {"id": "c0", "type": "function",
                     "function": {"name": "search", "arguments": json.dumps(args)}}]},
                {"role": "tool", "tool_call_id": "c0", "content": "r"},
                {"role": "assistant", "content": "done"}]

    item = {"expected_tool_calls": [{"name": "search", "arguments": {"q": "x"}}],
            "tool_args_overrides": {"search": []}}
    exp = expected_of(item, W)
    case = Case(Sample("q1", "q?", expected_calls=exp), "done", output=Output(
        "done", trajectory=trajectory_of({"messages": messages(made_args)}, W)))
    theirs = create_trajectory_match_evaluator(
        trajectory_match_mode="unordered", tool_args_match_mode="exact",
        tool_args_match_overrides={"search": []})(
        outputs=messages(made_args), reference_outputs=messages({"q": "x"}))
    ours = catalogue()["trajectory_unordered"].compute(case).value
    assert ours == float(theirs["score"]) == (1.0 if made_args == {"q": "x"} else 0.0)


def _joined_by_hand(t: Trajectory) -> list[tuple]:
    """The join as written before issue 61 item 18 (each call scanned every execution:
    quadratic), kept as the reference of the linear one."""
    asked = [c for s in t.steps if isinstance(s, Turn) for c in s.calls]
    runs = [s.call for s in t.steps if isinstance(s, ToolRun)]
    joined: set[int] = set()
    out = []
    for c in asked:
        i = next((i for i, r in enumerate(runs) if i not in joined and c.id
                  and r.id == c.id), None)
        if i is None:
            i = next((i for i, r in enumerate(runs) if i not in joined
                      and r.name == c.name and not (c.id and r.id)), None)
        if i is None:
            out.append((c.name, c.id, None))
            continue
        joined.add(i)
        out.append((c.name, c.id, runs[i].result))
    return out + [(r.name, r.id, r.result) for i, r in enumerate(runs) if i not in joined]


def test_calls_are_joined_once_in_linear_time_as_before():
    """Issue 61 item 18: one trajectory of 10,000 calls took 37.7 s for 8 metrics: each
    metric joined the calls again, each join scanning every execution. The join is
    linear and made once a trajectory (every metric shares it); it pairs as before."""
    import random

    from hypothesis import given, settings
    from hypothesis import strategies as st

    rng = random.Random(0)
    steps: list = []
    for i in range(3000):
        name, cid = rng.choice("abc"), rng.choice([None, f"c{i}", f"c{i - 1}"])
        if rng.random() < 0.6:
            steps.append(Turn("", (Call(name, {"i": i}, cid),)))
        else:
            steps.append(ToolRun(Call(name, None, rng.choice([None, cid, f"c{i}"]),
                                      result=f"r{i}", asked=False, ran=True)))
    t = Trajectory(tuple(steps))
    assert [(c.name, c.id, c.result) for c in t.calls()] == _joined_by_hand(t)
    assert t.calls() is t.calls()  # joined once

    @settings(max_examples=200, deadline=None)
    @given(st.lists(st.tuples(st.booleans(), st.sampled_from("ab"),
                              st.sampled_from([None, "x", "y"])), max_size=12))
    def same(spec):
        tr = Trajectory(tuple(
            Turn("", (Call(n, {}, cid),)) if ask else
            ToolRun(Call(n, None, cid, result=f"r{k}", asked=False, ran=True))
            for k, (ask, n, cid) in enumerate(spec)))
        assert [(c.name, c.id, c.result) for c in tr.calls()] == _joined_by_hand(tr)

    same()


def test_only_the_compared_tools_and_no_failed_call(tmp_path, capsys):
    """Issue 61 item 21: tau-bench's reward compares the calls that change the state,
    and a call that failed then succeeded counts once. ``tools_compared`` and
    ``failed_calls: "skip"`` say so, and ``tool_errors`` (a pattern) tells a failure the
    tool wrote only in its result; by hand: the agent looked a user up (not compared),
    booked with a bad amount (failed, skipped), booked right, and answered. On tau-bench's
    200 gpt-4o airline trajectories the same three fields make trajectory_unordered
    equal tau-bench's reward on 195 (the 5 others: answers the reward checks, equivalent
    arguments, no reward info)."""
    def call(cid, name, args):
        return {"role": "assistant", "content": None, "tool_calls": [
            {"id": cid, "type": "function",
             "function": {"name": name, "arguments": json.dumps(args)}}]}

    messages = [{"role": "user", "content": "Book it."},
                call("a", "get_user", {"id": "u1"}), {"role": "tool", "tool_call_id": "a",
                                                       "content": "{}"},
                call("b", "book", {"amount": 300}), {"role": "tool", "tool_call_id": "b",
                                                     "content": "too much",
                                                     "status": "error"},
                call("c", "book", {"amount": 250}), {"role": "tool", "tool_call_id": "c",
                                                     "content": "ok"},
                {"role": "assistant", "content": "Booked."}]
    said_only = [dict(m) for m in messages]  # the failure said in the text alone
    said_only[4] = {"role": "tool", "tool_call_id": "b", "content": "Error: too much"}
    rows = []
    for qid, extra, msgs in (
            ("plain", {}, messages),
            ("state", {"tools_compared": ["book"], "failed_calls": "skip"}, messages),
            ("unsaid", {"tools_compared": ["book"], "failed_calls": "skip"}, said_only),
            ("text", {"tools_compared": ["book"], "failed_calls": "skip",
                      "tool_errors": "^Error:"}, said_only)):
        rows.append({"id": qid, "question": "Book it.", "messages": msgs,
                     "expected_tool_calls": [{"name": "book", "arguments": {"amount": 250}}],
                     **extra})
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--outputs", str(log), "--metrics",
                            "trajectory_unordered,trajectory_strict,tool_precision",
                            "--output", str(out), "--include-details", "--no-history",
                            "--quiet"], capsys)
    assert code == 0, err
    data = json.loads(out.read_text())
    got = {q["id"]: {m: v if not isinstance(v, dict) else v.get("value")
                     for m, v in q["metrics"].items()} for q in data["queries"]}
    assert got["plain"] == {"trajectory_unordered": 0.0, "trajectory_strict": 0.0,
                            "tool_precision": 1 / 3}
    assert got["state"] == got["text"] == {"trajectory_unordered": 1.0,
                                           "trajectory_strict": 1.0, "tool_precision": 1.0}
    # without the pattern the failure said only in the text is a call like any other
    assert got["unsaid"] == {"trajectory_unordered": 0.0, "trajectory_strict": 0.0,
                             "tool_precision": 0.5}
    with pytest.raises(DataError, match="expected count or skip"):
        expected_of({"expected_tool_calls": [{"name": "a", "arguments": {}}],
                     "failed_calls": "drop"}, W)
