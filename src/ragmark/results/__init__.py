"""Results files: the envelope every run, compare and label file carries, and reading
any of them back.

The envelope (top-level ``envelope`` object) says what the file is and where it came
from: ``kind`` (``run``, ``compare``, ``label``), ``schema`` (the version of the file's
layout), the ragmark version, ``created_at`` (UTC, ISO 8601), ``git_commit`` of the
working folder when it is a git checkout, ``dataset_hash`` and ``config_hash`` (sha256
of the configs as recorded). Files written before the envelope existed are read as
schema 0, their kind told from their fields.
"""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ragmark.data.files import read_json
from ragmark.errors import DataError
from ragmark.versions import VERSION as __version__
from ragmark.versions import canonical_hash

SCHEMA = 1
KINDS = ("run", "compare", "label")
PROBE = "probe"
SIMULATION = "simulation"
TESTSET_CHECK = "testset_check"
"""The kind of ``ragmark testset check --output FILE.json``: ``ragmark report`` renders
it as a page of its own."""
"""The kind of a simulation's report (``ragmark simulate --output``) and of its record
in the history: not a run's shape, so only ``ragmark diff`` and ``ragmark report``
read it."""
"""The kind of a probe's results (``ragmark probe``): not a run of the clean set, so no
reader of runs takes it; ``ragmark report`` renders it."""


def git_commit(folder: str | Path = ".") -> str | None:
    """The commit checked out in ``folder`` (``+dirty`` when files differ from it), or
    None when it is not a git checkout or git is not installed."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=folder, capture_output=True,
                              text=True, timeout=5)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=folder, capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    commit = head.stdout.strip()
    return commit + ("+dirty" if dirty.returncode == 0 and dirty.stdout.strip() else "")


def envelope(kind: str, dataset_hash: str, configs: Any) -> dict[str, Any]:
    """The envelope of a results file of ``kind`` over a dataset and its configs (as
    recorded in the file: the config hash is over exactly that)."""
    if kind not in (*KINDS, PROBE, SIMULATION, TESTSET_CHECK):
        raise ValueError(f"unknown results kind {kind!r}")
    return {"kind": kind, "schema": SCHEMA, "ragmark": __version__,
            "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "git_commit": git_commit(), "dataset_hash": dataset_hash,
            "config_hash": canonical_hash(configs)}


def kind_of_results(data: Any, file: str, also: tuple[str, ...] = ()) -> str:
    """The kind of a parsed results file, from its envelope or (schema 0) its fields;
    ``also``: the kinds other than a run's, compare's and label's the caller reads."""
    if not isinstance(data, dict):
        raise DataError("not a ragmark results file: expected a JSON object", file=file)
    env = data.get("envelope")
    if isinstance(env, dict):
        kind = env.get("kind")
        schema = env.get("schema")
        if kind == SIMULATION and kind not in also:
            raise DataError("the report of a simulation (ragmark simulate --output), not "
                            "of a run, compare or label: `ragmark diff` pairs two of them "
                            "scenario by scenario, `ragmark report FILE` shows their "
                            "transcripts, and `ragmark run --outputs TRANSCRIPTS` scores "
                            "their turns", file=file, field="envelope.kind")
        if kind == TESTSET_CHECK and kind not in also:
            raise DataError("the check of a test set (ragmark testset check --output), not "
                            "the results of a run, compare or label: `ragmark report FILE` "
                            "shows it as a page", file=file, field="envelope.kind")
        if kind == PROBE:
            raise DataError("the results of a probe (ragmark probe), not of a run, compare "
                            "or label: `ragmark report FILE` renders them as a page",
                            file=file, field="envelope.kind")
        if kind not in (*KINDS, *also):
            raise DataError(f"unknown results kind {kind!r}; known: {', '.join(KINDS)}",
                            file=file, field="envelope.kind")
        if not isinstance(schema, int) or schema > SCHEMA:
            raise DataError(f"results schema {schema!r} is newer than this ragmark reads "
                            f"({SCHEMA}); upgrade ragmark", file=file, field="envelope.schema")
        return str(kind)
    if data.get("kind") == "monitor":  # it has metrics and counts too: not a run
        raise DataError("a monitor window (ragmark monitor --output FILE.json), not the "
                        "results of a run, compare or label: its trend page is `ragmark "
                        "monitor SOURCE --output trend.html`, its windows are in `ragmark "
                        "history --kind monitor`", file=file)
    if "top_k" in data and isinstance(data.get("configs"), dict):
        return "label"
    if isinstance(data.get("configs"), dict) and ("comparisons" in data or "run" in data):
        return "compare"
    if "metrics" in data and "counts" in data:
        return "run"
    raise DataError("not a ragmark results file (no envelope, and not the fields of a run, "
                    "compare or label file)", file=file)


def read_results(path: str | Path, also: tuple[str, ...] = ()) -> tuple[str, dict[str, Any]]:
    """(kind, parsed content) of a results file (``also``: see :func:`kind_of_results`)."""
    data = read_json(Path(path))
    return kind_of_results(data, str(path), also), data
