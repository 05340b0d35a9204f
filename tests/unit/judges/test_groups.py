"""A numbered judge call too long for the window is asked in groups of its items before
any text is cut (issue 37 item 2, "fewer calls ... falling back to smaller groups when
the window does not hold them"): a judge that numbers passages (judges_support's
numbered precision) over four long passages in a window that holds two is two calls of
two, each with its exact count, no passage cut, the verdicts numbered back in order; when
even one passage a call does not fit, the call is cut as before."""

from __future__ import annotations

import asyncio
import json
import re

from judges_support import numbered_precision
from support.fake_llm_server import FakeLLMServer, chat_reply

from ragmark.judges.fit import CUT_MARK
from ragmark.judges.groups import split
from ragmark.judges.prompt import JudgeCounts
from ragmark.llm import LLMClient, LLMSettings

USEFUL = "Metformin lowers hepatic glucose output. "
PASSAGES = [USEFUL * 15, "Unrelated text about rivers and hills. " * 15,
            "Another unrelated passage on bridges. " * 16, USEFUL * 15]
_BLOCK = re.compile(r'<data name="context" index="(\d+)">\n(.*?)\n</data>', re.S)


def _verdicts(body):
    blocks = _BLOCK.findall(body["messages"][-1]["content"])
    return chat_reply(json.dumps({"verdicts": [
        {"passage": int(i), "useful": text.startswith("Metformin")} for i, text in blocks]}))


def _judge(server: FakeLLMServer, window: int):
    server.rule = _verdicts
    server.n_ctx = window

    async def go():
        async with LLMClient(LLMSettings(base_url=server.url, model="test-model",
                                         context_window=window), use_cache=False) as c:
            counts = JudgeCounts()
            score = await numbered_precision(c, "What does metformin do?",
                                            "It lowers glucose output.", PASSAGES,
                                            counts=counts)
            return score, counts

    return asyncio.run(go())


def test_split_is_contiguous_and_near_equal():
    assert split(4, 2) == [(0, 2), (2, 4)]
    assert split(5, 3) == [(0, 2), (2, 4), (4, 5)]


def test_four_passages_in_a_window_for_two_are_two_calls_of_two(server: FakeLLMServer):
    score, counts = _judge(server, window=1100)
    calls = [r.body for r in server.requests]
    assert len(calls) == 2 and counts.asked == 2 and counts.cut == 0
    for call in calls:
        v = call["response_format"]["json_schema"]["schema"]["properties"]["verdicts"]
        assert (v["minItems"], v["maxItems"]) == (2, 2)
        assert CUT_MARK not in json.dumps(call)
    # both halves whole, in order: passages 1-2, then 3-4 (numbered 1-2 in their call)
    assert [len(_BLOCK.findall(c["messages"][-1]["content"])) for c in calls] == [2, 2]
    assert "bridges" in calls[1]["messages"][-1]["content"]
    # useful [yes, no, no, yes]: (1/1 + 2/4) / 2
    assert score.value == 0.75 and score.details["useful"] == [1, 4]


def test_a_window_too_small_for_one_passage_cuts_as_before(server: FakeLLMServer):
    score, counts = _judge(server, window=680)
    (call,) = [r.body for r in server.requests]
    assert counts.cut == 1 and CUT_MARK in json.dumps(call)
    assert len(_BLOCK.findall(call["messages"][-1]["content"])) == 4
    assert score.value == 0.75


def test_a_call_that_fits_is_one_call(server: FakeLLMServer):
    score, counts = _judge(server, window=4000)
    assert len(server.requests) == 1 and counts.asked == 1 and score.value == 0.75
