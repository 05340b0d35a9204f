"""Helpers for the judge tests: scripted replies for the local LLM server."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Coroutine
from typing import Any, TypeVar

from support.fake_llm_server import Reply

from ragmark.llm import LLMClient

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
