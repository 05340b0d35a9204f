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
    ({"messages": [{"role": "tool", "tool_call_id": "zz", "content": "x"}]},
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
