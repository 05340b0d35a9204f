"""A verdict's probability from the judge's log-probabilities (issue 63, item 1), hand
worked: the alternatives at the token where the value is written, renormalised over the
allowed values (G-Eval's probability-weighted score, Liu et al. 2023, section 2.3: the
score is the sum of each score times its probability)."""

from __future__ import annotations

import math
from typing import Literal

import pytest
from pydantic import BaseModel, Field

from ragmark.judges.odds import choices_of, expected, odds_of
from ragmark.llm.logprobs import compact, decode, encode


class Verdict(BaseModel):
    claim: int
    supported: bool


class Verdicts(BaseModel):
    verdicts: list[Verdict]


class Rated(BaseModel):
    rating: int = Field(ge=1, le=5)
    reason: str = ""


class Graded(BaseModel):
    verdict: Literal["correct", "partially_correct", "incorrect"]


def _content(tokens):
    """An OpenAI logprobs.content list: (token, [(alternative, p), ...])."""
    return [{"token": t, "logprob": math.log(alts[0][1]) if alts else 0.0,
             "top_logprobs": [{"token": a, "logprob": math.log(p)} for a, p in alts]}
            for t, alts in tokens]


def test_a_bool_verdict_per_claim_and_a_sure_one():
    tokens = [('{"verdicts":[{"claim":1,"supported":', []),
              ("true", [("true", 0.6), ("false", 0.3), ("tr", 0.05), ("}", 0.05)]),
              ('},{"claim":2,"supported":', []), ("false", [("false", 1.0)]), ("}]}", [])]
    text = "".join(t for t, _ in tokens)
    alts = compact(_content(tokens))
    assert alts is not None and len(alts) == 1  # only where the model hesitated
    assert decode(encode(alts)) == alts
    data = Verdicts.model_validate_json(text).model_dump()
    odds = odds_of(text, data, Verdicts, alts)
    # 0.6 + 0.05 ("tr" begins "true") against 0.3; "}" begins no allowed value
    assert odds[("verdicts", 0, "supported")] == pytest.approx({True: 0.65 / 0.95,
                                                               False: 0.3 / 0.95})
    assert odds[("verdicts", 1, "supported")] == {False: 1.0}  # no hesitation: sure


def test_a_rating_weighted_by_its_probabilities():
    tokens = [('{"rating": ', []), ("4", [("4", 0.5), ("5", 0.3), ("3", 0.1), ("x", 0.1)]),
              (', "reason": "fine"}', [])]
    text = "".join(t for t, _ in tokens)
    odds = odds_of(text, {"rating": 4, "reason": "fine"}, Rated, compact(_content(tokens)))
    # (4 * 0.5 + 5 * 0.3 + 3 * 0.1) / 0.9
    assert expected(odds[("rating",)]) == pytest.approx(3.8 / 0.9)
    assert choices_of(Rated) == {"rating": {str(v): v for v in range(1, 6)}}


def test_a_literal_read_after_its_quote_and_a_yes_no_word():
    tokens = [('{"verdict": ', []), ('"part', [('"part', 0.5), ('"correct', 0.4),
                                               ('"in', 0.1)]), ('ially_correct"}', [])]
    text = "".join(t for t, _ in tokens)
    odds = odds_of(text, {"verdict": "partially_correct"}, Graded, compact(_content(tokens)))
    assert odds[("verdict",)] == pytest.approx({"correct": 0.4, "partially_correct": 0.5,
                                                "incorrect": 0.1})
    yes = [("YES", [("YES", 0.7), ("NO", 0.2), ("Yes", 0.05), ("The", 0.05)])]
    odds = odds_of("YES", None, Verdict, compact(_content(yes)), yes_no=True)
    assert odds[()] == pytest.approx({True: 0.75 / 0.95, False: 0.2 / 0.95})


def test_verdicts_that_cannot_be_matched_to_the_text_get_none():
    text = '{"verdicts":[{"claim":1,"supported":true}]} also "supported": false'
    alts = compact(_content([(text, [])]))
    assert odds_of(text, {"verdicts": [{"claim": 1, "supported": True}]}, Verdicts,
                   alts) == {}
    assert compact(None) is None and compact([{"token": "a"}]) == ()


def test_a_yes_no_verdict_written_as_json_is_read_as_json():
    """A server that holds every answer to JSON writes a yes/no verdict as
    ``{"relevant": true}``: its odds are read at the bool."""
    from ragmark.judges.answers import PassageRelevance
    from ragmark.judges.odds import answer_odds

    tokens = [('{"relevant": ', []), ("true", [("true", 0.9), ("false", 0.1)]), ("}", [])]
    text = "".join(t for t, _ in tokens)
    odds = answer_odds(text, PassageRelevance, compact(_content(tokens)), yes_no=True)
    assert odds == {("relevant",): pytest.approx({True: 0.9, False: 0.1})}
    assert answer_odds(text, PassageRelevance, None, yes_no=True) is None


def test_tokens_that_hold_the_answer_in_a_code_fence_are_read_where_it_starts():
    """llama.cpp's llama-server (build 11434) returns the JSON the model wrote in a code
    fence without the fence, and its tokens with it: the offsets are counted from where
    the answer starts, so the verdict's probability is read at its own token (0.7 / 0.9
    for true against false; "}" begins neither). Tokens that spell another text give no
    probabilities at all: the verdict stays hard."""
    from ragmark.judges.answers import PassageRelevance
    from ragmark.judges.odds import answer_odds

    tokens = [("```", [("```", 0.6), ('{"', 0.4)]), ("json\n", []),
              ('{"relevant": ', []), ("true", [("true", 0.7), ("false", 0.2), ("}", 0.1)]),
              ("}", []), ("\n```", [])]
    text = '{"relevant": true}'
    alts = compact(_content(tokens), text)
    assert alts == ((13, "true", (("true", math.log(0.7)), ("false", math.log(0.2)),
                                  ("}", math.log(0.1)))),)
    odds = answer_odds(text, PassageRelevance, alts, yes_no=True)
    assert odds == {("relevant",): pytest.approx({True: 0.7 / 0.9, False: 0.2 / 0.9})}
    assert compact(_content(tokens), '{"relevant": false}') is None
    assert compact(_content(tokens[2:5]), text) == compact(_content(tokens[2:5]))
