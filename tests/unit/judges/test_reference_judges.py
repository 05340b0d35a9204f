"""The reference-based judges on hand-worked cases through the scripted server:
context_recall, context_precision, citation_correctness (and when each is missing)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from judges_support import as_json, reply, run
from support.cli import run_cli

from ragmark.judges.reference import (
    citation_correctness,
    cited_sentences,
    context_precision,
    context_precision_without_reference,
    context_recall,
    rank_weighted_precision,
)

CONTEXTS = ["Marie Curie was born in Warsaw.", "She won two Nobel prizes.",
            "Warsaw is the capital of Poland."]


def last_user(server) -> str:
    return [m["content"] for m in server.requests[-1].body["messages"]
            if m["role"] == "user"][-1]


def test_context_recall_is_the_share_of_attributed_statements(client, server):
    """Faithfulness's two calls asked of the expected answer: its statements listed
    once, then one verdict each by place (the fewest tokens that carry them)."""
    server.queue.extend([
        as_json({"claims": ["Curie was born in Warsaw.", "Curie was born in 1867."]}),
        as_json({"verdicts": [{"claim": 1, "supported": True}, {"claim": 2, "supported": False}]})])
    s = run(client, context_recall(client, "Where and when?", "Warsaw, 1867.", CONTEXTS))
    assert s.value == 0.5
    assert s.details == {"statements": 2, "unattributed": ["Curie was born in 1867."]}
    listing, checking = ([m["content"] for m in r.body["messages"] if m["role"] == "user"][-1]
                         for r in server.requests)
    assert '<data name="answer">\nWarsaw, 1867.\n</data>' in listing
    assert "context" not in listing
    assert '<data name="context" index="3">' in checking
    assert '<data name="claim" index="2">\nCurie was born in 1867.\n</data>' in checking
    verdicts = server.requests[1].body["response_format"]["json_schema"]["schema"][
        "properties"]["verdicts"]
    assert (verdicts["minItems"], verdicts["maxItems"]) == (2, 2)
    assert verdicts["items"]["properties"] == {  # no statement restated, no reason
        "claim": {"type": "integer", "enum": [1, 2]}, "supported": {"type": "boolean"}}


def test_context_recall_and_faithfulness_share_their_calls(server, tmp_path):
    """An answer that is the expected answer: context recall's calls are faithfulness's,
    answered from the client's cache."""
    from ragmark.judges.faithfulness import faithfulness
    from ragmark.llm import LLMClient, LLMSettings
    from ragmark.llm.cache import LLMCache

    server.queue.extend([as_json({"claims": ["Curie was born in Warsaw."]}),
                         as_json({"verdicts": [{"claim": 1, "supported": True}]})])
    settings = LLMSettings(base_url=server.url, model="test-model", timeout=5.0)
    client = LLMClient(settings, cache=LLMCache(tmp_path / "cache"))
    said = "Curie was born in Warsaw."
    f = run(client, faithfulness(client, "Where?", said, CONTEXTS))
    r = run(client, context_recall(client, "Where?", said, CONTEXTS))
    assert f.value == r.value == 1.0 and len(server.requests) == 2


def test_context_recall_missing_cases(client, server):
    s = run(client, context_recall(client, "q", None, CONTEXTS))
    assert s.reason == "no expected_answer for this question"
    assert run(client, context_recall(client, "q", "a", [])).reason == "no retrieved context"
    server.queue.append(as_json({"claims": []}))
    s = run(client, context_recall(client, "q", "Nothing.", CONTEXTS))
    assert s.reason == "the judge found no statement in the expected answer"
    assert len(server.requests) == 1


def _useful(*texts):
    """Yes for the passages whose text is one of ``texts``, each asked on its own."""
    def rule(body):
        asked = next(m["content"] for m in body["messages"]  # the item (a re-ask follows)
                     if m["role"] == "user" and '<data name="passage">' in m["content"])
        passage = asked.split('<data name="passage">\n')[1].split("\n</data>")[0]
        return reply("YES" if passage in texts else "NO")
    return rule


def test_context_precision_weighs_by_rank(client, server):
    server.rule = _useful(CONTEXTS[0], CONTEXTS[2])
    s = run(client, context_precision(client, "Where?", "Warsaw.", CONTEXTS))
    assert s.value == pytest.approx((1 / 1 + 2 / 3) / 2)
    assert s.details["useful"] == [1, 3]
    assert rank_weighted_precision([False, True]) == 0.5
    assert rank_weighted_precision([False, False]) == 0.0


