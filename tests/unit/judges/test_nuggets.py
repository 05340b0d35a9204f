"""TREC RAG's nugget evaluation (issue 38): the four scores on hand-worked assignments
and equal to castorini's nuggetizer (``nuggetizer.core.metrics``, the package's own
scoring) on the same assignments; nugget creation, importance and assignment through the
scripted server; nuggets from the set used as they are; every missing score with its
reason."""

from __future__ import annotations

import asyncio
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from judges_support import as_json, reply, run
from nuggetizer.core.metrics import calculate_nugget_scores

from ragmark.case import Case
from ragmark.judges.nugget_scores import ASSIGNMENTS, METRICS, NO_VITAL, Assigned, nugget_scores
from ragmark.judges.nuggets import NOTHING_TO_CREATE_FROM, PASSAGES_A_CALL, judge
from ragmark.types import Nugget

BLOCK = re.compile(r'<data name="(\w+)"(?: index="\d+")?>\n(.*?)\n</data>', re.S)
_ORACLE = {"nugget_vital_strict": "strict_vital_score", "nugget_vital": "vital_score",
           "nugget_all_strict": "strict_all_score", "nugget_all": "all_score"}


def assigned(*pairs: tuple[str, str]) -> list[Assigned]:
    return [Assigned(Nugget(f"fact {i}", imp), a) for i, (imp, a) in enumerate(pairs)]


def test_the_four_scores_hand_worked():
    # vital [support, partial, not], okay [support]: all_strict 2/4, all (2 + 0.5)/4,
    # vital_strict 1/3, vital (1 + 0.5)/3 -- TREC RAG's definitions (arXiv 2411.09607)
    got = nugget_scores(assigned(("vital", "support"), ("vital", "partial_support"),
                                 ("vital", "not_support"), ("okay", "support")))
    assert {m: s.value for m, s in got.items()} == pytest.approx({
        "nugget_all_strict": 0.5, "nugget_all": 0.625,
        "nugget_vital_strict": 1 / 3, "nugget_vital": 0.5})


def test_without_a_vital_nugget_the_vital_scores_are_missing_not_zero():
    got = nugget_scores(assigned(("okay", "support"), ("okay", "partial_support")))
    assert got["nugget_vital"].value is None and got["nugget_vital"].reason == NO_VITAL
    assert got["nugget_vital_strict"].reason == NO_VITAL
    assert got["nugget_all"].value == 0.75 and got["nugget_all_strict"].value == 0.5
    assert all(s.reason == "no nugget for this question" for s in nugget_scores([]).values())


@given(st.lists(st.tuples(st.sampled_from(["vital", "okay"]), st.sampled_from(ASSIGNMENTS)),
                min_size=1, max_size=30).filter(lambda p: any(i == "vital" for i, _ in p)))
def test_equal_to_nuggetizers_own_scoring(pairs):
    ours = nugget_scores(assigned(*pairs))
    theirs = calculate_nugget_scores("q", [{"text": f"fact {i}", "importance": imp,
                                            "assignment": a}
                                           for i, (imp, a) in enumerate(pairs)])
    for metric, field in _ORACLE.items():
        assert ours[metric].value == pytest.approx(getattr(theirs, field)), metric


# ---------------------------------------------------------------- through the scripted server

QUESTION = "Who built the Eiffel Tower, and when?"
EXPECTED = "Gustave Eiffel's company built it. It was finished in 1889."


def blocks(body) -> list[tuple[str, str]]:
    user = [m["content"] for m in body["messages"] if m["role"] == "user"][-1]
    return BLOCK.findall(user)


def kind(body) -> str:
    system = body["messages"][0]["content"]
    for start, name in (("List the nuggets", "create"), ("Label each numbered nugget",
                                                         "importance"),
                        ("For each numbered nugget", "assign")):
        if system.startswith(start):
            return name
    raise AssertionError(system[:60])


