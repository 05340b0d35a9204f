"""Judge schemas with exact counts (issue 20 item 3): a judge whose answer numbers the
items of its input (claims, passages, statements) is sent, with every call, a schema
that allows exactly one entry per item, numbered 1..n; the count check stays for
servers that ignore schemas."""

from __future__ import annotations

import json

import pytest
from judges_support import as_json, run
from support.fake_llm_server import FakeLLMServer

from ragmark.judges.faithfulness import CLAIMS_PROMPT, VERIFY_PROMPT, VerifyInput, faithfulness
from ragmark.judges.prompt import output_schema
from ragmark.judges.reference import CITATION_PROMPT, CitationInput
from ragmark.llm import LLMClient
from ragmark.llm.structured import pinned, wire


def _verdicts(schema: dict) -> dict:
    return schema["properties"]["verdicts"]


@pytest.mark.parametrize(("prompt", "item", "field", "n"), [
    (VERIFY_PROMPT, VerifyInput(context=["c"], claim=["a", "b", "c"]), "claim", 3),
    (CITATION_PROMPT, CitationInput(context=["x"], cited=["s [1]"]), "statement", 1),
])
def test_every_numbered_judge_holds_the_count(prompt, item, field, n):
    name, schema = prompt.schema(item)
    v = _verdicts(schema)
    assert (v["minItems"], v["maxItems"]) == (n, n)
    assert v["items"]["properties"][field] == {"type": "integer", "enum": list(range(1, n + 1))}
    assert v["items"]["required"] == list(v["items"]["properties"])
    assert v["items"]["additionalProperties"] is False
    assert "$ref" not in json.dumps(schema)  # the entry is inlined, no dangling $defs
    # without an item (or a judge that does not number) the schema is the model's own
    assert prompt.schema()[1] == output_schema(prompt.output_model)
    assert "minItems" not in json.dumps(prompt.schema()[1])


def test_each_call_carries_its_own_count(server: FakeLLMServer, client: LLMClient) -> None:
    server.queue.extend([
        as_json({"claims": ["A.", "B."]}),
        as_json({"verdicts": [{"claim": 1, "supported": True},
                              {"claim": 2, "supported": False}]}),
        as_json({"claims": ["A.", "B.", "C."]}),
        as_json({"verdicts": [{"claim": i, "supported": True} for i in (1, 2, 3)]}),
    ])
    assert run(client, faithfulness(client, "q", "A. B.", ["A."])).value == 0.5
    assert run(client, faithfulness(client, "q", "A. B. C.", ["A. B. C."])).value == 1.0
    sent = [r.body["response_format"]["json_schema"]["schema"] for r in server.requests]
    assert "minItems" not in json.dumps(sent[0])  # the claims list: bounded, no count
    assert (_verdicts(sent[1])["minItems"], _verdicts(sent[1])["maxItems"]) == (2, 2)
    assert _verdicts(sent[1])["items"]["properties"]["claim"]["enum"] == [1, 2]
    assert (_verdicts(sent[3])["minItems"], _verdicts(sent[3])["maxItems"]) == (3, 3)


def test_a_server_that_ignores_the_schema_still_meets_the_check(
        server: FakeLLMServer, client: LLMClient) -> None:
    server.queue.extend([
        as_json({"claims": ["A.", "B."]}),
        as_json({"verdicts": [{"claim": 1, "supported": True},
                              {"claim": 1, "supported": True}]}),  # count right, numbers not
        as_json({"verdicts": [{"claim": 2, "supported": True},
                              {"claim": 1, "supported": False}]}),
    ])
    score = run(client, faithfulness(client, "q", "A. B.", ["A."]))
    assert score.value == 0.5 and score.details["unsupported"] == ["A."]
    assert "one verdict for each claim 1..2, got claims [1, 1]" in (
        server.requests[2].body["messages"][-1]["content"])


def test_llama_cpp_turns_the_schema_into_a_grammar_of_exactly_n():
    """llama.cpp's own converter (the Python server's) takes the schema, and the grammar
    it builds repeats the entry exactly n times, numbered 1..n."""
    grammar = pytest.importorskip("llama_cpp.llama_grammar")
    _, schema = VERIFY_PROMPT.schema(VerifyInput(context=["c"], claim=["a", "b", "c"]))
    gbnf = grammar.json_schema_to_gbnf(json.dumps(schema))
    rules = dict(ln.split(" ::= ", 1) for ln in gbnf.splitlines() if " ::= " in ln)
    assert rules["verdicts-item-claim"] == '"1" | "2" | "3"'
    assert rules["verdicts"] == ('"[" space verdicts-item "," space verdicts-item "," space '
                                 'verdicts-item "]" space')
    # the json_object form (llama.cpp's) goes as a tuple: the i-th verdict is numbered i
    sent = wire("json_object", "VerifyOutput", schema)["response_format"]["schema"]
    assert sent == pinned(schema) and "items" not in sent["properties"]["verdicts"]
    gbnf = grammar.json_schema_to_gbnf(json.dumps(sent))
    rules = dict(ln.split(" ::= ", 1) for ln in gbnf.splitlines() if " ::= " in ln)
    assert rules["verdicts"] == ('"[" space verdicts-tuple-0 "," space verdicts-tuple-1 "," '
                                 'space verdicts-tuple-2 "]" space')
    assert [rules[f"verdicts-tuple-{i}-claim"] for i in range(3)] == ['"1"', '"2"', '"3"']
    # OpenAI's strict form keeps the portable schema
    strict = wire("json_schema", "VerifyOutput", schema)["response_format"]["json_schema"]
    assert strict["schema"] == schema


def test_pinning_leaves_other_schemas_alone():
    plain = output_schema(VERIFY_PROMPT.output_model)
    assert pinned(plain) == plain
    _, claims = CLAIMS_PROMPT.schema()
    assert pinned(claims) == claims
