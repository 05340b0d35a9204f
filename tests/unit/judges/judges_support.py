"""Helpers for the judge tests: scripted replies for the local LLM server."""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Coroutine
from typing import Any, TypeVar

from pydantic import BaseModel, Field
from support.fake_llm_server import Reply, chat_reply

from ragmark.judges.prompt import (
    JudgeCounts,
    JudgeFailure,
    Numbered,
    Prompt,
    ask,
    in_order,
)
from ragmark.judges.reference import rank_weighted_precision
from ragmark.llm import LLMClient
from ragmark.types import Score

T = TypeVar("T")


def reply(text: str) -> Reply:
    """A 200 OpenAI chat answer whose message content is ``text``."""
    return Reply(
        body={
            "id": "x",
            "object": "chat.completion",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
        }
    )


def weighed_reply(tokens: list[tuple[str, list[tuple[str, float]]]], logprobs: bool = True
                  ) -> Reply:
    """A chat answer written as ``tokens`` (text, [(alternative, probability), ...]):
    with ``logprobs`` each token's top log-probabilities as OpenAI's chat completions give
    them (``choices[0].logprobs.content``); a token without alternatives was sure."""
    reply = chat_reply("".join(t for t, _ in tokens))
    if logprobs:
        reply.body["choices"][0]["logprobs"] = {"content": [
            {"token": t, "logprob": math.log(alts[0][1]) if alts else 0.0,
             "top_logprobs": [{"token": a, "logprob": math.log(p)} for a, p in alts]
             or [{"token": t, "logprob": 0.0}]} for t, alts in tokens]}
    return reply


def as_json(value: Any) -> Reply:
    return reply(json.dumps(value))


def run(client: LLMClient, coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` in a fresh event loop, then close the client's connections."""

    async def main() -> T:
        try:
            return await coro
        finally:
            await client.aclose()

    return asyncio.run(main())


class Passages(BaseModel):
    """The input of :data:`NUMBERED_PRECISION`."""

    question: str
    expected_answer: str
    context: list[str]


class _Useful(BaseModel):
    passage: int = Field(description="the number of the passage, from 1")
    useful: bool


class _Verdicts(BaseModel):
    verdicts: list[_Useful]


NUMBERED_PRECISION: Prompt[Passages, _Verdicts] = Prompt(
    name="numbered_precision",
    instruction=("For each numbered context passage, decide whether it was useful for "
                 "arriving at the expected answer to the question (useful: true) or not "
                 "(useful: false). Give one verdict per passage, with the passage's number."),
    input_model=Passages, output_model=_Verdicts,
    numbered=Numbered("verdicts", "passage", "context"))
"""A judge that numbers the passages of one call (context precision as ragmark asked it
before each passage got its own call): the tests of numbered calls — windows, groups,
exact counts, server tokens — use it."""


async def numbered_precision(client: Any, question: str, expected_answer: str,
                             contexts: list[str], *, counts: JudgeCounts | None = None
                             ) -> Score:
    """Rank-weighted precision of the useful passages, judged in one numbered call."""
    out = await ask(client, NUMBERED_PRECISION, Passages(
        question=question, expected_answer=expected_answer, context=list(contexts)),
        counts=counts)
    if isinstance(out, JudgeFailure):
        return out.missing()
    ordered = in_order({v.passage: v.useful for v in out.verdicts}, len(contexts))
    return Score(rank_weighted_precision(ordered),
                 details={"useful": [i for i, u in enumerate(ordered, start=1) if u]})


COMPLETE = ('[judges.complete]\ncriterion = "The answer is complete."\n'
            'steps = ["Read it."]\n')
"""A yes/no criterion with its steps given (no steps call)."""


def run_complete(server, tmp_path, capsys, *more, expect=0, history=False):
    """``ragmark run`` of the ``complete`` criterion over three logged questions, q0-q2
    ("Question qN?"), on the scripted server (recorded in the run history with
    ``history``): the results (None when none were written) and what was said."""
    from support.cli import run_cli

    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps({"id": q, "question": f"Question {q}?",
                                       "answer": "An answer.", "contexts": ["c"]}) + "\n"
                           for q in ("q0", "q1", "q2")))
    cfg = tmp_path / "judges.toml"
    cfg.write_text(COMPLETE)
    out = tmp_path / "out.json"
    code, stdout, err = run_cli(["run", "--outputs", str(log), "--config", str(cfg),
                                 "--metrics", "complete", "--llm-base-url", server.url,
                                 "--llm-model", "m", "--output", str(out),
                                 "--include-details", "--quiet",
                                 *([] if history else ["--no-history"]), *more], capsys)
    assert code == expect, err
    return json.loads(out.read_text()) if out.exists() else None, stdout + err
