"""The simulation's journal: a JSON Lines file written as the conversations go, one line
a finished turn or an ending, after a first line that says what the simulation is (a key
of the scenarios, the system and the simulator). Resuming reads it back; a journal made
for another simulation is refused rather than mixed in. A line cut short by a kill (the
last one) is dropped and said."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ragmark.errors import ConfigError, DataError


class Journal:
    """The journal at ``path`` for the simulation keyed ``key`` (``resume``: go on from
    what it holds; else it must not exist yet, or is started over when ``fresh``)."""

    def __init__(self, path: Path, key: str, *, fresh: bool = False) -> None:
        self.path = path
        self.key = key
        self.dropped = 0
        self._turns: dict[str, list[dict[str, Any]]] = {}
        self._endings: dict[str, dict[str, Any]] = {}
        self._closing: dict[str, list[str]] = {}
        if fresh or not path.exists() or path.stat().st_size == 0:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps({"ragmark_simulation": key}) + "\n", encoding="utf-8")
        else:
            self._read()

    def _read(self) -> None:
        lines = self.path.read_text(encoding="utf-8").splitlines()
        try:
            head = json.loads(lines[0])
        except (json.JSONDecodeError, IndexError):
            head = None
        if not isinstance(head, dict) or "ragmark_simulation" not in head:
            raise DataError("not a ragmark simulation journal (its first line should say "
                            "so): give another --transcripts path", file=str(self.path),
                            line=1)
        if head["ragmark_simulation"] != self.key:
            raise ConfigError(
                f"{self.path} was written by another simulation (other scenarios, system "
                "or its code, simulator or settings): give another --transcripts path, or "
                "--fresh to start it over")
        for n, line in enumerate(lines[1:], start=2):
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                if n < len(lines):
                    raise DataError("not JSON", file=str(self.path), line=n) from None
                self.dropped += 1  # the last line, cut short by a kill: cut it off
                text = "\n".join(lines[:-1]) + "\n"
                self.path.write_text(text, encoding="utf-8")
                continue
            self._keep(rec)

    def _keep(self, rec: Mapping[str, Any]) -> None:
        sid = str(rec.get("scenario"))
        if "turn" in rec:
            self._turns.setdefault(sid, []).append(dict(rec))
        elif "outcome" in rec:
            self._endings[sid] = dict(rec)
        elif "closing_role_breaks" in rec:
            self._closing[sid] = list(rec["closing_role_breaks"])

    def write(self, rec: Mapping[str, Any]) -> None:
        """Append one record, on disk before this returns."""
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
            f.flush()
            os.fsync(f.fileno())
        self._keep(rec)

    def turns(self, scenario: str) -> list[dict[str, Any]]:
        return list(self._turns.get(scenario, []))

    def ending(self, scenario: str) -> dict[str, Any] | None:
        return self._endings.get(scenario)

    def closing_breaks(self, scenario: str) -> list[str]:
        """The role breaks of the simulator's last call (the one that ended it)."""
        return list(self._closing.get(scenario, []))