def scripted(body):
    """Creation: the expected answer's sentences, then the first four words of each
    passage; importance: the first two vital; assignment: support when the answer holds
    every word of the nugget, partial when some, not_support when none."""
    got = blocks(body)
    named = [(n, t) for n, t in got]
    if kind(body) == "create":
        have = [t for n, t in named if n == "nugget"]
        if have == ["(none)"]:
            have = []
        expected = dict(named).get("expected_answer", "")
        new = [s.strip() for s in expected.split(".") if s.strip()]
        new += [" ".join(t.split()[:4]) for n, t in named if n == "passage" and t != "(none)"]
        return as_json({"nuggets": list(dict.fromkeys(have + new))})
    nuggets = [t for n, t in named if n == "nugget"]
    if kind(body) == "importance":
        return as_json({"labels": [{"nugget": i, "importance": "vital" if i <= 2 else "okay"}
                                   for i in range(1, len(nuggets) + 1)]})
    answer = set(dict(named)["answer"].lower().replace(".", "").split())
    verdicts = []
    for i, text in enumerate(nuggets, start=1):
        words = set(text.lower().replace(".", "").split())
        share = len(words & answer) / len(words)
        verdicts.append({"nugget": i, "assignment": "support" if share == 1 else
                         "partial_support" if share > 0 else "not_support"})
    return as_json({"verdicts": verdicts})


def test_created_labelled_and_assigned_through_the_server(client, server):
    server.rule = scripted
    case = Case.of(QUESTION, "Gustave Eiffel's company built it", [], EXPECTED,
                     relevant=("Paris hosted the World's Fair of 1889.",))
    got = run(client, judge(client, case))
    assert [kind(r.body) for r in server.requests] == ["create", "importance", "assign"]
    nuggets = got["nugget_all"].details["nuggets"]
    assert nuggets == [
        {"text": "Gustave Eiffel's company built it", "importance": "vital",
         "assignment": "support"},
        {"text": "It was finished in 1889", "importance": "vital", "assignment": "partial_support"},
        {"text": "Paris hosted the World's", "importance": "okay", "assignment": "not_support"}]
    # vital [support, partial]; okay [not]: vital_strict 1/2, vital 1.5/2, all_strict 1/3,
    # all 1.5/3
    assert {m: s.value for m, s in got.items()} == pytest.approx({
        "nugget_vital_strict": 0.5, "nugget_vital": 0.75, "nugget_all_strict": 1 / 3,
        "nugget_all": 0.5})
    assert got["nugget_vital"].details["source"] == "judge"
    assert got["nugget_vital"].details["calls"] == 3
    # the assignment's schema holds exactly one verdict per nugget, numbered 1..3
    schema = server.requests[2].body["response_format"]["json_schema"]["schema"]
    verdicts = schema["properties"]["verdicts"]
    assert verdicts["minItems"] == verdicts["maxItems"] == 3
    assert verdicts["items"]["properties"]["nugget"]["enum"] == [1, 2, 3]
    # what the answers to one question share comes first; the answer, which varies, last
    assert [n for n, _ in blocks(server.requests[2].body)] == [
        "question", "nugget", "nugget", "nugget", "answer"]


def test_creation_reads_ten_passages_a_call_and_carries_the_list(client, server):
    server.rule = scripted
    gold = tuple(f"Passage number {i} says something." for i in range(1, 13))
    case = Case.of(QUESTION, "", [], None, relevant=gold)
    got = run(client, judge(client, case))
    creates = [r for r in server.requests if kind(r.body) == "create"]
    assert len(creates) == 2 and PASSAGES_A_CALL == 10
    first, second = (blocks(r.body) for r in creates)
    assert sum(n == "passage" for n, _ in first) == 10
    assert sum(n == "passage" for n, _ in second) == 2
    assert [t for n, t in second if n == "nugget"][:2] == ["Passage number 1 says",
                                                          "Passage number 2 says"]
    # an empty answer supports no nugget, without an assignment call
    assert [kind(r.body) for r in server.requests][-1] == "importance"
    assert got["nugget_all"].value == 0.0
    assert len(got["nugget_all"].details["nuggets"]) == 12


def test_nuggets_from_the_set_are_used_as_they_are(client, server):
    server.rule = scripted
    nuggets = (Nugget("Gustave Eiffel's company built the tower", "vital"),
               Nugget("finished in 1889", "okay"))
    case = Case.of(QUESTION, "It was finished in 1889.", [], EXPECTED, nuggets=nuggets)
    got = run(client, judge(client, case))
    assert [kind(r.body) for r in server.requests] == ["assign"]
    assert got["nugget_vital"].value == 0.0 and got["nugget_all"].value == 0.5
    assert got["nugget_all"].details["source"] == "set"


