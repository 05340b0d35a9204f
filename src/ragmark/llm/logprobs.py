"""The model's own hesitations, from the log-probabilities an OpenAI-compatible server
returns with a chat answer (``logprobs: true, top_logprobs: K``; OpenAI, vLLM, llama.cpp
and llama-cpp-python's servers): kept compactly, only where the model hesitated.

:data:`Alternatives` holds, for each token of the answer at which some other token had a
chance (above :data:`FLOOR`), its offset in the answer's text, the token chosen and its
top alternatives with their log-probabilities. A token absent from it had all the mass:
the model was sure of it. The judges read a verdict's probability from the token where
its value is written (:mod:`ragmark.judges.odds`)."""

from __future__ import annotations

import json
import math
from typing import Any

Hesitation = tuple[int, str, tuple[tuple[str, float], ...]]
"""(offset of the token in the answer's text, the token chosen, its top alternatives as
(token, log-probability), most likely first)."""

Alternatives = tuple[Hesitation, ...]

TOP_LOGPROBS = 10
"""How many alternatives a judge call asks for at each token."""

FLOOR = math.log(1e-4)
"""An alternative less likely than this is no hesitation."""


def compact(content: Any, text: str | None = None) -> Alternatives | None:
    """The hesitations of an OpenAI ``choices[0].logprobs.content`` list (None when it
    is not one: the server gave no log-probabilities). ``text``: the answer's text as
    the server returned it. The tokens must spell it, or hold it whole (llama.cpp's
    llama-server returns the JSON of a reply the model wrote in a code fence without
    the fence, its tokens with it): offsets are then counted from where it starts; tokens
    that spell something else give None, since no verdict could be placed on them."""
    if not isinstance(content, list):
        return None
    out: list[Hesitation] = []
    offset = 0
    for entry in content:
        if not isinstance(entry, dict):
            return None
        token = str(entry.get("token") or "")
        tops = entry.get("top_logprobs") or []
        alts = tuple((str(t.get("token") or ""), float(t["logprob"]))
                     for t in tops if isinstance(t, dict) and t.get("logprob") is not None)
        if sum(1 for _, lp in alts if lp > FLOOR) >= 2:
            out.append((offset, token, tuple(sorted(alts, key=lambda a: -a[1]))))
        offset += len(token)
    spelled = "".join(str(e.get("token") or "") for e in content)
    if text is None or spelled == text:
        return tuple(out)
    start = spelled.find(text) if text else -1
    if start < 0:
        return None
    return tuple((at - start, tok, alts) for at, tok, alts in out
                 if start <= at < start + len(text))


FORMAT = 2
"""The stored hesitations' format: 2 since their offsets are counted from where the
answer's text starts in the tokens (before, a reply whose tokens held a code fence the
server took off had every offset misplaced)."""


def encode(alts: Alternatives | None) -> str | None:
    """The hesitations as the call cache stores them (JSON, with their :data:`FORMAT`;
    None: none given)."""
    return None if alts is None else json.dumps({"format": FORMAT, "alternatives": alts},
                                                ensure_ascii=False, separators=(",", ":"))


def stale(text: str | None) -> bool:
    """Whether stored hesitations were written in an earlier format (their offsets may be
    misplaced: the call is asked again rather than read).

    >>> stale('[[0,"YES",[["YES",-0.1]]]]'), stale(encode(((0, "YES", ()),))), stale(None)
    (True, False, False)
    """
    return text is not None and not text.lstrip().startswith("{")


def decode(text: str | None) -> Alternatives | None:
    """:func:`encode` read back (None for none, or for an earlier format)."""
    if text is None or stale(text):
        return None
    return tuple((int(o), str(t), tuple((str(a), float(lp)) for a, lp in alts))
                 for o, t, alts in json.loads(text)["alternatives"])


def requested(params: dict[str, Any]) -> bool:
    """True when a call's parameters ask for log-probabilities."""
    return bool(params.get("logprobs"))


def asking(top: int = TOP_LOGPROBS) -> dict[str, Any]:
    """The request parameters that ask for log-probabilities (part of the cache key)."""
    return {"logprobs": True, "top_logprobs": top}


def without(params: dict[str, Any]) -> dict[str, Any]:
    """``params`` without the request for log-probabilities."""
    return {k: v for k, v in params.items() if k not in ("logprobs", "top_logprobs")}
