"""Attack texts of your own (``ragmark probe --planted FILE``): a published attack's
texts (PoisonedRAG's adversarial passages, say) planted for the configs ragmark runs,
instead of ragmark's generated ones.

The file is JSON Lines, or a JSON list, or a JSON object of items by id (PoisonedRAG's
released results files). Each item names its target question (``question_id`` or
``id``: a question of the dataset; else its ``question`` text, joined as logged
outputs are), its ``texts`` (or PoisonedRAG's ``adv_texts``), and what marks success:
a ``wrong_answer`` (PoisonedRAG's ``incorrect answer``; the attack is a poisoning) or a
``marker`` (an injection's canary). ``attack`` may say which; a ``correct answer``
(``right_answer``) is the answer a poisoned answer must not also give, where the set
has none. Every item becomes its attack's arm of style ``given``
(``poisoning:given``)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ragmark.data.files import Where, base_suffix, describe, iter_jsonl, read_json
from ragmark.data.outputs import _question_key
from ragmark.errors import DataError
from ragmark.probe.attacks import Planted
from ragmark.types import Dataset

GIVEN = "given"
"""The style of an arm whose texts come from ``--planted FILE``."""

_KEYS = {"texts": ("texts", "adv_texts"), "wrong": ("wrong_answer", "incorrect answer"),
         "right": ("right_answer", "correct answer"), "marker": ("marker", "canary")}
"""Where an item gives each part: ragmark's key first, then PoisonedRAG's."""


def _items(path: Path) -> Iterator[tuple[Where, Any]]:
    if base_suffix(path) == ".jsonl":
        yield from iter_jsonl(path)
        return
    value = read_json(path)
    if isinstance(value, Mapping):  # PoisonedRAG: {"test1": {...}, ...}
        for key, item in value.items():
            yield Where(str(path), item=str(key)), item
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield Where(str(path), item=i), item
    else:
        raise DataError(f"expected a list of items, or an object of items by id, got "
                        f"{describe(value)}", file=str(path))


def _first(obj: Mapping[str, Any], part: str) -> tuple[str, Any]:
    for key in _KEYS[part]:
        if obj.get(key) is not None:
            return key, obj[key]
    return _KEYS[part][0], None


def _text(value: Any, where: Where, field: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise where.error(f"expected a non-empty string, got {describe(value)}", field)
    return value


def _target(obj: Mapping[str, Any], where: Where, ids: set[str],
            by_text: Mapping[str, list[str]]) -> str:
    """The dataset question an item attacks: by id, else by its question's text."""
    given = obj.get("question_id", obj.get("id"))
    if given is not None and str(given) in ids:
        return str(given)
    text = obj.get("question")
    found = by_text.get(_question_key(text), []) if isinstance(text, str) else []
    if len(found) == 1:
        return found[0]
    if len(found) > 1:
        raise where.error("its question's text is shared by questions "
                          f"{', '.join(found[:3])} of the dataset: give 'question_id'",
                          "question")
    raise where.error(f"no question of the dataset has the id {given!r} or this question's "
                      "text: give 'question_id' (a question's id) or its 'question'",
                      "question_id")


def read_planted(path: str | Path, dataset: Dataset) -> tuple[Planted, ...]:
    """The attacks of ``path`` on ``dataset``'s questions, each a :class:`Planted` of
    style :data:`GIVEN`; a DataError naming the item and field of anything unreadable."""
    file = Path(path)
    if not file.is_file():
        raise DataError("no such file", file=str(file))
    ids = {s.id for s in dataset.samples}
    by_text: dict[str, list[str]] = {}
    for s in dataset.samples:
        by_text.setdefault(_question_key(s.question), []).append(s.id)
    out: list[Planted] = []
    seen: dict[tuple[str, str], Where] = {}
    for where, obj in _items(file):
        if not isinstance(obj, Mapping):
            raise where.error(f"expected an object, got {describe(obj)}")
        key, texts = _first(obj, "texts")
        if not isinstance(texts, list) or not texts:
            raise where.error(f"expected a non-empty list of texts, got {describe(texts)}",
                              key)
        texts = [_text(t, where, f"{key}[{i}]") for i, t in enumerate(texts)]
        wkey, wrong = _first(obj, "wrong")
        mkey, marker = _first(obj, "marker")
        if (wrong is None) == (marker is None):
            raise where.error("give what marks success: a 'wrong_answer' (a poisoning) or a "
                              "'marker' (an injection's canary), one of them", wkey)
        attack = obj.get("attack") or ("poisoning" if wrong is not None else "injection")
        if attack not in ("poisoning", "injection") or (attack == "poisoning") != (
                wrong is not None):
            raise where.error(f"expected poisoning (with a wrong answer) or injection (with "
                              f"a marker), got {describe(attack)}", "attack")
        mark = _text(wrong if wrong is not None else marker, where,
                     wkey if wrong is not None else mkey)
        rkey, right = _first(obj, "right")
        qid = _target(obj, where, ids, by_text)
        if (attack, qid) in seen:
            raise where.error(f"question {qid!r} is attacked by {attack} twice (first at "
                              f"{seen[attack, qid].ref()})", "question_id")
        seen[attack, qid] = where
        out.append(Planted(attack, qid, tuple(texts), mark, GIVEN,
                           right=None if right is None else _text(right, where, rkey)))
    if not out:
        raise DataError("no attack in the file", file=str(file))
    return tuple(out)


def given_arms(planted: Sequence[Planted]) -> list[str]:
    """The attacks the file plants, in their first order."""
    return list(dict.fromkeys(p.attack for p in planted))