def test_answers_to_one_question_share_its_nuggets(server, tmp_path):
    """The scores of two answers, four metrics each, asked concurrently: the nuggets are
    created once (one creation and one labelling call: the same calls, answered once by
    the client's cache and its in-flight deduplication), each answer assigned once."""
    from ragmark.judges.nuggets import SPECS
    from ragmark.llm import LLMClient, LLMSettings
    from ragmark.llm.cache import LLMCache

    client = LLMClient(LLMSettings(base_url=server.url, model="test-model"),
                       LLMCache(tmp_path / "calls.sqlite"))
    server.rule = scripted
    cases = [Case.of(QUESTION, a, [], EXPECTED) for a in
             ("Gustave Eiffel's company built it.", "It was finished in 1889.")]

    async def all_scores():  # one judge gives the four metrics of a case
        assert len({s.compute for s in SPECS}) == 1
        return await asyncio.gather(*(SPECS[0].compute(client, c, None) for c in cases))

    got = run(client, all_scores())
    assert sorted(kind(r.body) for r in server.requests) == [
        "assign", "assign", "create", "importance"]
    # both nuggets vital; each answer holds one and part of the other (the word "it"):
    # strict 1/2, with partial credit 1.5/2
    assert [got[i][s.name].value for i in (0, 1) for s in SPECS] == [0.5, 0.75, 0.5, 0.75] * 2


def test_missing_scores_keep_their_reasons(client, server):
    got = run(client, judge(client, Case.of(QUESTION, "An answer.", [], None)))
    assert {s.reason for s in got.values()} == {NOTHING_TO_CREATE_FROM}
    assert not server.requests
    server.queue.extend([reply("no idea"), reply("still no idea")])
    got = run(client, judge(client, Case.of(QUESTION, "An answer.", [], EXPECTED)))
    reason = got["nugget_all"].reason
    assert reason.startswith("nuggets.create: unusable judge output after a re-ask")
    assert got["nugget_all"].details["raw"] == "still no idea"
    assert all(s.value is None for s in got.values()) and set(got) == set(METRICS)


