"""A verdict's probability, read from the judge's own log-probabilities where its value
is written (G-Eval's probability-weighted scores; a hard verdict throws this away).

A judge's answer holds verdicts: a yes/no word, or JSON values of a closed set — a bool
(``"supported": true``), a literal (``"verdict": "partially_correct"``) or a bounded
integer (``"rating": 4``, 1..5). For each, the token where its value begins is found in
the answer's :data:`~ragmark.llm.logprobs.Alternatives`; the alternatives that begin one
of the allowed values give each value's probability, renormalised over the allowed values
(the rest of the mass, on other tokens, is dropped). A value whose token the model was
sure of gets probability 1; a value whose alternatives name none of the allowed values,
or an answer whose verdicts cannot be matched to their text, gets none (the hard verdict
stands).

:func:`odds_of` gives every verdict's distribution by its path in the parsed answer:
``("verdicts", 2, "supported")`` -> ``{True: 0.83, False: 0.17}``; ``()`` for a yes/no
answer."""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar, get_args, get_origin

from pydantic import BaseModel

from ragmark.judges.parsing import extract_json
from ragmark.llm.logprobs import Alternatives

Path = tuple[Any, ...]
Odds = dict[Path, dict[Any, float]]
"""Each verdict's distribution over its allowed values, by its path in the answer."""

YES_NO = {"yes": True, "no": False}
Answer = TypeVar("Answer")


def choices_of(model: type[BaseModel]) -> dict[str, dict[str, Any]]:
    """Field name -> {the value's JSON text: the value}, for every verdict field of an
    output model and of the models it lists: bools, literals and integers bounded on
    both sides (``Field(ge=1, le=5)``)."""
    out: dict[str, dict[str, Any]] = {}
    for name, info in model.model_fields.items():
        kind = info.annotation
        if kind is bool:
            out[name] = {"true": True, "false": False}
        elif get_origin(kind) is Literal:
            out[name] = {f'"{v}"': v for v in get_args(kind) if isinstance(v, str)}
        elif kind is int:
            lo = next((getattr(m, "ge", None) for m in info.metadata
                       if getattr(m, "ge", None) is not None), None)
            hi = next((getattr(m, "le", None) for m in info.metadata
                       if getattr(m, "le", None) is not None), None)
            if lo is not None and hi is not None and hi - lo <= 20:
                out[name] = {str(v): v for v in range(int(lo), int(hi) + 1)}
        elif get_origin(kind) in (list, tuple):
            inner = next((a for a in get_args(kind) if isinstance(a, type)
                          and issubclass(a, BaseModel)), None)
            if inner is not None:
                out.update(choices_of(inner))
    return out


def _leaves(data: Any, names: Mapping[str, Any], path: Path = ()) -> Iterator[Path]:
    """The paths of the verdict fields in ``data``, in the order they were written."""
    if isinstance(data, dict):
        for k, v in data.items():
            if k in names and not isinstance(v, dict | list):
                yield (*path, k)
            else:
                yield from _leaves(v, names, (*path, k))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            yield from _leaves(v, names, (*path, i))


def distribution(text: str, start: int, options: Mapping[str, Any], alts: Alternatives,
                 fold: bool = False) -> dict[Any, float] | None:
    """The probability of each option (JSON text -> value) for the value written at
    ``start`` in ``text``: from the hesitation at the token that covers ``start``; the
    written value with probability 1 when the model did not hesitate there; None when
    it cannot tell (``fold``: compare case-insensitively)."""
    norm = (lambda s: s.lower()) if fold else (lambda s: s)
    here = next(((o, tok, tops) for o, tok, tops in alts
                 if o <= start < o + max(len(tok), 1)), None)
    if here is None:
        written = [v for t, v in options.items() if norm(text[start:]).startswith(norm(t))]
        return {written[0]: 1.0} if len(written) == 1 else None
    offset, _, tops = here
    prefix = norm(text[offset:start])
    mass: dict[Any, float] = {}
    for token, lp in tops:
        token = norm(token)
        if not token.startswith(prefix):
            continue
        rest = token[len(prefix):].lstrip()
        if not rest:
            continue
        hits = {v for t, v in options.items()
                if norm(t).startswith(rest) or rest.startswith(norm(t))}
        if len(hits) == 1:
            value = hits.pop()
            mass[value] = mass.get(value, 0.0) + math.exp(lp)
    whole = sum(mass.values())
    if whole <= 0:
        return None
    return {v: mass.get(v, 0.0) / whole for v in dict.fromkeys(options.values())}


