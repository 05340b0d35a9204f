"""The shared start of every judge prompt (issue 37 item 2, prefix reuse): what all of
one judge's calls share (its instruction, the answer format, its examples) comes first
and is byte-identical from question to question; what varies (the question's data)
comes last, in one message. llama.cpp's and vLLM's prompt caches then reuse the shared
start: on SciFact with SmolLM2, 54% of the faithfulness judge's prompt tokens came from
llama.cpp's cache (benchmarks/results/judges_vs_ragas_smollm2.md)."""

from __future__ import annotations

import asyncio
import re
from collections import defaultdict

from support.fake_llm_server import FakeLLMServer

from ragmark.case import Case
from ragmark.judges.prompt import JudgeCounts
from ragmark.llm import LLMClient, LLMSettings
from ragmark.metrics.names import catalogue

CASES = [Case.of("Who wrote Dracula?", "Bram Stoker wrote Dracula [1].",
                   ["Dracula is an 1897 novel by Bram Stoker.", "Stoker was Irish."],
                   "Bram Stoker wrote it in 1897."),
         Case.of("What does metformin do?", "It lowers glucose output [2].",
                   ["Metformin is a drug.", "Metformin lowers hepatic glucose output."],
                   "Metformin lowers glucose production in the liver.")]


def _judge_metrics() -> list[str]:
    return sorted(n for n, m in catalogue().items() if m.kind == "judge" and m.compute)


def test_every_judge_call_starts_with_what_all_its_calls_share(server: FakeLLMServer):
    async def go():
        async with LLMClient(LLMSettings(base_url=server.url, model="test-model",
                                         max_retries=0), use_cache=False) as c:
            for case in CASES:
                for name in _judge_metrics():
                    await catalogue()[name].compute(c, case, JudgeCounts())

    asyncio.run(go())
    by_judge: dict[str, list[list[dict]]] = defaultdict(list)
    for r in server.requests:
        messages = r.body["messages"]
        if any(m["content"].startswith("That answer could not be used") for m in messages):
            continue  # a re-ask appends to its own call
        by_judge[messages[0]["content"]].append(messages)
    shared = [calls for calls in by_judge.values() if len(calls) >= 2]
    assert len(shared) >= 8  # the judges whose first call needs no earlier answer
    for calls in shared:
        starts = {repr(m[:-1]) for m in calls}
        assert len(starts) == 1, calls[0][0]["content"][:60]  # byte-identical start
        for m in calls:  # the question's own data: only in the last message
            assert m[-1]["role"] == "user"
            assert not any(case.question in str(x["content"]) for x in m[:-1]
                           for case in CASES)


def test_the_contexts_come_before_what_is_checked_against_them():
    from ragmark.judges.faithfulness import VERIFY_PROMPT, VerifyInput

    text = VERIFY_PROMPT.render(VerifyInput(context=["c1", "c2"], claim=["a", "b"]))[-1]
    names = re.findall(r'<data name="(\w+)"', text["content"])
    assert names == ["context", "context", "claim", "claim"]