def test_from_the_command_line_with_nuggets_from_the_log_and_created(server, tmp_path,
                                                                     capsys):
    """Logged outputs whose first question gives its nuggets and whose second does not:
    the dry run counts the calls (one assignment; a creation, a labelling and an
    assignment), the run scores both, and the results keep each question's nuggets."""
    import json

    from support.cli import run_cli

    server.rule = scripted
    log = tmp_path / "outputs.jsonl"
    rows = [
        {"id": "q1", "question": QUESTION, "answer": "Gustave Eiffel's company built it.",
         "contexts": ["The tower was built by the company of Gustave Eiffel."],
         "nuggets": [{"text": "Gustave Eiffel's company built the tower",
                      "importance": "Vital"},
                     {"text": "finished in 1889", "importance": "okay"}]},
        {"id": "q2", "question": QUESTION, "answer": "It was finished in 1889.",
         "contexts": ["Completed in March 1889."], "expected_answer": EXPECTED,
         "ground_truth_contexts": ["Paris hosted the World's Fair of 1889."]}]
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    base = ["--outputs", str(log), "--metrics", "nuggets", "--llm-base-url", server.url,
            "--llm-model", "test-model"]
    code, out, err = run_cli(["run", *base, "--dry-run"], capsys)
    assert code == 0, err
    assert not server.requests
    # each of the four may be re-asked once
    assert "dry run: 4 judge calls (at most 8 with re-asks)" in out
    result = tmp_path / "r.json"
    code, _, err = run_cli(["run", *base, "--output", str(result), "--include-details",
                            "--quiet"], capsys)
    assert code == 0, err
    assert len(server.requests) == 4
    data = json.loads(result.read_text())
    assert set(METRICS) <= set(data["metrics"])
    # the fingerprint of the nuggets the scores count against (diff refuses to pair
    # scores over different ones): of the nuggets written beside the results
    from ragmark.results.codec import run_from_json
    from ragmark.results.nuggetizer_files import nuggets_hash

    assert data["dataset"]["nuggets_hash"] == nuggets_hash(run_from_json(data).queries)
    per = {q["id"]: q for q in data["queries"]}
    q1 = per["q1"]["metrics"]
    assert q1["nugget_all"]["source"] == "set"
    # "the tower" is not in the answer: the vital nugget partly held, the okay one not
    assert [(n["importance"], n["assignment"]) for n in q1["nugget_all"]["nuggets"]] == [
        ("vital", "partial_support"), ("okay", "not_support")]
    assert (q1["nugget_vital_strict"]["value"], q1["nugget_vital"]["value"],
            q1["nugget_all"]["value"]) == (0.0, 0.5, 0.25)
    assert per["q1"]["ground_truth"]["nuggets"][0] == {
        "text": "Gustave Eiffel's company built the tower", "importance": "vital"}
    q2 = per["q2"]["metrics"]["nugget_all"]
    assert q2["source"] == "judge" and "nuggets" not in per["q2"]["ground_truth"]
    assert [n["text"] for n in q2["nuggets"]] == [
        "Gustave Eiffel's company built it", "It was finished in 1889",
        "Paris hosted the World's"]
    # inspect and the HTML question view show each question's nuggets
    code, out, err = run_cli(["inspect", str(result), "q1"], capsys)
    assert code == 0, err
    flat = " ".join(out.split())
    assert "Nuggets (2, given with the question)" in flat
    assert ("1. vital, partly supported: Gustave Eiffel's company built the tower" in flat
            and "2. okay, not supported: finished in 1889" in flat)
    assert "0 of 2 nuggets supported, 1 partly" in flat
    html = tmp_path / "r.html"
    code, _, err = run_cli(["report", str(result), "--output", str(html)], capsys)
    assert code == 0, err
    page = html.read_text()
    assert "<b>Nuggets (3, created by the judge)</b>" in page
    assert "<li>okay, not supported: finished in 1889</li>" in page
    # beside the results, nuggetizer's files: the assignments, which nuggetizer's own
    # scoring reads to the same per-topic scores, and those scores with their mean
    rows = [json.loads(t) for t in (tmp_path / "r.assignments.jsonl").read_text()
            .splitlines()]
    assert [r["qid"] for r in rows] == ["q1", "q2"] and rows[0]["run_id"] == "outputs"
    scores = [json.loads(t) for t in (tmp_path / "r.nugget_scores.jsonl").read_text()
              .splitlines()]
    assert [s["qid"] for s in scores] == ["q1", "q2", "all"]
    for row, ours in zip(rows, scores, strict=False):
        theirs = calculate_nugget_scores(row["qid"], row["nuggets"])
        assert ours == {"qid": theirs.qid, "strict_vital_score": theirs.strict_vital_score,
                        "strict_all_score": theirs.strict_all_score,
                        "vital_score": theirs.vital_score, "all_score": theirs.all_score}
    assert scores[2]["all_score"] == pytest.approx((scores[0]["all_score"]
                                                    + scores[1]["all_score"]) / 2)


def test_a_run_writes_its_nuggets_and_another_reuses_them(server, tmp_path, capsys):
    """``run --output r.json`` writes r.nuggets.jsonl (nuggetizer's layout); another
    system's answers scored with ``--nuggets r.nuggets.jsonl`` meet the same nuggets, with
    no creation call. A nugget file naming none of the questions is exit 2."""
    import json

    from support.cli import run_cli

    server.rule = scripted
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    row = {"id": "q2", "question": QUESTION, "contexts": ["Completed in March 1889."],
           "expected_answer": EXPECTED}
    first.write_text(json.dumps({**row, "answer": "It was finished in 1889."}) + "\n")
    second.write_text(json.dumps({**row, "answer": "Gustave Eiffel's company built it."})
                      + "\n")
    llm = ["--metrics", "nuggets", "--llm-base-url", server.url, "--llm-model", "test-model",
           "--quiet", "--no-history"]
    code, _, err = run_cli(["run", "--outputs", str(first), "--output",
                            str(tmp_path / "a.json"), *llm], capsys)
    assert code == 0, err
    written = tmp_path / "a.nuggets.jsonl"
    lines = [json.loads(t) for t in written.read_text().splitlines()]
    assert lines == [{"qid": "q2", "query": QUESTION, "nuggets": [
        {"text": "Gustave Eiffel's company built it", "importance": "vital"},
        {"text": "It was finished in 1889", "importance": "vital"}]}]
    server.requests.clear()
    code, _, err = run_cli(["run", "--outputs", str(second), "--nuggets", str(written),
                            "--output", str(tmp_path / "b.json"), "--include-details",
                            *llm], capsys)
    assert code == 0, err
    assert [kind(r.body) for r in server.requests] == ["assign"]
    got = json.loads((tmp_path / "b.json").read_text())["queries"][0]
    assert got["ground_truth"]["nuggets"] == lines[0]["nuggets"]
    assert got["metrics"]["nugget_all"]["source"] == "set"
    assert (tmp_path / "b.nuggets.jsonl").read_text() == written.read_text()
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"qid": "x9", "nuggets": lines[0]["nuggets"]}) + "\n")
    code, _, err = run_cli(["run", "--outputs", str(second), "--nuggets", str(other), *llm],
                           capsys)
    assert code == 2 and "names none of the dataset's questions" in err


