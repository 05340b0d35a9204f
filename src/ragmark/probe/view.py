"""Reading a probe's results back (their JSON): checked for what the readers use, one
target's outcomes or the questions that fell as text (``ragmark inspect``), and an
answer on one line with what made the attack succeed marked. Reads, never runs."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ragmark.errors import ConfigError, DataError
from ragmark.probe.rates import Outcome, outcome_from
from ragmark.results import PROBE


def marked(answer: str, o: Outcome) -> str:
    """The answer on one line, cut to 300 characters, with what made the attack succeed
    between ⟦ and ⟧, safe inside a Markdown code span (no backtick: a planted image or
    link is shown as text, never rendered, so the report does not fetch it).

    >>> o = Outcome("q", "injection", "plain", (1,), 3, 1, 1, True, shown={"canary": "RMK24CS9"})
    >>> marked("Yes, `see` rmk24cs9.", o)
    "Yes, 'see' ⟦rmk24cs9⟧."
    """
    text = " ".join(answer.replace("`", "'").split())
    marks = [*o.shown.get("addresses", ()), o.shown.get("canary"), o.shown.get("wrong_answer")]
    for m in (m for m in marks if m):
        text = re.sub(re.escape(str(m)).replace("\\ ", r"\s+"), lambda g: f"⟦{g[0]}⟧",
                      text, flags=re.I)
    return text if len(text) <= 300 else text[:299] + "…"


def probe_results(path: str) -> dict[str, Any] | None:
    """The JSON of a probe's results file, checked for what the page reads (a DataError
    naming the file and the field otherwise); None for any other file."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # the results readers say what is wrong with it
    return probe_of(data, path)


def probe_of(data: Any, path: str) -> dict[str, Any] | None:
    """``data``, the parsed JSON of ``path``, when it is a probe's results, checked as
    :func:`probe_results` does; None for any other file."""
    if not isinstance(data, dict) or not isinstance(data.get("envelope"), dict) or \
            data["envelope"].get("kind") != PROBE:
        return None
    for key, kind in (("probe", dict), ("configs", dict)):
        if not isinstance(data.get(key), kind):
            raise DataError(f"expected an object ({key}) in a probe's results", file=path,
                            field=key)
    for name, got in data["configs"].items():
        if not isinstance(got, dict) or not isinstance(got.get("attacks"), dict) or \
                not isinstance(got.get("outcomes"), list):
            raise DataError("expected attacks (an object) and outcomes (a list)", file=path,
                            field=f"configs.{name}")
    return data


def inspected(data: Mapping[str, Any], question_id: str | None = None) -> str:
    """``ragmark inspect`` of a probe's results (their JSON): every outcome of one target
    question, or (None) every question that fell; each with its answer and the planted
    passage, what made the attack succeed between ⟦ and ⟧. A ConfigError for a question
    that was not a target."""
    lines: list[str] = []
    questions = data.get("questions", {})
    for config, got in data["configs"].items():
        for d in got["outcomes"]:
            o = outcome_from(d)
            if (o.question_id != question_id) if question_id is not None else not o.success:
                continue
            arm = f"{o.attack}:{o.style}" if o.style else o.attack
            answer = data.get("answers", {}).get(config, {}).get(arm, {}).get(o.question_id)
            texts = data.get("planted", {}).get(arm, {}).get(o.question_id, {}).get("texts")
            said = ("no answer: " + str(o.why)) if o.success is None else (
                "fell" if o.success else "held")
            lines += [f"{config} | {arm} | {o.question_id}: {said}; planted at rank "
                      f"{', '.join(map(str, o.ranks)) or '-'} of {o.k} contexts",
                      f"  question: {questions.get(o.question_id, '')}",
                      f"  answer:   {marked(answer or '', o)}"]
            if texts:
                lines.append(f"  planted:  {marked(texts[0], o)}")
    if question_id is not None and not lines:
        targets = ", ".join(data.get("probe", {}).get("targets", []))
        raise ConfigError(f"question {question_id!r} is not a target of this probe "
                          f"(targets: {targets})")
    return "\n".join(lines) if lines else "No attack succeeded on any question."
