"""Judges that list what they find in a text (issue 37 item 3): the claims of an answer,
the statements and entities of an expected answer. Under a grammar, SmolLM2 repeated
one claim until the token cap (llama.cpp's server: 4 of 6 SciFact answers without a
faithfulness value, "no JSON object found" in a truncated list). Each call's schema now
bounds the list by the text's length, so the grammar closes it, and a repeated entry is
kept once, so a repeat is neither verified twice nor counted twice."""

from __future__ import annotations

import json

import pytest
from judges_support import as_json, reply, run
from support.fake_llm_server import FakeLLMServer

from ragmark.judges.faithfulness import (
    CLAIMS_PROMPT,
    TURN_CLAIMS_PROMPT,
    ClaimsInput,
    TurnClaimsInput,
    faithfulness,
)
from ragmark.judges.prompt import most_listed, output_schema
from ragmark.judges.reference import (
    CONTEXT_ENTITY_RECALL_PROMPT,
    EntityInput,
    context_recall,
)
from ragmark.llm import LLMClient

TWELVE = "one two three four five six seven eight nine ten eleven twelve"


def test_most_listed_is_a_quarter_of_the_words_and_two():
    assert most_listed("") == 2
    assert most_listed(TWELVE) == 5  # ceil(12 / 4) + 2
    assert most_listed(TWELVE + " thirteen") == 6  # ceil(13 / 4) + 2
    assert most_listed("w " * 1000) == 64


@pytest.mark.parametrize(("prompt", "item", "field"), [
    (CLAIMS_PROMPT, ClaimsInput(question="q", answer=TWELVE), "claims"),
    (TURN_CLAIMS_PROMPT, TurnClaimsInput(conversation=["user: hi"], question="q",
                                         answer=TWELVE), "claims"),
    (CONTEXT_ENTITY_RECALL_PROMPT, EntityInput(expected_answer=TWELVE, context=["c"]),
     "entities"),
])
def test_every_listing_judge_bounds_its_list_by_the_text_it_reads(prompt, item, field):
    _, schema = prompt.schema(item)
    assert schema["properties"][field]["maxItems"] == 5  # of the text, not the question
    assert "minItems" not in schema["properties"][field]
    # the model's own schema is left as it was
    assert "maxItems" not in json.dumps(output_schema(prompt.output_model))
    assert prompt.schema()[1] == output_schema(prompt.output_model)


def test_llama_cpp_turns_the_bound_into_a_grammar_that_closes_the_list():
    grammar = pytest.importorskip("llama_cpp.llama_grammar")
    _, schema = CLAIMS_PROMPT.schema(ClaimsInput(question="q", answer=TWELVE))
    gbnf = grammar.json_schema_to_gbnf(json.dumps(schema))
    rules = dict(ln.split(" ::= ", 1) for ln in gbnf.splitlines() if " ::= " in ln)
    assert rules["claims"].count("string") == 5 and "*" not in rules["claims"]


def test_a_repeated_claim_is_verified_and_counted_once(
        server: FakeLLMServer, client: LLMClient) -> None:
    server.queue.extend([
        as_json({"claims": ["Rain falls.", "rain  falls", "Snow is white.", "Rain falls."]}),
        as_json({"verdicts": [{"claim": 1, "supported": True}, {"claim": 2, "supported": False}]}),
    ])
    score = run(client, faithfulness(client, "q", "Rain falls. Snow is white.", ["Rain."]))
    assert score.value == 0.5  # 1 of 2; the repeats would have made it 3 of 4
    assert score.details["unsupported"] == ["Snow is white."]
    claims_call, verify_call = (r.body for r in server.requests)
    bound = claims_call["response_format"]["json_schema"]["schema"]["properties"]["claims"]
    assert bound["maxItems"] == most_listed("Rain falls. Snow is white.") == 4  # 5 words
    verdicts = verify_call["response_format"]["json_schema"]["schema"]["properties"]["verdicts"]
    assert (verdicts["minItems"], verdicts["maxItems"]) == (2, 2)
    assert verify_call["messages"][-1]["content"].count('<data name="claim"') == 2


def test_a_repeated_statement_keeps_its_first_verdict(
        server: FakeLLMServer, client: LLMClient) -> None:
    server.queue.extend([
        as_json({"claims": ["Curie was born in Warsaw.", "curie was born in warsaw",
                            "Curie was born in 1867."]}),
        as_json({"verdicts": [{"claim": 1, "supported": True}, {"claim": 2, "supported": False}]})])
    score = run(client, context_recall(client, "q", "Curie was born in Warsaw in 1867.",
                                       ["Curie was born in Warsaw."]))
    assert score.value == 0.5  # 1 of 2 (the repeat would have made it 1 of 3)
    assert score.details == {"statements": 2, "unattributed": ["Curie was born in 1867."]}


@pytest.mark.parametrize(("cut", "read"), [
    # a reason cut at the cap: the rating before it stands, the reason as far as it went
    ('{"rating": 3, "reason": "It answers the quest', {"rating": 3,
                                                      "reason": "It answers the quest"}),
    ('{"rating": 3, "rea', {"rating": 3}),  # a key without its value is dropped
    ('{"rating": 3, "reason":', {"rating": 3}),
    # an entry of a list cut in two is dropped: a claim cut in two is not a claim
    ('{"claims": ["A.", "B.", "partial cl', {"claims": ["A.", "B."]}),
    ('{"claims": ["A."', {"claims": ["A."]}),
    ('{"statements":[{"statement":"x","attributed":true},{"statement":"y y',
     {"statements": [{"statement": "x", "attributed": True}]}),
    ('{"r": "a \\"q', {"r": 'a "q'}),  # an escaped quote is not the string's end
])
def test_an_answer_cut_at_the_token_cap_is_read_as_far_as_it_went(cut, read):
    """SmolLM2's answer relevance ran its reason to the 1,024-token cap on 9 of 30
    SciFact answers; 3 were left without a value after the re-ask, though the rating
    came first and was whole."""
    from ragmark.judges.parsing import extract_json

    assert extract_json(cut) == read


def test_a_cut_numbered_answer_still_fails_its_count(
        server: FakeLLMServer, client: LLMClient) -> None:
    server.queue.extend([
        as_json({"claims": ["A.", "B."]}),
        reply('{"verdicts": [{"claim": 1, "supported": true}, {"claim": 2, "supp'),
        as_json({"verdicts": [{"claim": 1, "supported": True}, {"claim": 2, "supported": True}]}),
    ])
    score = run(client, faithfulness(client, "q", "A. B.", ["A. B."]))
    assert score.value == 1.0 and len(server.requests) == 3  # re-asked, not half-read
    assert "expected one verdict for each claim 1..2" in (
        server.requests[2].body["messages"][-1]["content"])


def test_a_number_at_the_cut_is_not_trusted():
    from ragmark.judges.parsing import ParseError, extract_json

    assert extract_json("[1, 2") == [1]  # "2" may have been "25"
    assert extract_json('{"ok": true') == {"ok": True}  # a whole word stands
    with pytest.raises(ParseError):  # nothing whole before the cut: nothing read
        extract_json('{"ok": tr')
