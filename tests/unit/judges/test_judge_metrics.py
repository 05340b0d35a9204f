"""Judge metrics against the scripted local LLM server."""

from __future__ import annotations

import pytest
from judges_support import as_json, reply, run
from support.fake_llm_server import FakeLLMServer

from ragmark.judges import (
    JudgeCounts,
    answer_correctness,
    answer_relevance,
    context_relevance,
    faithfulness,
    relevance_label,
)
from ragmark.llm import LLMClient


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("YES", 1.0),
        ("**Yes**", 1.0),
        ("yes.", 1.0),
        ("Answer: YES - the passage gives the year.", 1.0),
        ("NO", 0.0),
        ("No.", 0.0),
        ("Answer: no", 0.0),
        ('{"relevant": false}', 0.0),
    ],
)
def test_relevance_label_variants(
    server: FakeLLMServer, client: LLMClient, text: str, value: float
) -> None:
    server.queue.append(reply(text))
    score = run(client, relevance_label(client, "When?", "In 1889."))
    assert score.value == value
    assert len(server.requests) == 1
    assert server.requests[0].body["temperature"] == 0


def test_relevance_label_custom_template(server: FakeLLMServer, client: LLMClient) -> None:
    server.queue.append(reply("YES"))
    template = "Question: {question}; Retrieved Passage: {passage}. YES or NO?"
    score = run(client, relevance_label(client, "When?", "In 1889.", template=template))
    assert score.value == 1.0
    user = server.requests[0].body["messages"][-1]["content"]
    assert user.startswith('Question: <data name="question">\nWhen?\n</data>; Retrieved')


def test_relevance_label_unusable_twice_is_missing(
    server: FakeLLMServer, client: LLMClient
) -> None:
    server.queue.extend([reply("Maybe"), reply("YES/NO")])
    counts = JudgeCounts()
    score = run(client, relevance_label(client, "When?", "In 1889.", counts=counts))
    assert score.value is None and not score.ok
    assert score.reason is not None and "ambiguous" in score.reason
    assert score.details["raw"] == "YES/NO"
    assert counts.failed == 1
    assert "YES or NO only" in server.requests[1].body["messages"][-1]["content"]


CONTEXTS = ["Marie Curie won the Nobel Prize in Physics in 1903.", "She was born in Warsaw."]
CLAIMS = [
    "Marie Curie won the Nobel Prize in Physics.",
    "Marie Curie was born in Warsaw.",
    "Marie Curie was born in 1867.",
]


def test_faithfulness_two_of_three(server: FakeLLMServer, client: LLMClient) -> None:
    server.queue.extend(
        [
            reply("```json\n" + '{"claims": ' + str(CLAIMS).replace("'", '"') + "}\n```"),
            as_json(
                {
                    "verdicts": [
                        {"claim": 2, "supported": True, "reason": "passage 2"},
                        {"claim": 1, "supported": True, "reason": "passage 1"},
                        {"claim": 3, "supported": False, "reason": "no year of birth"},
                    ]
                }
            ),
        ]
    )
    answer = "Marie Curie, born in Warsaw in 1867, won the Nobel Prize in Physics."
    score = run(client, faithfulness(client, "Who was Marie Curie?", answer, CONTEXTS))
    assert score.value == pytest.approx(2 / 3)
    assert score.details["unsupported"] == ["Marie Curie was born in 1867."]
    assert score.details["claims"] == CLAIMS
    assert len(server.requests) == 2
    verify_user = server.requests[1].body["messages"][-1]["content"]
    assert '<data name="claim" index="3">\nMarie Curie was born in 1867.\n</data>' in verify_user
    assert '<data name="context" index="2">\nShe was born in Warsaw.\n</data>' in verify_user


