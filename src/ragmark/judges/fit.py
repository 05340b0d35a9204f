"""Fit a judge call in the model's context window (:mod:`ragmark.llm.window`).

The answer's cap (``max_tokens``) is lowered to what the window leaves after the prompt,
down to a floor (256 tokens for a JSON answer, the whole cap for a yes/no one). When even
the floor does not fit, the texts the judge reads are cut, longest first, all to one
length (water-filling), each cut text ending in :data:`CUT_MARK`; the number of items in
every list stays, so a numbered answer still has its exact count. When the prompt does
not fit with every text cut, the item gets no verdict, with the reason, and no call is
made.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from ragmark.case import JudgeCounts
from ragmark.llm.window import CHARS_PER_TOKEN
from ragmark.llm.window import prompt_tokens as estimated

JSON_FLOOR = 256
"""The least room a JSON answer is given before the texts it judges are cut."""
CUT_MARK = " [...cut to fit the model's context window]"


@dataclass(frozen=True)
class Fitted:
    """A call fitted in the window: the (maybe cut) ``item``, its ``messages``, the
    answer's ``max_tokens``; ``cut`` when texts were cut; ``problem`` when it cannot fit."""

    item: Any
    messages: list[Any]
    max_tokens: int
    cut: bool = False
    problem: str | None = None


def floor_of(output: str, cap: int) -> int:
    return min(cap, JSON_FLOOR) if output == "json" else cap


def fit(prompt: Any, item: Any, cap: int, window: int | None,
        measure: Callable[[Any], int] | None = None) -> Fitted:
    """``prompt``'s call for ``item`` with an answer of up to ``cap`` tokens, fitted in
    ``window`` (None: unknown, nothing changes); ``measure`` counts a prompt's tokens
    (the server's tokenizer, :func:`ragmark.llm.tokens.measure_of`), else the estimate."""
    prompt_tokens = measure or estimated
    messages = prompt.render(item)
    if window is None:
        return Fitted(item, messages, cap)
    floor = floor_of(prompt.output, cap)
    est = prompt_tokens(messages)
    if est + floor <= window:
        return Fitted(item, messages, min(cap, window - est))
    cut = item
    for extra in (0, 64, 256, 1024):  # the estimate is per message: settle in a few steps
        need = (est + floor - window) * CHARS_PER_TOKEN + extra
        shorter = _shrink(cut, need)
        if shorter is None:
            break
        cut, messages = shorter, prompt.render(shorter)
        est = prompt_tokens(messages)
        if est + floor <= window:
            return Fitted(cut, messages, min(cap, window - est), cut=True)
    bare = prompt_tokens(prompt.render(_shrink(item, 10**12, everything=True) or item))
    return Fitted(item, prompt.render(item), cap, problem=(
        f"{prompt.name}: the prompt does not fit the model's context window of {window:,} "
        f"tokens even with the texts it judges cut (~{bare:,} tokens without them, and "
        f"{floor} for the answer): set a larger window on the server, or a model with one"))


def answer_cap(client: Any, prompt: Any) -> int:
    """The answer's cap: the prompt's, or ``max_tokens`` of the client's settings
    (``--llm-max-tokens``) for a JSON answer (a yes/no answer keeps its smaller cap)."""
    most = getattr(getattr(client, "settings", None), "max_tokens", None)
    if not most:
        return int(prompt.token_cap)
    return int(most) if prompt.output == "json" else min(prompt.token_cap, int(most))


def counted(client: Any, fitted: Fitted, window: int | None, counts: JudgeCounts) -> Fitted:
    """``fitted``, a cut call counted in ``counts`` (a JudgeCounts) and, on a dry run's
    client, in its counts."""
    if fitted.cut:
        counts.cut += 1
        counts.window = window
        seen = getattr(client, "saw_cut", None)
        if seen is not None:
            seen()
    return fitted


def _leaves(item: BaseModel) -> list[tuple[str, int | None, str]]:
    out: list[tuple[str, int | None, str]] = []
    for name in type(item).model_fields:
        value = getattr(item, name)
        if isinstance(value, str):
            out.append((name, None, value))
        elif isinstance(value, list):
            out += [(name, i, v) for i, v in enumerate(value) if isinstance(v, str)]
    return out


def _shrink(item: Any, need: int, everything: bool = False) -> Any | None:
    """``item`` with its longest texts cut to one length so that about ``need``
    characters go; None when cutting every text cannot free that many."""
    if not isinstance(item, BaseModel):
        return None
    leaves = _leaves(item)
    mark = len(CUT_MARK)

    def freed(level: int) -> int:
        return sum(len(t) - level - mark for _, _, t in leaves if len(t) > level + mark)

    if everything:
        level = 0
    else:
        if freed(0) < need:
            return None
        lo, hi = 0, max((len(t) for _, _, t in leaves), default=0)
        while lo < hi:  # the longest level that frees enough
            mid = (lo + hi + 1) // 2
            if freed(mid) >= need:
                lo = mid
            else:
                hi = mid - 1
        level = lo
    update: dict[str, Any] = {}
    for name, i, text in leaves:
        if len(text) <= level + mark:
            continue
        short = text[:level].rstrip() + CUT_MARK
        if i is None:
            update[name] = short
        else:
            update.setdefault(name, list(getattr(item, name)))[i] = short
    return item.model_copy(update=update) if update else None
