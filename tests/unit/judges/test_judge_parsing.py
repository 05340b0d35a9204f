"""Tolerant parsing of judge output: JSON in prose and fences, YES/NO variants."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragmark.judges.parsing import ParseError, extract_json, parse_yes_no

OBJ = {"verdict": "yes", "score": 3}


@pytest.mark.parametrize(
    "text",
    [
        '{"verdict": "yes", "score": 3}',
        '  {"verdict": "yes", "score": 3}\n',
        '```json\n{"verdict": "yes", "score": 3}\n```',
        '```JSON\n{"verdict": "yes", "score": 3}\n```',
        '```\n{"verdict": "yes", "score": 3}\n```',
        'Here is my evaluation:\n```json\n{"verdict": "yes", "score": 3}\n```\nLet me know!',
        'Sure! The result is {"verdict": "yes", "score": 3}. Hope this helps.',
        '{"verdict": "yes", "score": 3,}',
        '{\n  "verdict": "yes",\n  "score": 3,\n}\n',
        "{\u201cverdict\u201d: \u201cyes\u201d, \u201cscore\u201d: 3}",
        "{'verdict': 'yes', 'score': 3}",
        '<think>maybe {"verdict": "no"}? Let me think.</think>{"verdict": "yes", "score": 3}',
        'Answer:\n\n{"verdict": "yes", "score": 3}\n\nReason: the passage says so.',
        'I first considered [the context] and then: {"verdict": "yes", "score": 3}',
    ],
)
def test_extract_json_object_variants(text: str) -> None:
    assert extract_json(text) == OBJ


def test_extract_json_keeps_braces_and_commas_inside_strings() -> None:
    text = 'Result: {"reason": "a } b, ] c,", "items": [1, 2,],} done'
    assert extract_json(text) == {"reason": "a } b, ] c,", "items": [1, 2]}


def test_extract_json_arrays_and_nesting() -> None:
    assert extract_json('claims:\n["a", "b",]') == ["a", "b"]
    nested = '```json\n{"verdicts": [{"claim": 1, "supported": true},]}\n```'
    assert extract_json(nested) == {"verdicts": [{"claim": 1, "supported": True}]}


def test_extract_json_first_valid_fence_wins() -> None:
    text = '```json\n{not json}\n```\nthen\n```json\n{"a": 1}\n```'
    assert extract_json(text) == {"a": 1}


@pytest.mark.parametrize(
    "text",
    ["", "   ", "no json here", "The result {incomplete", "42", '"just a string"'],
)
def test_extract_json_failures(text: str) -> None:
    with pytest.raises(ParseError) as e:
        extract_json(text)
    assert e.value.reason


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda kids: (
        st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids, max_size=4)
    ),
    max_leaves=10,
)


@given(
    value=st.dictionaries(st.text(max_size=8), json_values, max_size=4),
    before=st.sampled_from(["", "Sure.\n", "Here you go: ", "Result:\n```json\n"]),
    after=st.sampled_from(["", "\n", " Thanks!", "\n```\nDone."]),
    indent=st.sampled_from([None, 2]),
)
def test_extract_json_roundtrip_in_prose(
    value: dict[str, Any], before: str, after: str, indent: int | None
) -> None:
    assert extract_json(before + json.dumps(value, indent=indent) + after) == value


@pytest.mark.parametrize(
    "text",
    [
        "YES",
        "Yes",
        "yes",
        "yes.",
        "Yes!",
        " YES \n",
        "**Yes**",
        "*YES*",
        "`yes`",
        '"Yes"',
        "\u201cYES\u201d",
        "Answer: YES",
        "Answer: yes, the passage states the date.",
        "## Yes",
        "Yes - the passage answers it.",
        "Yes, no doubt.",
        "Y",
        "true",
        '{"answer": "yes"}',
        "<think>It could be no... but actually</think>YES",
        "Label: YES\nReason: no other passage needed",
    ],
)
def test_parse_yes_variants(text: str) -> None:
    assert parse_yes_no(text) is True


@pytest.mark.parametrize(
    "text",
    [
        "NO",
        "No",
        "no.",
        "No!",
        "**No**",
        "**NO.**",
        "Answer: NO",
        "answer: no",
        "No, the passage is about something else.",
        "N",
        "False",
        "NO\n\nThe passage does not mention yes-votes.",
    ],
)
def test_parse_no_variants(text: str) -> None:
    assert parse_yes_no(text) is False


@pytest.mark.parametrize(
    "text",
    ["", "Maybe", "I cannot tell.", "YES/NO", "yes or no", "Yes | No", "Nope", "Not sure", "yesno"],
)
def test_parse_yes_no_failures(text: str) -> None:
    with pytest.raises(ParseError):
        parse_yes_no(text)


def test_words_containing_yes_or_no_are_not_tokens() -> None:
    with pytest.raises(ParseError):
        parse_yes_no("Nothing noted; eyes only; known unknowns")
    assert parse_yes_no("Nobody knows, but no.") is False


def test_extract_json_reads_a_raw_newline_inside_a_string() -> None:
    # SmolLM2 under llama.cpp's grammar wrote this (the grammar's strings allow any
    # character but the quote); strict JSON refuses the control character
    raw = ('{"verdicts":[{"claim":1,"supported":true,"reason":"stated"} , {"claim":2,'
           '"supported":false,"reason":"they control everything}}}\n<data name="}] }')
    got = extract_json(raw)
    assert [v["claim"] for v in got["verdicts"]] == [1, 2]
    assert got["verdicts"][1]["reason"] == 'they control everything}}}\n<data name='