def test_a_claim_that_restates_the_question_is_left_out(server: FakeLLMServer,
                                                      client: LLMClient) -> None:
    """A question written as a statement (a SciFact claim) listed among the answer's
    claims, as the 1.5B model did on SciFact questions, is left out and named:
    its 15 content words are all the question's and 3 of them (20%) the answer's, whose
    own content words are 12. The other claim is checked alone: value 1.0, not 0.5."""
    from ragmark.judges.reference import context_recall

    question = ("1,000 genomes project enables mapping of genetic sequence variation "
                "consisting of rare variants with larger penetrance effects.")
    echo = "The " + question
    answer = ("Uncommon or rare genetic variants can easily create synthetic associations "
              "credited to common variants in GWAS signals.")
    claim = "Rare genetic variants can create synthetic associations."
    for ask in (faithfulness, context_recall):
        server.queue.extend([as_json({"claims": [echo, claim]}),
                             as_json({"verdicts": [{"claim": 1, "supported": True}]})])
        score = run(client, ask(client, question, answer, CONTEXTS))
        assert score.value == 1.0
        assert score.details["left_out_as_question"] == [echo]
        verify = server.requests[-1].body["messages"][-1]["content"]
        assert '<data name="claim" index="1">\n' + claim in verify
        assert '<data name="claim" index="2">' not in verify
    # a short answer is read through the question: its restatement is its claim
    server.queue.extend([as_json({"claims": [echo]}),
                         as_json({"verdicts": [{"claim": 1, "supported": False}]})])
    score = run(client, faithfulness(client, question, "Yes, it does.", CONTEXTS))
    assert score.value == 0.0 and "left_out_as_question" not in score.details


def test_faithfulness_wrong_verdict_count_is_reasked(
    server: FakeLLMServer, client: LLMClient
) -> None:
    server.queue.extend(
        [
            as_json({"claims": ["A.", "B."]}),
            as_json({"verdicts": [{"claim": 1, "supported": True}]}),
            as_json(
                {"verdicts": [{"claim": 1, "supported": True}, {"claim": 2, "supported": True}]}
            ),
        ]
    )
    score = run(client, faithfulness(client, "q", "A. B.", ["A. B."]))
    assert score.value == 1.0
    assert score.details["unsupported"] == []
    assert len(server.requests) == 3
    assert "one verdict for each claim" in server.requests[2].body["messages"][-1]["content"]


def test_faithfulness_missing_cases(server: FakeLLMServer, client: LLMClient) -> None:
    server.queue.append(as_json({"claims": []}))
    score = run(client, faithfulness(client, "q", "Hello!", CONTEXTS))
    assert score.value is None and score.reason is not None and "no claims" in score.reason
    assert run(client, faithfulness(client, "q", "  ", CONTEXTS)).reason == "empty answer"
    no_ctx = run(client, faithfulness(client, "q", "A.", []))
    assert no_ctx.value is None and no_ctx.reason is not None and "context" in no_ctx.reason
    assert len(server.requests) == 1


def test_faithfulness_judge_failure_keeps_raw(server: FakeLLMServer, client: LLMClient) -> None:
    server.queue.extend([reply("claims: A and B"), reply("still no json")])
    score = run(client, faithfulness(client, "q", "A. B.", CONTEXTS))
    assert score.value is None
    assert score.reason is not None and "faithfulness.claims" in score.reason
    assert score.details["raw"] == "still no json"


def test_answer_relevance(server: FakeLLMServer, client: LLMClient) -> None:
    server.queue.append(reply('Rating: {"rating": 4, "reason": "answers, with extras"}'))
    score = run(client, answer_relevance(client, "q?", "an answer"))
    assert score.value == 0.75
    assert score.details["rating"] == 4
    server.queue.extend([as_json({"rating": 9}), as_json({"rating": 0})])
    bad = run(client, answer_relevance(client, "q?", "an answer"))
    assert bad.value is None and bad.details["raw"] == '{"rating": 0}'


def test_context_relevance(server: FakeLLMServer, client: LLMClient) -> None:
    """Each passage asked on its own (issue 63): a yes/no call a passage."""
    server.rule = lambda body: reply("YES" if '<data name="passage">\na' in body[
        "messages"][-1]["content"] or '<data name="passage">\nc' in body["messages"][-1][
        "content"] else "NO")
    score = run(client, context_relevance(client, "q?", ["a", "b", "c", "d"]))
    assert score.value == 0.5
    assert score.details["irrelevant"] == [2, 4]
    asked = [r.body["messages"][-1]["content"] for r in server.requests]
    assert len(asked) == 4 and all(m.count('<data name="passage">') == 1 for m in asked)
    assert run(client, context_relevance(client, "q?", [])).value is None


def test_answer_correctness(server: FakeLLMServer, client: LLMClient) -> None:
    server.queue.append(as_json({"verdict": "partially_correct", "reason": "half"}))
    score = run(client, answer_correctness(client, "q?", "French", "English and French"))
    assert score.value == 0.5
    assert score.details["verdict"] == "partially_correct"
    none = run(client, answer_correctness(client, "q?", "French", None))
    assert none.value is None and none.reason == "no expected_answer for this question"
    assert len(server.requests) == 1
