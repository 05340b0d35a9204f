"""The pairwise judge on a real small model (issue 36): SmolLM2-135M in llama.cpp's server,
asked in both orders with the exact schema, gives every pair a verdict or says why not
(its verdicts are near chance and are not measured here)."""

from __future__ import annotations

import asyncio

import pytest
from support.llama import MISSING, WHY_MISSING, llama_server

from ragmark.judges.pairwise import Side, judge_pair, position_bias
from ragmark.judges.prompt import JudgeCounts
from ragmark.llm import LLMClient, LLMSettings

pytestmark = pytest.mark.skipif(MISSING, reason=WHY_MISSING)
PAIRS = [
    ("What is the capital of France?", "Paris is the capital of France.", "Lyon."),
    ("What does BM25 rank?", "Documents, by term frequency.", "Images by colour."),
    ("How many legs has a spider?", "Eight.", "A spider has six legs."),
    ("What is water made of?", "Hydrogen and oxygen.", "Water is made of salt."),
]


def test_every_pair_gets_a_verdict_or_a_reason(tmp_path):
    with llama_server(tmp_path / "server.log") as url:
        settings = LLMSettings(base_url=url, model="smollm2", timeout=300, concurrency=2)

        async def main():
            client = LLMClient(settings)
            counts = JudgeCounts()
            try:
                return await asyncio.gather(*(judge_pair(
                    client, "overall", q, Side(a), Side(b), counts=counts)
                    for q, a, b in PAIRS)), counts
            finally:
                await client.aclose()

        verdicts, counts = asyncio.run(main())
    for v in verdicts:
        assert v.verdict in ("A", "B", "tie") or v.failure, v
        if v.verdict is not None:
            assert len(v.orders) == 2 and all(r for r in v.reasons)
    assert counts.asked >= 2 * sum(v.verdict is not None for v in verdicts)
    bias = position_bias(verdicts)
    assert bias["pairs"] == sum(v.verdict is not None for v in verdicts)
