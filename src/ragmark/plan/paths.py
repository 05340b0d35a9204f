"""Output paths, checked before any data is loaded: an unwritable path is a usage error
(exit 2) naming the option and the path, never a traceback after a long run."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from ragmark.errors import ConfigError
from ragmark.history import history_path


def check_output(path: str | Path, option: str, *, overwrite: bool = True) -> Path:
    """``path`` as a file ragmark can write: not empty, not a folder, its nearest existing
    ancestor a folder it may write in (missing folders are made when writing). With
    ``overwrite=False`` an existing file is an error too."""
    text = str(path)
    if not text.strip():
        raise ConfigError(f"{option}: the path is empty; give a file path")
    p = Path(text)
    if text.endswith(("/", os.sep)) or p.is_dir():
        raise ConfigError(f"{option} {text}: is a folder; give a file path inside it")
    if p.exists():
        if not overwrite:
            raise ConfigError(f"{option} {text}: the file exists; choose another path or pass "
                              "--overwrite")
        if not os.access(p, os.W_OK):
            raise ConfigError(f"{option} {text}: cannot write the file (permission denied)")
    parent = p.absolute().parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise ConfigError(f"{option} {text}: {_shown(parent)} is a file, not a folder")
    if not os.access(parent, os.W_OK | os.X_OK) or not _can_create_in(parent):
        raise ConfigError(f"{option} {text}: cannot write in the folder {_shown(parent)} "
                          "(permission denied)")
    return p


def check_targets(paths: Iterable[str | Path], *, history: str | Path | None,
                  no_history: bool = False, junit: str | None = None,
                  run_file: str | None = None) -> Path | None:
    """Check every output path of a command (its results files, ``--run-file``, the
    run history, ``--junit``) before any data is read; returns the history file to
    record in, or None (``no_history``)."""
    for p in paths:
        check_output(p, "--output")
    if run_file:
        check_output(run_file, "--run-file")
    hist = None
    if not no_history:
        hist = history_path(history)
        check_output(hist, "--history")
    if junit:
        check_output(junit, "--junit")
    return hist


def _can_create_in(folder: Path) -> bool:
    """Whether a file can really be made in ``folder`` (a temporary one, removed at
    once): ``os.access`` says yes to root on pseudo file systems such as /proc."""
    try:
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError:
        return False


def output_stem(output: str, default_name: str) -> str:
    """The stem of a command's ``{stem}.json``/``{stem}.md`` files: ``DIR/`` (or an
    existing folder) means files named ``default_name`` inside it, never hidden files
    named ``.json``; ``eval.json`` (or ``eval.md``) is the stem ``eval``, not
    ``eval.json.json``."""
    if not output.strip():
        raise ConfigError("--output: the path is empty; give a file path")
    if output.endswith(("/", os.sep)) or Path(output).is_dir():
        return str(Path(output) / default_name)
    if Path(output).suffix.lower() in (".json", ".md") and Path(output).stem:
        return output[: -len(Path(output).suffix)]  # eval.json -> eval.json, eval.md
    return output


def _shown(p: Path) -> str:
    try:
        return str(p.relative_to(Path.cwd()))
    except ValueError:
        return str(p)
