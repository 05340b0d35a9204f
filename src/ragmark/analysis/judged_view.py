"""What a question's judged lists are, as the reports show them: the nuggets its answer
was scored against (``--metrics nuggets``), each with its importance and what the answer
made of it, and the answer's sentences with the passage each cites and how far that
passage supports it (``--metrics support``). ``ragmark inspect`` and the HTML question
view print the same sections."""

from __future__ import annotations

from typing import Any

from ragmark.judges.support import METRICS as SUPPORT_METRICS
from ragmark.results.model import QueryRecord
from ragmark.results.nuggetizer_files import scored_nuggets

SOURCES = {"set": "given with the question", "judge": "created by the judge"}
SHOWN = {"support": "supported", "partial_support": "partly supported",
         "not_support": "not supported"}
SUPPORT_SHOWN = {"full_support": "fully supported", "partial_support": "partly supported",
                 "no_support": "not supported"}


def nugget_line(n: dict[str, Any]) -> str:
    """``vital, supported: the text``."""
    said = SHOWN.get(str(n.get("assignment")), str(n.get("assignment")))
    return f"{n.get('importance')}, {said}: {n.get('text')}"


def sentence_line(s: dict[str, Any]) -> str:
    """``[2] partly supported: the text``, or ``uncited: the text`` (``cites [9], not a
    passage of the answer`` when its numbers are out of range)."""
    cites = s.get("cites") or []
    if s.get("passage") is None:
        where = (f"cites {', '.join(f'[{c}]' for c in cites)}, not a passage of the answer"
                 if cites else "uncited")
        return f"{where}: {s.get('text')}"
    said = SUPPORT_SHOWN.get(str(s.get("support")), str(s.get("support")))
    return f"[{s.get('passage')}] {said}: {s.get('text')}"


def _cited_sentences(q: QueryRecord) -> list[dict[str, Any]] | None:
    for name in SUPPORT_METRICS:
        m = q.metrics.get(name)
        listed = m.details.get("sentences") if m is not None and m.details else None
        if isinstance(listed, list) and listed:
            return [s for s in listed if isinstance(s, dict)]
    return None


def judged_sections(q: QueryRecord) -> list[tuple[str, list[str]]]:
    """(heading, one line an entry) of each judged list the question's scores carry."""
    out = []
    got = scored_nuggets(q)
    if got is not None:
        source, nuggets = got
        where = SOURCES.get(source, source or "where from not recorded")
        out.append((f"Nuggets ({len(nuggets)}, {where})", [nugget_line(n) for n in nuggets]))
    sentences = _cited_sentences(q)
    if sentences is not None:
        cited = sum(s.get("passage") is not None for s in sentences)
        out.append((f"Support of cited sentences ({cited} of {len(sentences)} cite a "
                    "passage; each judged against the first it cites)",
                    [sentence_line(s) for s in sentences]))
    return out
