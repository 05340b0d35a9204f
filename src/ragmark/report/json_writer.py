"""JSON files, written atomically. What a run's or a compare's results file holds is
:mod:`ragmark.results.codec` (``run_to_json``, ``compare_to_json``)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ragmark.text import visible


def write_json(data: Any, path: str | Path) -> Path:
    """Write JSON atomically (temp file + rename), creating parent folders. The file gets
    the permissions of any other file written (0666 less the umask), not a temp file's
    0600."""
    return _atomic(path, json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False)
                   + "\n")


def write_jsonl(rows: Any, path: str | Path) -> Path:
    """Write JSON Lines (one object a line) atomically, as :func:`write_json`."""
    return _atomic(path, "".join(json.dumps(r, ensure_ascii=False, allow_nan=False) + "\n"
                                 for r in rows))


def write_text(text: str, path: str | Path) -> Path:
    """Write any text file (a CSV) atomically, as :func:`write_json`."""
    return _atomic(path, text)


def write_markdown(text: str, path: str | Path) -> Path:
    """Write Markdown atomically, every control character made visible
    (:func:`ragmark.text.visible`): the texts in it came from outside."""
    return _atomic(path, visible(text))


def _atomic(path: str | Path, text: str) -> Path:
    import uuid

    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.parent / f".{p.name}.{uuid.uuid4().hex}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return p
