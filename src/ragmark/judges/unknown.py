"""A judge call in a dry run: its answer, when the cache has it, else :data:`UNKNOWN`
(and the re-ask it may cost is counted), so that a judge of several calls can say which
follow without making any."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from ragmark.judges.prompt import ChatClient, JudgeCounts, Prompt, ask
from ragmark.llm.dry import NotCached
from ragmark.llm.protocol import estimate_tokens


class Unknown:
    """An answer a dry run cannot know (not in the cache)."""


UNKNOWN = Unknown()


async def ask_or_unknown(client: ChatClient, prompt: Prompt[Any, Any], item: BaseModel,
                         counts: JudgeCounts, **params: Any) -> Any:
    """The judge's answer, a JudgeFailure, or UNKNOWN in a dry run (the re-ask it may
    cost is counted there); ``params`` as :func:`ask` takes them."""
    try:
        return await ask(client, prompt, item, counts=counts, **params)
    except NotCached as e:
        if not e.shared:
            client.follow(0, 1, estimate_tokens(e.messages) + 120)  # type: ignore[attr-defined,arg-type]
        return UNKNOWN