def test_context_precision_re_asks_an_unusable_verdict(client, server):
    """A passage's answer that is not YES or NO is asked again, once."""
    server.queue.append(reply("Maybe."))
    server.rule = _useful(CONTEXTS[1])
    s = run(client, context_precision(client, "Where?", "Warsaw.", CONTEXTS))
    assert s.value == 0.5 and len(server.requests) == 4  # 3 passages, one asked twice


def test_context_precision_without_reference_reads_the_answer(client, server):
    """RAGAS's LLMContextPrecisionWithoutReference: useful for the answer given."""
    server.rule = _useful(CONTEXTS[1])
    s = run(client, context_precision_without_reference(
        client, "How many prizes?", "She won two Nobel prizes.", CONTEXTS))
    assert s.value == 0.5 and s.details["useful"] == [2]
    assert all('<data name="answer">\nShe won two Nobel prizes.' in last_item(r.body)
               and "expected" not in r.body["messages"][0]["content"]
               for r in server.requests)
    s = run(client, context_precision_without_reference(client, "Q?", " ", CONTEXTS))
    assert s.value is None and s.reason == "empty answer"


def test_citation_correctness_checks_each_cited_sentence(client, server):
    answer = "Curie was born in Warsaw [1]. She won three Nobel prizes [2]. Poland is big."
    assert cited_sentences(answer, 3) == [("Curie was born in Warsaw.", [1]),
                                          ("She won three Nobel prizes.", [2])]
    server.queue.append(as_json({"verdicts": [{"statement": 1, "supported": True},
                                              {"statement": 2, "supported": False}]}))
    s = run(client, citation_correctness(client, answer, CONTEXTS))
    assert s.value == 0.5
    assert s.details == {"cited": 2, "unsupported": ["She won three Nobel prizes."]}
    user = last_user(server)
    assert "Curie was born in Warsaw. (cites 1)" in user
    s = run(client, citation_correctness(client, "No citation here.", CONTEXTS))
    assert s.reason == "the answer cites no context ([n])" and len(server.requests) == 1


def test_a_run_reports_them(server, tmp_path, capsys):
    def rule(body):
        system = body["messages"][0]["content"]
        if "Break the answer into its factual claims" in system:
            return as_json({"claims": ["s"]})
        if "Check each numbered claim" in system:
            return as_json({"verdicts": [{"claim": 1, "supported": True}]})
        if "useful for arriving" in system:  # one passage a call: each useful
            return reply("YES")
        return reply("?")

    server.rule = rule
    ds = tmp_path / "set.json"
    ds.write_text(json.dumps([{"question": "What is a RAG pipeline made of?",
                               "expected_answer": "A retriever and a generator.",
                               "ground_truth_contexts": ["a retriever finds the passages"]}]))
    demo = Path(__file__).resolve().parents[3] / "src" / "ragmark" / "demo" / "corpus"
    out = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--dataset", str(ds), "--corpus", str(demo),
                            "--metrics", "mrr,context_recall,context_precision",
                            "--llm-base-url", server.url, "--llm-model", "test-model",
                            "--output", str(out), "--allow-missing", "--quiet"], capsys)
    assert code == 0, err
    metrics = json.loads(out.read_text())["metrics"]  # judge metrics asked with --metrics
    assert metrics["context_recall"] == 1.0 and metrics["context_precision"] == 1.0
    assert "mrr@10" in metrics


def last_item(body) -> str:
    return [m["content"] for m in body["messages"] if m["role"] == "user"][-1]


def test_context_entity_recall_counts_each_entity_once(client, server):
    from ragmark.judges.reference import context_entity_recall

    server.queue.append(as_json({"entities": [
        {"entity": "Marie Curie", "in_context": True},
        {"entity": "Warsaw", "in_context": True},
        {"entity": "warsaw", "in_context": True},
        {"entity": "1867", "in_context": False}]}))
    s = run(client, context_entity_recall(client, "Marie Curie, Warsaw, 1867.", CONTEXTS))
    assert s.value == pytest.approx(2 / 3)
    assert s.details == {"entities": 3, "missing": ["1867"]}
    server.queue.append(as_json({"entities": []}))
    s = run(client, context_entity_recall(client, "yes", CONTEXTS))
    assert s.reason == "the judge found no entity in the expected answer"
    assert run(client, context_entity_recall(client, None, CONTEXTS)).reason == (
        "no expected_answer for this question")
