"""Helpers for the testset tests: a small corpus and a server rule that writes questions
from the documents it finds in the request, as a model would."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from support.fake_llm_server import Reply

DOCS = {
    "baikal.txt": "Lake Baikal holds about a fifth of the unfrozen fresh water on Earth. It "
    "lies in southern Siberia and freezes over from January to May every year.",
    "vasa.txt": "The warship Vasa sank in Stockholm harbour on its maiden voyage in 1628. "
    "Divers located the hull in 1956 and it was lifted out of the water in 1961.",
    "honey.txt": "Sealed honey keeps for years because its water content is low and it is "
    "acidic. Bacteria that land in it lose their water and cannot multiply there.",
    "tides.txt": "Spring tides happen when the Sun and the Moon line up with the Earth. "
    "Their pulls then add together and the range between high and low water grows.",
    "bridge.txt": "Steel bridge decks lengthen by about twelve millimetres per hundred "
    "metres for every ten degrees of warming. Expansion joints absorb the movement.",
    "lighthouse.txt": "The Pharos of Alexandria was one of the tallest structures of the "
    "ancient world. Earthquakes damaged it badly between 956 and 1323.",
    "coffee.txt": "Arabica coffee grows best at altitudes between six hundred and two "
    "thousand metres. Robusta tolerates heat better and contains more caffeine.",
    "glacier.txt": "A glacier forms where snow piles up faster than it melts over many "
    "years. The weight turns the lower layers into dense blue ice that slowly flows.",
}

_BLOCK = re.compile(r'<data name="documents" index="(\d+)">\n(.*?)\n</data>', re.DOTALL)
_TYPE = re.compile(r"Requested question type: (\w+)\.")
_FIRST = re.compile(r"(.+?[.!?])(?:\s|$)", re.DOTALL)


def write_corpus(folder: Path, docs: dict[str, str] = DOCS) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in docs.items():
        (folder / name).write_text(text + "\n", encoding="utf-8")
    return folder


def chat(content: str, prompt_tokens: int = 120, completion_tokens: int = 40) -> Reply:
    """A 200 OpenAI chat answer with ``content``."""
    return Reply(body={
        "id": "x", "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}})


def request_documents(body: Any) -> list[str]:
    """The documents of the question being asked (the last user turn with data blocks;
    the few-shot turns come before it, a re-ask after it)."""
    for m in reversed(body["messages"]):
        if m["role"] == "user" and _BLOCK.search(m["content"]):
            return [text for _, text in _BLOCK.findall(m["content"])]
    raise AssertionError("no documents in the request")


def requested_type(body: Any) -> str:
    match = _TYPE.search(body["messages"][0]["content"])
    assert match, "the system message names the requested type"
    return match.group(1)


def is_reask(body: Any) -> bool:
    last = body["messages"][-1]
    return last["role"] == "user" and "could not be used" in last["content"]


def first_sentence(text: str) -> str:
    match = _FIRST.match(text.strip())
    assert match
    return match.group(1)


def question_about(docs: list[str], qtype: str) -> str:
    """A question that differs from one source to another."""
    subjects = [" ".join(first_sentence(d).split()[:4]) for d in docs]
    return f"In a {qtype} sense, what is said about {' and '.join(subjects)}?"


Edit = Callable[[Any, dict[str, Any]], "dict[str, Any] | Reply | str"]


def writer(edit: Edit | None = None) -> Callable[[Any], Reply]:
    """A server rule answering like a careful model: the question names the subject, the
    quotes are each document's first sentence (lower-cased, to exercise normalisation),
    the type is the requested one. ``edit(body, answer)`` may change the answer, or
    return a Reply or raw text to send instead."""

    def rule(body: Any) -> Reply:
        docs = request_documents(body)
        qtype = requested_type(body)
        answer: dict[str, Any] = {
            "question": question_about(docs, qtype),
            "answer": " ".join(first_sentence(d) for d in docs),
            "quotes": [first_sentence(d).lower() for d in docs],
            "type": qtype,
            "difficulty": "Medium" if len(docs) == 2 else "easy",
        }
        got = edit(body, answer) if edit is not None else answer
        if isinstance(got, Reply):
            return got
        return chat(got if isinstance(got, str) else json.dumps(got))

    return rule