def test_a_compare_scores_every_config_against_the_same_nuggets(server, tmp_path, capsys):
    """Two configs on a set without nuggets: the nuggets are created once (the second
    config's creation comes from the call cache), both configs' answers meet the same
    ones, and the compare writes them beside its results."""
    import json
    from pathlib import Path

    from support.cli import run_cli

    server.rule = scripted
    ds = tmp_path / "set.json"
    ds.write_text(json.dumps([{
        "id": "q1", "question": "What are the two main components of a RAG pipeline?",
        "expected_answer": "A retriever finds passages. A generator writes the answer.",
        "ground_truth_contexts": ["The retriever and the generator are the two main "
                                  "components"]}]))
    demo = Path(__file__).resolve().parents[3] / "src" / "ragmark" / "demo" / "corpus"
    flat = tmp_path / "flat.toml"
    flat.write_text('[retriever]\nname = "bm25"\nb = 0.0\n')
    code, _, err = run_cli(["compare", "--dataset", str(ds), "--corpus", str(demo),
                            "--configs", "sparse", str(flat), "--metrics", "nuggets",
                            "--llm-base-url", server.url, "--llm-model", "test-model",
                            "--output", str(tmp_path / "c"), "--include-details",
                            "--quiet", "--no-history"], capsys)
    assert code == 0, err
    kinds = [kind(r.body) for r in server.requests]
    assert kinds.count("create") == 1 and kinds.count("importance") == 1
    data = json.loads((tmp_path / "c.json").read_text())
    used = [[n["text"] for n in run["queries"][0]["metrics"]["nugget_all"]["nuggets"]]
            for run in data["configs"].values()]
    assert set(data["comparisons"][0]) >= {"metric", "p_value"}
    assert {r["metric"] for r in data["comparisons"]} == set(METRICS)
    assert used[0] == used[1] == ["A retriever finds passages", "A generator writes the answer",
                                  "The retriever and the"]
    written = [json.loads(t) for t in (tmp_path / "c.nuggets.jsonl").read_text().splitlines()]
    assert [n["text"] for n in written[0]["nuggets"]] == used[0]


def test_the_history_knows_which_nuggets_a_run_counted_against(tmp_path, server, capsys,
                                                                monkeypatch):
    """Two runs of one log whose nuggets two judges created differently: `ragmark diff`
    of the history's last two runs refuses to pair their nugget scores, saying why;
    another metric still diffs."""
    import json

    from support.cli import run_cli

    monkeypatch.setenv("RAGMARK_HISTORY", str(tmp_path / "history.sqlite"))
    log = tmp_path / "outputs.jsonl"
    log.write_text(json.dumps({"id": "q1", "question": QUESTION, "answer": "Gustave Eiffel's "
                               "company built it.", "contexts": ["Built by Eiffel."],
                               "expected_answer": EXPECTED}) + "\n")
    for model, first in (("judge-a", "It was finished in 1889"), ("judge-b", "Eiffel")):
        def rule(body, first=first):
            if kind(body) == "create":
                return as_json({"nuggets": [first]})
            return scripted(body)

        server.rule = rule
        code, _, err = run_cli(["run", "--outputs", str(log), "--metrics", "nuggets,groundedness",
                                "--llm-base-url", server.url, "--llm-model", model,
                                "--quiet"], capsys)
        assert code == 0, err
    code, _, err = run_cli(["diff", "last~1", "last"], capsys)
    assert code == 2
    assert "scored nugget_vital_strict, nugget_vital, nugget_all_strict, nugget_all against " \
           "different nuggets" in " ".join(err.split())
    code, out, err = run_cli(["diff", "last~1", "last", "--metrics", "groundedness"], capsys)
    assert code == 0, err
