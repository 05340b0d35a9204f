"""Scenarios for simulated users: JSON Lines (or a JSON list), one scenario an item::

    {"id": "s1", "scenario": "You want to know which retriever suits short questions.",
     "expected_outcome": "The assistant names BM25 and says why.",
     "user": "A hurried engineer who writes short messages.",
     "facts": ["Your questions are under ten words."], "max_turns": 4,
     "ground_truth_contexts": ["BM25 ranks documents by ..."],
     "expected_answer": "BM25"}

``id``, ``scenario`` and ``expected_outcome`` are required; ``user`` (who they are, how
they talk), ``facts`` (what the user knows and may be asked), ``max_turns`` (1 to
:data:`MOST_TURNS`, default :data:`DEFAULT_TURNS`), ``ground_truth_contexts`` (the
passages that hold the answer: each turn's retrieval is scored against them) and
``expected_answer`` are optional. Every problem is an error naming the line and the
field, before any call; a field ragmark does not know is loaded with a counted warning
(``--strict``: an error).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragmark.data._fields import (
    as_object,
    check_id,
    check_int,
    get_optional_string,
    get_optional_strings,
    get_string,
)
from ragmark.data.files import Where, quote
from ragmark.data.leniency import Leniency
from ragmark.data.sets import read_items

DEFAULT_TURNS = 6
"""The user's turns when a scenario gives no ``max_turns``."""
MOST_TURNS = 30
FIELDS = ("id", "scenario", "expected_outcome", "user", "facts", "max_turns",
          "ground_truth_contexts", "expected_answer", "source_ids")
"""The fields a scenario may have (``source_ids``: the documents ``ragmark testset
--scenarios`` wrote it from, kept for the reader, not used)."""
UNKNOWN = "scenario fields ragmark does not read (left out)"


@dataclass(frozen=True)
class Scenario:
    """What one simulated user wants, who they are and what they know."""

    id: str
    scenario: str
    expected_outcome: str
    user: str | None = None
    facts: tuple[str, ...] = ()
    max_turns: int = DEFAULT_TURNS
    ground_truth_contexts: tuple[str, ...] | None = None
    expected_answer: str | None = None


def load_scenarios(path: Path, lenient: Leniency | None = None) -> list[Scenario]:
    """The scenarios of ``path``, checked (see the module's text); a repeated id is an
    error naming both places."""
    lenient = lenient or Leniency()
    out: list[Scenario] = []
    seen: dict[str, Where] = {}
    for where, value in read_items(path, lenient.encoding):
        s = scenario_of(as_object(value, where), where, lenient)
        if s.id in seen:
            raise where.error(f"duplicate scenario id {quote(s.id)} (first at "
                              f"{seen[s.id].ref()})", "id")
        seen[s.id] = where
        out.append(s)
    return out


def scenario_of(obj: dict[str, Any], where: Where, lenient: Leniency) -> Scenario:
    """One scenario object, checked."""
    if "id" not in obj:
        raise where.error("missing; expected a non-empty string", "id")
    sid = check_id(obj["id"], where, "id", lenient)
    _unknown(obj, where, lenient)
    turns = obj.get("max_turns")
    if turns is not None:
        turns = check_int(turns, where, "max_turns")
        if not 1 <= turns <= MOST_TURNS:
            raise where.error(f"expected 1 to {MOST_TURNS} turns, got {turns}", "max_turns")
    return Scenario(
        id=sid, scenario=get_string(obj, "scenario", where),
        expected_outcome=get_string(obj, "expected_outcome", where),
        user=get_optional_string(obj, "user", where),
        facts=get_optional_strings(obj, "facts", where) or (),
        max_turns=DEFAULT_TURNS if turns is None else turns,
        ground_truth_contexts=get_optional_strings(obj, "ground_truth_contexts", where),
        expected_answer=get_optional_string(obj, "expected_answer", where))


def _unknown(obj: dict[str, Any], where: Where, lenient: Leniency) -> None:
    for name in obj:
        if name in FIELDS:
            continue
        close = difflib.get_close_matches(name, FIELDS, n=1)
        hint = f" (did you mean {quote(close[0])}?)" if close else ""
        lenient.warn(UNKNOWN, f"{name}{hint} ({where.short()})",
                     where.error(f"not a scenario field{hint}; expected one of "
                                 f"{', '.join(FIELDS)}", name))
