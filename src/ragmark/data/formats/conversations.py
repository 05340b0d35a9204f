"""Conversation sets: JSON Lines (or a JSON list), one conversation an item::

    {"conversation_id": "c1", "turns": [
        {"question": "What does BM25 rank?", "ground_truth_contexts": ["..."],
         "expected_answer": "documents"},
        {"question": "And what reorders them?", "expected_answer": "a reranker"}]}

Each turn is one question of the run: its id ``<conversation_id>#<n>`` (turns counted
from 1), its ground truth the turn's own (``ground_truth_contexts``, optional: a turn
without one has its retrieval metrics missing; ``answerable: false`` as in any set),
and in ``Sample.extra`` its ``conversation_id``, ``turn`` and ``history`` (the earlier
turns' questions and, in a log, answers). Logged conversations (``--outputs``) give each
turn its ``answer`` and ``contexts`` (or ``hops``). A conversation without an id is
``c<position>``; a repeated id, a turn that is not an object, or ``turns`` that is not a
non-empty list is an error naming the line and the field.
"""

from __future__ import annotations

from typing import Any

from ragmark.data._fields import as_object
from ragmark.data.files import Where, describe, quote
from ragmark.data.formats import ItemsFormat


def is_conversations(items: list[tuple[Where, Any]]) -> bool:
    """True when the items are conversations (objects with ``turns``)."""
    return any(isinstance(v, dict) and "turns" in v for _, v in items)


def turns_of(items: list[tuple[Where, Any]]) -> list[tuple[Where, dict[str, Any]]]:
    """Every turn of every conversation, in order, as an item of its own (its place the
    conversation's, its field names under ``turns[i]``)."""
    out: list[tuple[Where, dict[str, Any]]] = []
    seen: dict[str, Where] = {}
    for index, (where, value) in enumerate(items):
        obj = as_object(value, where)
        cid = obj.get("conversation_id", obj.get("id"))
        if cid is None:
            cid = f"c{index + 1}"
        elif isinstance(cid, bool) or not isinstance(cid, str | int) or not str(cid).strip():
            raise where.error(f"expected a non-empty string or an integer, got "
                              f"{describe(cid)}", "conversation_id")
        cid = str(cid)
        if cid in seen:
            raise where.error(f"duplicate conversation id {quote(cid)} (first at "
                              f"{seen[cid].ref()})", "conversation_id")
        seen[cid] = where
        turns = obj.get("turns")
        if not isinstance(turns, list) or not turns:
            raise where.error(f"expected a non-empty list of turns, got {describe(turns)}",
                              "turns")
        history: list[dict[str, Any]] = []
        for n, turn in enumerate(turns, start=1):
            here = Where(where.file, item=f"turns[{n - 1}]", line=where.line)
            t = as_object(turn, here)
            if "id" in t:
                raise here.error("a turn takes no 'id': it is <conversation_id>#<turn>",
                                 "id")
            out.append((here, {**t, "id": f"{cid}#{n}", "conversation_id": cid, "turn": n,
                               "history": list(history)}))
            history.append({"question": t.get("question"), "answer": t.get("answer")})
    return out


FORMAT = ItemsFormat("conversations", "a conversation set",
                     is_conversations, lambda items, against, lenient: turns_of(items),
                     sets=True, order=10)
