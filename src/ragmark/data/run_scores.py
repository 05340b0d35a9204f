"""A published table of run-level scores (one system a line: its run id and its score,
separated by white space, a tab or a comma; a header line is skipped), as TREC
overviews give them: what ``compare --rank-against`` ranks the compared systems
against."""

from __future__ import annotations

import math
import re
from pathlib import Path

from ragmark.data.files import Where, iter_lines, quote
from ragmark.errors import DataError

_SPLIT = re.compile(r"[\s,]+")


def read_run_scores(path: str | Path, encoding: str | None = None) -> dict[str, float]:
    """run id -> score; a line that is not a run id and a finite number is an error
    naming it (but a first line without a number is a header), and so is a run named
    twice."""
    out: dict[str, float] = {}
    first: dict[str, int] = {}
    for number, text in iter_lines(Path(path), encoding):
        where = Where(str(path), line=number)
        parts = [p for p in _SPLIT.split(text.strip()) if p]
        if len(parts) != 2:
            raise where.error(f"expected a run id and its score, got {len(parts)} fields")
        run, raw = parts
        try:
            score = float(raw)
        except ValueError:
            if not out and not first:  # a header
                first[""] = number
                continue
            raise where.error(f"expected a number, got {quote(raw)}", "score") from None
        if not math.isfinite(score):
            raise where.error(f"expected a finite number, got {quote(raw)}", "score")
        if run in first:
            raise where.error(f"run {quote(run)} again (first at line {first[run]})", "run")
        first[run] = number
        out[run] = score
    if not out:
        raise DataError("no run scores (the file is empty)", file=str(path))
    return out
