"""`ragmark testset --scenarios` against a real local HTTP server whose rule writes a
scenario from the passage in each request, as a model would: scenarios whose quotes are
not in their passage, or that repeat one kept, are rejected and counted; what is kept is
a scenarios file `ragmark simulate` reads without a warning, its quotes the scenario's
ground truth; a rerun asks nothing again."""

from __future__ import annotations

import json
import re

from support.cli import run_cli
from testset_support import chat

from ragmark.data.leniency import Leniency
from ragmark.simulate.scenarios import load_scenarios
from ragmark.testset.scenarios import SCENARIO_PROMPT

_PASSAGE = re.compile(r'<data name="passage">\n(.*?)\n</data>', re.DOTALL)


def _writer(body):
    """The passage's first sentence as the quote; Vasa's quote is changed (not in its
    passage); honey and glacier get the same scenario text (the second is a duplicate)."""
    assert body["messages"][0]["content"].startswith(SCENARIO_PROMPT.instruction[:40])
    passage = _PASSAGE.findall(body["messages"][-1]["content"])[-1]
    first = passage.split(". ")[0] + "."
    subject = " ".join(passage.split()[:4])
    if "Vasa" in passage:
        first = first.replace("1628", "1629")
    if "honey" in passage or "glacier" in passage:
        subject = "how things keep for a long time"
    quotes, facts = [first], []
    scenario = f"You want to know about {subject}."
    if "Arabica" in passage:  # the scenario gives its answer away
        scenario = f"You want to know whether {first}"
    if "Spring tides" in passage:  # a paraphrased second quote; a fact that is the answer
        quotes, facts = [first, "Tides are biggest when sun and moon align."], [first]
    return chat(json.dumps({
        "scenario": scenario, "user": "A curious reader.",
        "facts": facts, "expected_outcome": f"The assistant says: {first}",
        "answer": first, "quotes": quotes}))


def test_scenarios_are_written_checked_and_read_by_simulate(corpus, tmp_path, capsys,
                                                            server):
    server.rule = _writer
    out = tmp_path / "scenarios.jsonl"
    args = ["testset", "--scenarios", "--corpus", str(corpus), "--size", "8", "--output",
            str(out), "--unit", "document", "--llm-base-url", server.url, "--llm-model",
            "m"]
    code, said, err = run_cli(args, capsys)
    assert code == 0, err
    report = json.loads((tmp_path / "scenarios.report.json").read_text())
    # 8 documents, one passage each: Vasa's quote is not in it, of honey and glacier
    # the one drawn second repeats the first, coffee's scenario states its answer: 5 kept
    assert (report["generated"], report["kept"]) == (8, 5)
    assert report["rejected_by_reason"] == {"quote_not_in_source": 1,
                                            "duplicate_scenario": 1,
                                            "scenario_states_answer": 1}
    # tides: kept on its one quote found (the paraphrase dropped), its fact (the answer
    # itself) dropped
    assert (report["quotes_dropped"], report["facts_dropped"]) == (1, 1)
    assert "Wrote 5 scenarios to" in said
    assert ("Candidates: 8 generated, 5 kept, 3 rejected (quote not found in its source 1, "
            "near-duplicate scenario 1, the scenario states its answer 1)") in said
    lenient = Leniency(strict=True)
    scenarios = load_scenarios(out, lenient)
    assert len(scenarios) == 5 and not lenient.messages()
    assert [s.id for s in scenarios] == [f"s{i}" for i in range(1, 6)]
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    tides = next(x for x in lines if x["source_ids"] == ["tides.txt"])
    assert tides["ground_truth_contexts"] == [
        "Spring tides happen when the Sun and the Moon line up with the Earth."]
    assert "facts" not in tides
    for line, s in zip(lines, scenarios, strict=True):
        source = (corpus / f"{line['source_ids'][0]}").read_text()
        assert s.ground_truth_contexts[0] in " ".join(source.split())
        assert s.expected_answer == s.ground_truth_contexts[0]
    # a rerun is served from the cache: no request
    before = len(server.requests)
    out.unlink()
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
    assert len(server.requests) == before
    assert [json.loads(x) for x in out.read_text().splitlines()] == lines


def test_scenarios_refuse_question_options(corpus, tmp_path, capsys, server):
    base = ["testset", "--scenarios", "--corpus", str(corpus), "--size", "2",
            "--llm-base-url", server.url, "--llm-model", "m"]
    code, _, err = run_cli([*base, "--types", "factual"], capsys)
    assert code == 2 and "--scenarios writes scenarios for ragmark simulate" in err
    code, _, err = run_cli([*base, "--output", str(tmp_path / "s.json")], capsys)
    assert code == 2 and "give a name ending in .jsonl, got" in err
    assert not server.requests