def odds_of(text: str, data: Any, model: type[BaseModel], alts: Alternatives,
            yes_no: bool = False) -> Odds:
    """Every verdict's distribution in an answer ``text`` parsed as ``data`` (a yes/no
    answer: ``yes_no``, at path ``()``); verdicts that cannot be told are left out."""
    if yes_no:
        start = len(text) - len(text.lstrip(" \n\t\"'*`"))
        got = distribution(text, start, YES_NO, alts, fold=True)
        return {} if got is None else {(): got}
    names = choices_of(model)
    paths = list(_leaves(data, names))
    out: Odds = {}
    for name in dict.fromkeys(p[-1] for p in paths):
        mine = [p for p in paths if p[-1] == name]
        quote = name in names and all(t.startswith('"') for t in names[name])
        spots = [m.end() for m in re.finditer(rf'"{re.escape(name)}"\s*:\s*', text)]
        if len(spots) != len(mine):
            continue  # the text's verdicts cannot be matched to the parsed ones
        for path, at in zip(mine, spots, strict=True):
            options = {t.strip('"') if quote else t: v for t, v in names[name].items()}
            got = distribution(text, at + 1 if quote else at, options, alts)
            if got is not None:
                out[path] = got
    return out


def answer_odds(raw: str, model: type[BaseModel], alternatives: Alternatives | None,
                yes_no: bool = False) -> Odds | None:
    """The verdicts' odds in an answer already parsed as ``model`` (None: no
    log-probabilities came with it)."""
    if alternatives is None:
        return None
    if yes_no and raw.lstrip().startswith("{"):  # a yes/no answer written as JSON
        yes_no = False
    return odds_of(raw, None if yes_no else extract_json(raw), model, alternatives,
                   yes_no=yes_no)


def expected(dist: Mapping[Any, float]) -> float:
    """The probability-weighted value of a distribution over numbers (or bools)."""
    return float(sum(float(v) * p for v, p in dist.items()))


@dataclass(frozen=True)
class Weighed(Generic[Answer]):
    """A judge's parsed answer and its verdicts' :data:`Odds` (None: the endpoint gave no
    log-probabilities, every verdict is hard)."""

    out: Answer
    odds: Odds | None = None

    def chance(self, *path: Any, value: Any = True, hard: Any = None) -> float:
        """The probability that the verdict at ``path`` is ``value``; where the odds do
        not tell, 1 or 0 by the ``hard`` verdict."""
        dist = None if self.odds is None else self.odds.get(tuple(path))
        if dist is None:
            return 1.0 if hard == value else 0.0
        return float(dist.get(value, 0.0))

    def mean(self, *path: Any, hard: float) -> float:
        """The probability-weighted value of the numeric verdict at ``path`` (``hard``
        where the odds do not tell)."""
        dist = None if self.odds is None else self.odds.get(tuple(path))
        return hard if dist is None else expected(dist)

    def weighed(self, *path: Any) -> bool:
        """True when the verdict at ``path`` has odds."""
        return self.odds is not None and tuple(path) in self.odds


@functools.cache
def has_verdicts(model: type[BaseModel]) -> bool:
    """True when an output model holds a verdict whose odds can be read."""
    return bool(choices_of(model))


def numbered_chances(w: Weighed[Any], listed: str, number: str, verdict: str, n: int
                     ) -> tuple[list[float], int]:
    """For an answer with a verdict per numbered item (``verdicts``, each with its
    ``claim`` number and its bool ``supported``): the probability of each item's
    ``True``, items 1..n in order (1 or 0 by the hard verdict where the odds do not
    tell), and how many had odds."""
    by: dict[int, float] = {}
    told = 0
    for i, entry in enumerate(getattr(w.out, listed)):
        by[getattr(entry, number)] = w.chance(listed, i, verdict, hard=getattr(entry, verdict))
        told += w.weighed(listed, i, verdict)
    return [by[i] for i in range(1, n + 1)], told
